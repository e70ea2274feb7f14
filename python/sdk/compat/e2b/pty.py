"""``sbx.pty`` of the sync E2B shim (E2B's ``sandbox_sync/commands/pty.py``) on the native terminals
(:mod:`sdk.pty`: a program on a pseudo-terminal of the sandbox's own, run by sandboxd), as the TypeScript
shim's ``pty.ts``. ``create`` runs E2B's ``/bin/bash -i -l`` on a terminal of ``size`` and ``connect``
reattaches by pid; both give E2B's :class:`~sdk.compat.e2b.commands.CommandHandle`, whose iteration yields
the terminal's bytes as ``(None, None, data)`` and whose ``wait(on_pty=...)`` hands them over, then
returns E2B's ``CommandResult`` (empty ``stdout`` and ``stderr``; ``CommandExitException`` for a non-zero
exit, ``TimeoutException`` past ``timeout``). ``send_stdin``, ``resize`` and ``kill`` act on any terminal
of the sandbox by pid, each one request to sandboxd."""

from __future__ import annotations

from typing import Callable, Mapping

from ..._command_output import CommandResult as NativeCommandResult
from ...pty import PtyHandle as NativePtyHandle
from ...sandbox import Sandbox as NativeSandbox
from ._command_ops import kill_op
from ._pty_plan import check_connect, plan_pty, resize_op, send_stdin_op
from .command_result import PtySize
from .commands import CommandHandle, Commands, NativeProcess
from .exceptions import translated


class Terminal:
    """A native terminal as the process a shim handle follows: its end as a command's, no text output."""

    def __init__(self, terminal: NativePtyHandle) -> None:
        self._terminal = terminal

    @property
    def pid(self) -> int:
        """The terminal's pid in sandboxd."""
        return self._terminal.pid

    def wait(self) -> NativeCommandResult:
        """How the terminal's program ended, as a command's result with no output."""
        ended = self._terminal.wait()
        return NativeCommandResult("", "", ended.exit_code, ended.signal)

    def disconnect(self) -> None:
        """Closes the terminal's stream (the native ``disconnect``); the terminal runs on."""
        self._terminal.disconnect()


class Pty:
    """E2B's ``sbx.pty``: terminals in the sandbox, as the sandbox user (or its root)."""

    def __init__(self, native: NativeSandbox, commands: Commands) -> None:
        self._native = native
        self._commands = commands

    def create(
        self,
        size: PtySize,
        user: str | None = None,
        cwd: str | None = None,
        envs: Mapping[str, str] | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandHandle:
        """Opens a terminal of ``size`` running E2B's ``/bin/bash -i -l`` as the sandbox user (or
        ``user="root"``), in the account's home unless ``cwd`` says otherwise (a relative one under it),
        with ``TERM=xterm-256color`` and ``LANG`` / ``LC_ALL`` ``C.UTF-8`` unless ``envs`` names them. It
        ends after ``timeout`` seconds (E2B's 60 by default; 0 or None: none); ``wait()`` then raises
        ``TimeoutException``. Its output is kept from the start for the handle's iteration and
        ``wait(on_pty=...)``.

        Example::

            terminal = sbx.pty.create(PtySize(rows=24, cols=80), timeout=0)
            sbx.pty.send_stdin(terminal.pid, b"echo hi; exit\\n")
            terminal.wait(on_pty=lambda data: sys.stdout.buffer.write(data))

        :raises InvalidArgumentException: for a malformed argument (``size.cols`` and ``size.rows`` are
            whole numbers from 1 to 1000; ``user`` ``"user"`` or ``"root"``), before any call
        """
        plan = plan_pty(size, user=user, cwd=cwd, envs=envs, timeout=timeout)
        outlived = plan.timer()

        def start(_out: object, _err: object, shown: Callable[[bytes], None]) -> NativeProcess:
            with translated(in_sandbox=True):
                return Terminal(self._native.pty.create(**plan.native, on_data=shown))

        return CommandHandle(self._commands, start, outlived, terminal="pty.create")

    def connect(self, pid: int, timeout: float | None = 60, request_timeout: float | None = None) -> CommandHandle:
        """Reattaches to a terminal by pid, from this or another process (a handle connected with the
        sandbox's token): the screen's recent output first (what sandboxd kept, up to 8 MiB), then the
        rest as it comes. ``timeout`` is checked; the terminal keeps the deadline it was opened with.

        :raises NotFoundException: when the sandbox has no such terminal
        """
        checked = check_connect(pid, timeout)

        def start(_out: object, _err: object, shown: Callable[[bytes], None]) -> NativeProcess:
            with translated(in_sandbox=True):
                return Terminal(self._native.pty.connect(checked, on_data=shown))

        return CommandHandle(self._commands, start, lambda: False, terminal="pty.connect")

    def send_stdin(self, pid: int, data: bytes | str, request_timeout: float | None = None) -> None:
        """Types ``data`` into terminal ``pid``: keys, pasted text, control characters (``b"\\x03"`` is
        Ctrl-C); text is taken too, as UTF-8.

        :raises NotFoundException: when the sandbox has no such terminal
        """
        self._commands._drive(send_stdin_op(self._native._core, pid, data))

    def resize(self, pid: int, size: PtySize, request_timeout: float | None = None) -> None:
        """Resizes terminal ``pid`` (its program gets SIGWINCH).

        :raises InvalidArgumentException: for a size out of 1 to 1000, before any call, or a pid that is
            not a terminal
        :raises NotFoundException: when the sandbox has no such terminal
        """
        self._commands._drive(resize_op(self._native._core, pid, size))

    def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """Ends terminal ``pid`` and everything it started (E2B sends SIGKILL to its shell alone): True, or
        False when no such terminal runs."""
        return self._commands._drive(kill_op(self._native._core, pid, "pty.kill"))

    def __repr__(self) -> str:
        return f"Pty(sandbox_id={self._native.sandbox_id!r})"
