"""``sbx.commands`` of the async E2B shim: the operations of :mod:`sdk.compat.e2b.commands`, awaited, on
the native :mod:`sdk.async_commands`. Output callbacks may be plain or coroutine functions. A terminal
(``sbx.pty``, :mod:`.async_pty`) is an ``AsyncCommandHandle`` too, as in E2B."""

from __future__ import annotations

import asyncio
import builtins
import inspect
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable, Literal, Mapping, Protocol, TypeVar, Union, cast, overload

from ..._command_output import CommandResult as NativeCommandResult
from ..._http import Op, adrive
from ...async_sandbox import AsyncSandbox as NativeAsyncSandbox
from ._command_ops import broken_by_end, close_stdin_op, gone_op, kill_op, list_op, sandbox_gone, send_stdin_op
from ._command_options import check_connect, plan_run
from .command_result import CommandResult, ProcessInfo, checked_result, to_result
from .exceptions import SandboxException, translated

R = TypeVar("R")
T = TypeVar("T")

#: E2B's ``OutputHandler[T]``: called with each chunk (``str`` of a command, ``PtyOutput`` bytes of a
#: terminal); it may return an awaitable (awaited in turn).
OutputHandler = Callable[[T], Union[None, Awaitable[None]]]


class NativeAsyncProcess(Protocol):
    """What an async handle follows: a native command (:class:`sdk.async_commands.AsyncCommandHandle`),
    or a native terminal seen as one (:mod:`.async_pty`); ``_task`` is the task following it."""

    @property
    def pid(self) -> int: ...

    @property
    def _task(self) -> asyncio.Task[None]: ...

    async def wait(self) -> NativeCommandResult: ...


class NativeAsyncTerminal(NativeAsyncProcess, Protocol):
    """A native terminal seen as a process (:class:`.async_pty.AsyncTerminal`): its handle can be
    disconnected."""

    async def disconnect(self) -> None: ...


class _Output:
    """A command's output kept for the handle's ``stdout``/``stderr``, then handed to the callback."""

    def __init__(self, callback: OutputHandler[str] | None) -> None:
        self.chunks: list[str] = []
        self._callback = callback

    async def __call__(self, text: str) -> None:
        self.chunks.append(text)
        if self._callback is not None:
            returned = self._callback(text)
            if inspect.isawaitable(returned):
                await returned


class AsyncCommandHandle:
    """A command running in the background (E2B's async handle): ``await wait()`` for its result
    (``CommandExitException`` for a non-zero exit), ``kill()``, ``send_stdin()``, ``disconnect()``; the
    output so far in ``stdout``/``stderr``. A terminal's handle (``sbx.pty.create``) hands its bytes to
    ``on_data``, keeps none in ``stdout``, and refuses ``send_stdin``, as E2B's."""

    def __init__(
        self, commands: AsyncCommands, native: NativeAsyncProcess, outputs: tuple[_Output, _Output],
        outlived: Callable[[], bool], terminal: str | None = None,
    ) -> None:  # fmt: skip
        self._commands = commands
        self._native = native
        self._outputs = outputs
        self._outlived = outlived
        #: The call that opened it when it is a terminal (``pty.create``, ``pty.connect``), else None.
        self._terminal = terminal
        self._result: CommandResult | None = None

    @property
    def pid(self) -> int:
        """The command's process id."""
        return self._native.pid

    @property
    def stdout(self) -> str:
        """Its stdout so far."""
        return "".join(self._outputs[0].chunks)

    @property
    def stderr(self) -> str:
        """Its stderr so far."""
        return "".join(self._outputs[1].chunks)

    @property
    def exit_code(self) -> int | None:
        """Its exit code once waited for (-1 for a signal); None before."""
        return None if self._result is None else self._result.exit_code

    @property
    def error(self) -> str | None:
        """Its error message once waited for (``exit status N``, ``signal: killed``)."""
        return None if self._result is None else self._result.error

    def __repr__(self) -> str:
        return f"AsyncCommandHandle(pid={self.pid})"

    async def wait(self) -> CommandResult:
        """Waits for the command to end.

        :raises CommandExitException: for a non-zero exit (a terminal's ``exit 3``, or a signal)
        :raises TimeoutException: when it outlived its ``timeout``
        """
        async with self._commands._followed():
            native = await self._native.wait()
        self._result = to_result(native)
        return checked_result(native, self._outlived(), self._terminal or "commands.run")

    async def disconnect(self) -> None:
        """Stops following the command here (it goes on; ``commands.connect(pid)``, or ``pty.connect(pid)``
        for a terminal, re-attaches). A terminal's stream is closed by the native ``disconnect()``, as
        E2B's: its ``wait()`` then raises ``SandboxException``, unless the terminal's end was already
        seen."""
        if self._terminal is not None:
            with translated(in_sandbox=True):
                await cast(NativeAsyncTerminal, self._native).disconnect()
            return
        task = self._native._task
        task.cancel()
        try:
            await task
        except BaseException:  # the follower ends cancelled: that is the point
            pass

    async def kill(self) -> bool:
        """Ends the command and its whole process tree (SIGTERM, then SIGKILL); False when it was not
        running."""
        return await self._commands.kill(self.pid)

    async def send_stdin(self, data: str | bytes, request_timeout: float | None = None) -> None:
        """Writes to the command's stdin (started with ``stdin=True``).

        :raises SandboxException: on a terminal's handle, as in E2B (type with ``sbx.pty.send_stdin``)
        """
        if self._terminal is not None:
            raise SandboxException("Sending stdin is not supported for this command handle.")
        await self._commands.send_stdin(self.pid, data, request_timeout)

    async def close_stdin(self, request_timeout: float | None = None) -> None:
        """Closes the command's stdin (EOF).

        :raises SandboxException: on a terminal's handle, as in E2B
        """
        if self._terminal is not None:
            raise SandboxException("Closing stdin is not supported for this command handle.")
        await self._commands.close_stdin(self.pid, request_timeout)


