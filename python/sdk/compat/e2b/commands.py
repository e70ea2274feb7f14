"""``sbx.commands`` of the sync E2B shim: E2B's ``run`` (foreground result or ``CommandExitException``;
``background=True`` gives a ``CommandHandle``), ``list``, ``kill``, ``send_stdin``, ``close_stdin`` and
``connect``, on the native commands of :mod:`sdk.commands`. A terminal (``sbx.pty``, :mod:`.pty`) is such
a handle too, as in E2B: its bytes come out as ``(None, None, PtyOutput)``, none in ``stdout``."""

from __future__ import annotations

import builtins
import threading
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator, Literal, Mapping, Protocol, TypeVar, cast, overload

from ..._command_output import CommandResult as NativeCommandResult
from ...sandbox import Sandbox as NativeSandbox
from ..._http import Op, drive
from ._command_ops import broken_by_end, close_stdin_op, gone_op, kill_op, list_op, sandbox_gone, send_stdin_op
from ._command_options import check_connect, plan_run
from .command_result import (
    CommandResult,
    ProcessInfo,
    PtyOutput,
    Stderr,
    Stdout,
    checked_result,
)
from .exceptions import SandboxException, translated

R = TypeVar("R")

#: One piece of output as E2B's handle yields it: ``(stdout, None, None)``, ``(None, stderr, None)`` or,
#: from a terminal, ``(None, None, pty)``.
Output = tuple[Stdout | None, Stderr | None, PtyOutput | None]


class NativeProcess(Protocol):
    """What a handle follows: a native command (:class:`sdk.commands.CommandHandle`), or a native
    terminal seen as one (:mod:`.pty`)."""

    @property
    def pid(self) -> int: ...

    def wait(self) -> NativeCommandResult: ...


class NativeTerminal(NativeProcess, Protocol):
    """A native terminal seen as a process (:class:`.pty.Terminal`): its handle can be disconnected."""

    def disconnect(self) -> None: ...


#: Starts the native process with the handle's output sinks: stdout and stderr text, a terminal's bytes.
Start = Callable[[Callable[[str], None], Callable[[str], None], Callable[[bytes], None]], NativeProcess]


