"""``sbx.commands`` of the sync ``Sandbox``: run commands as the sandbox user (or its root), in the
foreground or the background, re-attach to one by pid, write its stdin, kill it or its whole tree
(``sdk/commands.ts``)."""

from __future__ import annotations

import builtins
import threading
from typing import Literal, Mapping, overload

from ._accounts import Account
from ._command_output import CommandResult, OutputCollector, follow
from ._http import Transport, drive
from ._sandbox_core import SandboxCore
from ._command_options import OutputCallback, resolve_command_connect, resolve_run_options
from ._wire import ProcessEvent, ProcessInfo


class CommandHandle:
    """A command running in the background (or re-attached by pid). Its events are followed on a
    thread of its own from the command's start, so ``on_stdout``/``on_stderr`` are called as output
    arrives (on that thread) and nothing is missed before :meth:`wait`."""

    def __init__(
        self,
        core: SandboxCore,
        transport: Transport,
        pid: int,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
    ) -> None:
        self.pid = pid
        self._core = core
        self._transport = transport
        self._collector = OutputCollector(on_stdout, on_stderr)
        self._first = threading.Event()
        self._done = threading.Event()
        self._result: CommandResult | None = None
        self._error: BaseException | None = None
        thread = threading.Thread(target=self._follow, name=f"sdk-command-{pid}", daemon=True)
        thread.start()

    def __repr__(self) -> str:
        return f"CommandHandle(pid={self.pid})"

    def _follow(self) -> None:
        try:
            follow(self._transport, self._core, self._core.events_call(self.pid), self._feed, self._collector)
            self._result = self._collector.result()
        except BaseException as error:  # kept for wait(); a thread must not raise
            self._error = error
        finally:
            self._first.set()
            self._done.set()

    def _feed(self, event: ProcessEvent) -> None:
        self._first.set()
        self._collector.feed(event)

    def _started(self) -> CommandHandle:
        """Returns once the first event (the command's start) arrived; raises what stopped the stream."""
        self._first.wait()
        if self._collector.pid is None and self._error is not None:
            raise self._error
        return self

    def wait(self) -> CommandResult:
        """Blocks until the command ends; its result.

        :raises SandboxException: when the event stream broke or the sandbox ended
        """
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def send_stdin(self, data: str | bytes) -> None:
        """Writes to the command's stdin (text as UTF-8)."""
        drive(self._core.stdin_op(self.pid, data), self._transport)

    def close_stdin(self) -> None:
        """Closes the command's stdin."""
        drive(self._core.close_stdin_op(self.pid), self._transport)

    def kill(self, tree: bool = True) -> None:
        """Ends the command with SIGKILL: its whole tree unless ``tree`` is False."""
        drive(self._core.signal_op(self.pid, tree), self._transport)


class Commands:
    """Commands of one sandbox (each call goes straight to sandboxd through the control plane, which
    resumes a suspended sandbox with auto-resume where the call reaches it)."""

    def __init__(self, core: SandboxCore, transport: Transport) -> None:
        self._core = core
        self._transport = transport

    @overload
    def run(
        self,
        cmd: str,
        *,
        user: Account = ...,
        envs: Mapping[str, str] | None = ...,
        cwd: str | None = ...,
        timeout: float | None = ...,
        kill_tree: bool = ...,
        on_stdout: OutputCallback | None = ...,
        on_stderr: OutputCallback | None = ...,
        background: Literal[False] = ...,
    ) -> CommandResult: ...

    @overload
    def run(
        self,
        cmd: str,
        *,
        user: Account = ...,
        envs: Mapping[str, str] | None = ...,
        cwd: str | None = ...,
        timeout: float | None = ...,
        kill_tree: bool = ...,
        on_stdout: OutputCallback | None = ...,
        on_stderr: OutputCallback | None = ...,
        background: Literal[True],
    ) -> CommandHandle: ...

    def run(
        self,
        cmd: str,
        *,
        user: Account = "user",
        envs: Mapping[str, str] | None = None,
        cwd: str | None = None,
        timeout: float | None = None,
        kill_tree: bool = True,
        on_stdout: OutputCallback | None = None,
        on_stderr: OutputCallback | None = None,
        background: bool = False,
    ) -> CommandResult | CommandHandle:
        """Runs ``cmd`` through a shell as the sandbox user (uid 1000, home ``/home/user``), or with
        ``user="root"`` as the sandbox's root (uid 0 of the sandbox's own user namespace, with Docker's
        default capabilities; home ``/root``).

        ``envs`` adds environment variables, ``cwd`` sets the working directory (absolute; default: the
        account's home), ``timeout`` ends the command after that many seconds (0: none), ``kill_tree``
        (default True) makes that and :meth:`CommandHandle.kill` end its whole process tree. With
        ``background=True`` it returns a :class:`CommandHandle` once the command runs; otherwise it
        waits and returns the :class:`CommandResult` (a non-zero exit is a result, not an exception).

        Example::

            result = sbx.commands.run("echo hello")
            server = sbx.commands.run("python3 -m http.server", background=True)
            sbx.commands.run("apt-get install -y jq", user="root")

        :raises InvalidArgumentException: for a malformed option (a ``user`` other than ``"user"`` or
            ``"root"`` included), before any call
        """
        o = resolve_run_options(
            cmd,
            envs=envs,
            cwd=cwd,
            timeout=timeout,
            kill_tree=kill_tree,
            on_stdout=on_stdout,
            on_stderr=on_stderr,
            background=background,
            user=user,
        )
        if o.background:
            pid = drive(self._core.start_op(o.start), self._transport).pid
            return CommandHandle(self._core, self._transport, pid, o.on_stdout, o.on_stderr)._started()
        # Started and followed in one call: the answer is the command's event stream.
        collector = OutputCollector(o.on_stdout, o.on_stderr)
        follow(self._transport, self._core, self._core.run_stream_call(o.start), collector.feed, collector)
        return collector.result()

    def connect(
        self, pid: int, *, on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None
    ) -> CommandHandle:
        """Re-attaches to a command by pid, from this or another process, also after a pause and resume:
        the callbacks get the output sandboxd kept (the last 8 MiB: the start of a command that wrote more
        is gone), then the rest as it comes (on the handle's thread).

        Example::

            server = sbx.commands.connect(pid, on_stdout=print)
            server.wait()

        :raises InvalidArgumentException: for a malformed pid or callback, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        checked, stdout, stderr = resolve_command_connect(pid, on_stdout, on_stderr)
        return CommandHandle(self._core, self._transport, checked, stdout, stderr)._started()

    def list(self) -> builtins.list[ProcessInfo]:
        """Commands the daemon knows, running or ended."""
        return drive(self._core.list_op(), self._transport)