class AsyncCommands:
    """E2B's async ``sbx.commands``: each command runs as the sandbox user (or, with ``user="root"``, its
    root) through ``/bin/bash -l -c``."""

    def __init__(self, native: NativeAsyncSandbox) -> None:
        self._native = native

    async def _drive(self, op: Op[R]) -> R:
        with translated(in_sandbox=True):
            return await adrive(op, self._native._transport)

    @asynccontextmanager
    async def _followed(self) -> AsyncIterator[None]:
        """Native errors as E2B's while following a command; a stream broken because the sandbox was
        killed or timed out is ``TimeoutException``, as in E2B."""
        try:
            with translated(in_sandbox=True):
                yield
        except SandboxException as error:
            if broken_by_end(error) and await self._gone():
                raise sandbox_gone(error) from error.__cause__
            raise

    async def _gone(self) -> bool:
        try:
            return await adrive(gone_op(self._native._core), self._native._transport)
        except Exception:  # the question failed too: keep the first error
            return False

    async def list(self, request_timeout: float | None = None) -> builtins.list[ProcessInfo]:
        """The commands running now."""
        return await self._drive(list_op(self._native._core))

    async def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """Ends the command and its whole process tree (SIGTERM, then SIGKILL; E2B sends SIGKILL to the
        command alone); False when no such command runs."""
        return await self._drive(kill_op(self._native._core, pid))

    async def send_stdin(self, pid: int, data: str | bytes, request_timeout: float | None = None) -> None:
        """Writes ``data`` (text as UTF-8) to the command's stdin."""
        await self._drive(send_stdin_op(self._native._core, pid, data))

    async def close_stdin(self, pid: int, request_timeout: float | None = None) -> None:
        """Closes the command's stdin (EOF)."""
        await self._drive(close_stdin_op(self._native._core, pid))

    @overload
    async def run(
        self,
        cmd: str,
        background: Literal[False] | None = None,
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: OutputHandler[str] | None = None,
        on_stderr: OutputHandler[str] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandResult: ...

    @overload
    async def run(
        self,
        cmd: str,
        background: Literal[True],
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: OutputHandler[str] | None = None,
        on_stderr: OutputHandler[str] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> AsyncCommandHandle: ...

    async def run(
        self,
        cmd: str,
        background: bool | None = None,
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: OutputHandler[str] | None = None,
        on_stderr: OutputHandler[str] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> CommandResult | AsyncCommandHandle:
        """Runs ``cmd`` as :meth:`sdk.compat.e2b.commands.Commands.run` does, awaited.

        :raises CommandExitException: for a non-zero exit (foreground)
        :raises TimeoutException: when the command outlives ``timeout``
        :raises InvalidArgumentException: for a malformed argument (``user`` other than ``"user"`` or
            ``"root"`` included)
        """
        plan = plan_run(cmd, envs=envs, user=user, cwd=cwd, stdin=stdin, timeout=timeout)
        outlived = plan.timer()
        outputs = (_Output(on_stdout), _Output(on_stderr))
        if background:
            with translated(in_sandbox=True):
                native = await self._native.commands.run(
                    **plan.native, background=True, on_stdout=outputs[0], on_stderr=outputs[1]
                )
            return AsyncCommandHandle(self, native, outputs, outlived)
        async with self._followed():
            result = await self._native.commands.run(**plan.native, on_stdout=outputs[0], on_stderr=outputs[1])
        return checked_result(result, outlived())

    async def connect(
        self,
        pid: int,
        timeout: float | None = 60,
        request_timeout: float | None = None,
        on_stdout: OutputHandler[str] | None = None,
        on_stderr: OutputHandler[str] | None = None,
    ) -> AsyncCommandHandle:
        """Re-attaches to a running command: its output from the start, then the rest.

        :raises NotFoundException: when no such command exists
        """
        check_connect(pid, timeout)
        outputs = (_Output(on_stdout), _Output(on_stderr))
        with translated(in_sandbox=True):
            native = await self._native.commands.connect(pid, on_stdout=outputs[0], on_stderr=outputs[1])
        return AsyncCommandHandle(self, native, outputs, lambda: False)
