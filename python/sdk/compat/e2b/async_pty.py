"""``sbx.pty`` of the async E2B shim (E2B's ``sandbox_async/commands/pty.py``): :mod:`.pty` awaited, on
the native :class:`sdk.async_pty.AsyncPty`. ``create`` and ``connect`` take E2B's ``on_data`` (a plain or
coroutine function, awaited in turn, called with the terminal's bytes as they come) and give E2B's
:class:`~sdk.compat.e2b.async_commands.AsyncCommandHandle`: ``await wait()`` returns E2B's
``CommandResult`` (empty ``stdout`` and ``stderr``), ``exit_code`` once it has ended, ``disconnect()``
stops ``on_data`` and closes the stream (the terminal goes on; ``wait()`` then raises
``SandboxException``)."""

from __future__ import annotations

import asyncio
from typing import Mapping

from ..._command_output import CommandResult as NativeCommandResult
from ...async_sandbox import AsyncSandbox as NativeAsyncSandbox
from ...async_pty import AsyncPtyHandle as NativeAsyncPtyHandle
from ._command_ops import kill_op
from ._pty_plan import check_connect, check_on_data, plan_pty, resize_op, send_stdin_op
from .async_commands import AsyncCommandHandle, AsyncCommands, OutputHandler, _Output
from .command_result import PtyOutput, PtySize
from .exceptions import translated


class AsyncTerminal:
    """A native terminal as the process an async shim handle follows: its end as a command's, no text
    output."""

    def __init__(self, terminal: NativeAsyncPtyHandle) -> None:
        self._terminal = terminal

    @property
    def pid(self) -> int:
        """The terminal's pid in sandboxd."""
        return self._terminal.pid

    @property
    def _task(self) -> asyncio.Task[None]:
        """The task following the terminal (closing the sandbox handle cancels it)."""
        return self._terminal._task

    async def wait(self) -> NativeCommandResult:
        """How the terminal's program ended, as a command's result with no output."""
        ended = await self._terminal.wait()
        return NativeCommandResult("", "", ended.exit_code, ended.signal)

    async def disconnect(self) -> None:
        """Closes the terminal's stream (the native ``disconnect``); the terminal runs on."""
        await self._terminal.disconnect()


def _shown(on_data: OutputHandler[PtyOutput] | None) -> OutputHandler[PtyOutput]:
    """The native ``on_data`` (required there): E2B's, or one that drops the bytes."""
    return on_data if on_data is not None else (lambda _data: None)


def _no_output() -> tuple[_Output, _Output]:
    """A terminal's ``stdout`` and ``stderr``: empty, as in E2B."""
    return _Output(None), _Output(None)


class AsyncPty:
    """E2B's async ``sbx.pty``: terminals in the sandbox, as the sandbox user (or its root)."""

    def __init__(self, native: NativeAsyncSandbox, commands: AsyncCommands) -> None:
        self._native = native
        self._commands = commands

    async def create(
        self,
        size: PtySize,
        on_data: OutputHandler[PtyOutput],
        user: str | None = None,
        cwd: str | None = None,
        envs: Mapping[str, str] | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> AsyncCommandHandle:
        """Opens a terminal as :meth:`sdk.compat.e2b.pty.Pty.create` does, awaited; ``on_data`` gets its
        bytes as they come (awaited when it returns an awaitable).

        Example::

            terminal = await sbx.pty.create(PtySize(rows=24, cols=80), on_data=lambda d: print(d.decode()))
            await sbx.pty.send_stdin(terminal.pid, b"echo hi; exit\\n")
            await terminal.wait()

        :raises InvalidArgumentException: for a malformed argument, before any call
        """
        plan = plan_pty(size, user=user, cwd=cwd, envs=envs, timeout=timeout)
        check_on_data(on_data, "pty.create")
        outlived = plan.timer()
        with translated(in_sandbox=True):
            native = await self._native.pty.create(**plan.native, on_data=_shown(on_data))
        return AsyncCommandHandle(self._commands, AsyncTerminal(native), _no_output(), outlived, "pty.create")

    async def connect(
        self,
        pid: int,
        on_data: OutputHandler[PtyOutput],
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> AsyncCommandHandle:
        """Reattaches to a terminal by pid as :meth:`sdk.compat.e2b.pty.Pty.connect` does (the screen's
        recent output first), awaited.

        :raises NotFoundException: when the sandbox has no such terminal
        """
        checked = check_connect(pid, timeout)
        check_on_data(on_data, "pty.connect")
        with translated(in_sandbox=True):
            native = await self._native.pty.connect(checked, on_data=_shown(on_data))
        return AsyncCommandHandle(self._commands, AsyncTerminal(native), _no_output(), lambda: False, "pty.connect")

    async def send_stdin(self, pid: int, data: bytes | str, request_timeout: float | None = None) -> None:
        """Types ``data`` into terminal ``pid`` (text is taken too, as UTF-8).

        :raises NotFoundException: when the sandbox has no such terminal
        """
        await self._commands._drive(send_stdin_op(self._native._core, pid, data))

    async def resize(self, pid: int, size: PtySize, request_timeout: float | None = None) -> None:
        """Resizes terminal ``pid`` (its program gets SIGWINCH).

        :raises InvalidArgumentException: for a size out of 1 to 1000, before any call, or a pid that is
            not a terminal
        :raises NotFoundException: when the sandbox has no such terminal
        """
        await self._commands._drive(resize_op(self._native._core, pid, size))

    async def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """Ends terminal ``pid`` and everything it started: True, or False when no such terminal runs."""
        return await self._commands._drive(kill_op(self._native._core, pid, "pty.kill"))

    def __repr__(self) -> str:
        return f"AsyncPty(sandbox_id={self._native.sandbox_id!r})"