class CommandHandle:
    """A command running in the background (E2B's): iterate it for its output as it comes, ``wait()`` for
    its result (``CommandExitException`` for a non-zero exit), ``kill()``, ``send_stdin()``. A terminal's
    handle (``sbx.pty.create``) yields its bytes as ``(None, None, data)`` and hands them to ``wait``'s
    ``on_pty``; its ``send_stdin`` is refused, as E2B's (type with ``sbx.pty.send_stdin``)."""

    def __init__(
        self,
        commands: Commands,
        start: Start,
        outlived: Callable[[], bool],
        callbacks: tuple[Callable[[str], None] | None, Callable[[str], None] | None] = (None, None),
        terminal: str | None = None,
    ) -> None:
        self._commands = commands
        self._callbacks = callbacks
        #: The call that opened it when it is a terminal (``pty.create``, ``pty.connect``), else None.
        self._terminal = terminal
        self._changed = threading.Condition()
        # Output not yet handed out (iteration and wait share it, as in E2B); what was is not kept.
        self._outputs: deque[Output] = deque()
        self._ended = False
        self._disconnected = False
        self._outlived = outlived
        self._native = start(self._stdout, self._stderr, self._pty)
        threading.Thread(target=self._await_end, name=f"e2b-command-{self.pid}", daemon=True).start()

    @property
    def pid(self) -> int:
        """The command's process id."""
        return self._native.pid

    def __repr__(self) -> str:
        return f"CommandHandle(pid={self.pid})"

    def _add(self, output: Output) -> None:
        with self._changed:
            self._outputs.append(output)
            self._changed.notify_all()

    def _stdout(self, text: str) -> None:
        self._add((text, None, None))
        if self._callbacks[0] is not None:
            self._callbacks[0](text)

    def _stderr(self, text: str) -> None:
        self._add((None, text, None))
        if self._callbacks[1] is not None:
            self._callbacks[1](text)

    def _pty(self, data: bytes) -> None:
        self._add((None, None, data))

    def _await_end(self) -> None:
        try:
            self._native.wait()
        except BaseException:  # kept by the native handle for wait(); this thread only marks the end
            pass
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def __iter__(self) -> Iterator[Output]:
        """The output from where the last reader stopped, as it comes, until the command ends; then
        ``TimeoutException`` if it outlived its ``timeout``."""
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._outputs) or self._ended or self._disconnected)
                if self._outputs:
                    output = self._outputs.popleft()
                elif self._disconnected:
                    return
                else:
                    break
            yield output
        self._result()

    def _result(self) -> CommandResult:
        with self._commands._followed():
            native = self._native.wait()
        return checked_result(native, self._outlived(), self._terminal or "commands.run")

    def wait(
        self,
        on_pty: Callable[[PtyOutput], None] | None = None,
        on_stdout: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> CommandResult:
        """Waits for the command to end, handing the output not yet read to the callbacks (a terminal's
        bytes to ``on_pty``).

        :raises CommandExitException: for a non-zero exit (a terminal's ``exit 3``, or a signal)
        :raises TimeoutException: when it outlived its ``timeout``
        """
        for stdout, stderr, pty in self:
            if stdout is not None and on_stdout is not None:
                on_stdout(stdout)
            elif stderr is not None and on_stderr is not None:
                on_stderr(stderr)
            elif pty is not None and on_pty is not None:
                on_pty(pty)
        return self._result()

    def disconnect(self) -> None:
        """Stops reading the command's output here; the command goes on (``commands.connect(pid)``, or
        ``pty.connect(pid)`` for a terminal). A terminal's stream is closed, as E2B's (the native
        ``PtyHandle.disconnect()``): its ``wait()`` then raises ``SandboxException``, unless the
        terminal's end was already seen."""
        if self._terminal is not None:  # outside the lock: the native follower may be handing over bytes
            with translated(in_sandbox=True):
                cast(NativeTerminal, self._native).disconnect()
        with self._changed:
            self._disconnected = True
            self._changed.notify_all()

    def kill(self) -> bool:
        """Ends the command and its whole process tree (SIGTERM, then SIGKILL); False when it was not
        running."""
        return self._commands.kill(self.pid)

    def send_stdin(self, data: str | bytes, request_timeout: float | None = None) -> None:
        """Writes to the command's stdin (started with ``stdin=True``).

        :raises SandboxException: on a terminal's handle, as in E2B (type with ``sbx.pty.send_stdin``)
        """
        if self._terminal is not None:
            raise SandboxException("Sending stdin is not supported for this command handle.")
        self._commands.send_stdin(self.pid, data, request_timeout)

    def close_stdin(self, request_timeout: float | None = None) -> None:
        """Closes the command's stdin (EOF).

        :raises SandboxException: on a terminal's handle, as in E2B
        """
        if self._terminal is not None:
            raise SandboxException("Closing stdin is not supported for this command handle.")
        self._commands.close_stdin(self.pid, request_timeout)


class Commands:
    """E2B's ``sbx.commands``: each command runs as the sandbox user (or, with ``user="root"``, its
    root) through ``/bin/bash -l -c``."""

    def __init__(self, native: NativeSandbox) -> None:
        self._native = native

    def _drive(self, op: Op[R]) -> R:
        with translated(in_sandbox=True):
            return drive(op, self._native._transport)

    @contextmanager
    def _followed(self) -> Iterator[None]:
        """Native errors as E2B's while following a command; a stream broken because the sandbox was
        killed or timed out is ``TimeoutException``, as in E2B."""
        try:
            with translated(in_sandbox=True):
                yield
        except SandboxException as error:
            if broken_by_end(error) and self._gone():
                raise sandbox_gone(error) from error.__cause__
            raise

    def _gone(self) -> bool:
        try:
            return drive(gone_op(self._native._core), self._native._transport)
        except Exception:  # the question failed too: keep the first error
            return False

    def list(self, request_timeout: float | None = None) -> builtins.list[ProcessInfo]:
        """The commands running now."""
        return self._drive(list_op(self._native._core))

    def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """Ends the command and its whole process tree (SIGTERM, then SIGKILL; E2B sends SIGKILL to the
        command alone); False when no such command runs."""
        return self._drive(kill_op(self._native._core, pid))

    def send_stdin(self, pid: int, data: str | bytes, request_timeout: float | None = None) -> None:
        """Writes ``data`` (text as UTF-8) to the command's stdin."""
        self._drive(send_stdin_op(self._native._core, pid, data))

    def close_stdin(self, pid: int, request_timeout: float | None = None) -> None:
        """Closes the command's stdin (EOF)."""
        self._drive(close_stdin_op(self._native._core, pid))

    @overload
    def run(
        self,
        cmd: str,
        background: Literal[False] | None = None,
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandResult: ...

    @overload
    def run(
        self,
        cmd: str,
        background: Literal[True],
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandHandle: ...

    def run(
        self,
        cmd: str,
        background: bool | None = None,
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandResult | CommandHandle:
        """Runs ``cmd`` (E2B's defaults: user ``user``, cwd its home, ``/home/user`` or ``/root`` for root,
        ``timeout`` 60 s, 0 for none).
        In the foreground it returns the result; with ``background=True`` a :class:`CommandHandle`.

        :raises CommandExitException: for a non-zero exit (foreground)
        :raises TimeoutException: when the command outlives ``timeout`` (it is then ended)
        :raises InvalidArgumentException: for a malformed argument (``user`` other than ``"user"`` or
            ``"root"`` included), before any call
        """
        plan = plan_run(cmd, envs=envs, user=user, cwd=cwd, stdin=stdin, timeout=timeout)
        outlived = plan.timer()
        if background:

            def start(out: Callable[[str], None], err: Callable[[str], None], _: object) -> NativeProcess:
                with translated(in_sandbox=True):
                    return self._native.commands.run(
                        **plan.native, background=True, on_stdout=out, on_stderr=err
                    )

            # The callbacks get the output as it arrives (on the thread that follows the command).
            return CommandHandle(self, start, outlived, (on_stdout, on_stderr))
        with self._followed():
            native = self._native.commands.run(**plan.native, on_stdout=on_stdout, on_stderr=on_stderr)
        return checked_result(native, outlived())

    def connect(
        self, pid: int, timeout: float | None = 60, request_timeout: float | None = None
    ) -> CommandHandle:
        """Re-attaches to a running command: its output from the start, then the rest.

        :raises NotFoundException: when no such command exists
        """
        check_connect(pid, timeout)

        def start(out: Callable[[str], None], err: Callable[[str], None], _: object) -> NativeProcess:
            with translated(in_sandbox=True):
                return self._native.commands.connect(pid, on_stdout=out, on_stderr=err)

        return CommandHandle(self, start, lambda: False)

