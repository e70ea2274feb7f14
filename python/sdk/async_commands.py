"""``sbx.commands`` of ``AsyncSandbox``: the same operations as :mod:`sdk.commands`, awaited."""

from __future__ import annotations

import asyncio
import builtins
import inspect
from typing import Literal, Mapping, overload

from ._accounts import Account
from ._command_output import CommandResult, OutputCollector, afollow
from ._http import AsyncTransport, adrive
from ._sandbox_core import SandboxCore
from ._command_options import OutputCallback, resolve_command_connect, resolve_run_options
from ._wire import ProcessEvent, ProcessInfo


async def _feed(collector: OutputCollector, event: ProcessEvent) -> None:
    """Feeds one event; a callback that returned an awaitable (a coroutine function) is awaited."""
    returned = collector.feed(event)
    if inspect.isawaitable(returned):
        await returned


class AsyncCommandHandle:
    """A command running in the background (or re-attached by pid). Its events are followed by a task
    from the command's start, so the callbacks (plain or ``async``) get output as it arrives."""

    def __init__(
        self,
        core: SandboxCore,
        transport: AsyncTransport,
        pid: int,
        callbacks: tuple[OutputCallback | None, OutputCallback | None],
        followers: set[asyncio.Task[None]],
    ) -> None:
        self.pid = pid
        self._core = core
        self._transport = transport
        self._collector = OutputCollector(*callbacks)
        self._first = asyncio.Event()
        self._result: CommandResult | None = None
        self._error: BaseException | None = None
        self._task = asyncio.get_running_loop().create_task(self._follow(), name=f"sdk-command-{pid}")
        followers.add(self._task)
        self._task.add_done_callback(followers.discard)

    def __repr__(self) -> str:
        return f"AsyncCommandHandle(pid={self.pid})"

    async def _follow(self) -> None:
        try:
            call = self._core.events_call(self.pid)
            await afollow(self._transport, self._core, call, self._feed, self._collector)
            self._result = self._collector.result()
        except Exception as error:  # kept for wait(); the task itself never fails
            self._error = error
        finally:
            self._first.set()

    async def _feed(self, event: ProcessEvent) -> None:
        self._first.set()
        await _feed(self._collector, event)

    async def _started(self) -> AsyncCommandHandle:
        """Returns once the first event (the command's start) arrived; raises what stopped the stream."""
        await self._first.wait()
        if self._collector.pid is None and self._error is not None:
            raise self._error
        return self

    async def wait(self) -> CommandResult:
        """Waits until the command ends; its result. Cancelling the wait leaves the command running.

        :raises SandboxException: when the event stream broke or the sandbox ended
        """
        await asyncio.shield(self._task)
        if self._error is not None:
            raise self._error
        if self._result is None:  # the task was cancelled (its sandbox handle closed)
            raise asyncio.CancelledError()
        return self._result

    async def send_stdin(self, data: str | bytes) -> None:
        """Writes to the command's stdin (text as UTF-8)."""
        await adrive(self._core.stdin_op(self.pid, data), self._transport)

    async def close_stdin(self) -> None:
        """Closes the command's stdin."""
        await adrive(self._core.close_stdin_op(self.pid), self._transport)

    async def kill(self, tree: bool = True) -> None:
        """Ends the command with SIGKILL: its whole tree unless ``tree`` is False."""
        await adrive(self._core.signal_op(self.pid, tree), self._transport)


class AsyncCommands:
    """Commands of one sandbox (each call goes straight to sandboxd through the control plane, which
    resumes a suspended sandbox with auto-resume where the call reaches it)."""

    def __init__(self, core: SandboxCore, transport: AsyncTransport) -> None:
        self._core = core
        self._transport = transport
        #: The tasks following background commands of this handle.
        self._followers: set[asyncio.Task[None]] = set()

    async def stop_following(self) -> None:
        """Stops following background commands (the commands go on running); their ``wait`` is
        cancelled. The sandbox handle calls this when it closes."""
        tasks = set(self._followers)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _handle(
        self, pid: int, on_stdout: OutputCallback | None, on_stderr: OutputCallback | None
    ) -> AsyncCommandHandle:
        return AsyncCommandHandle(self._core, self._transport, pid, (on_stdout, on_stderr), self._followers)

    @overload
    async def run(
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
    async def run(
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
    ) -> AsyncCommandHandle: ...

    async def run(
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
    ) -> CommandResult | AsyncCommandHandle:
        """Runs ``cmd`` through a shell as the sandbox user (or root, ``user="root"``); the options of
        :meth:`sdk.commands.Commands.run`. Callbacks may be plain functions or coroutine functions.

        Example::

            result = await sbx.commands.run("echo hello")

        :raises InvalidArgumentException: for a malformed option, before any call
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
            pid = (await adrive(self._core.start_op(o.start), self._transport)).pid
            return await self._handle(pid, o.on_stdout, o.on_stderr)._started()
        collector = OutputCollector(o.on_stdout, o.on_stderr)

        async def feed(event: ProcessEvent) -> None:
            await _feed(collector, event)

        await afollow(self._transport, self._core, self._core.run_stream_call(o.start), feed, collector)
        return collector.result()

    async def connect(
        self, pid: int, *, on_stdout: OutputCallback | None = None, on_stderr: OutputCallback | None = None
    ) -> AsyncCommandHandle:
        """Re-attaches to a command by pid, from this or another process, also after a pause and resume:
        the callbacks (plain or ``async``) get the output sandboxd kept (the last 8 MiB: the start of a
        command that wrote more is gone), then the rest as it comes.

        :raises InvalidArgumentException: for a malformed pid or callback, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        checked, stdout, stderr = resolve_command_connect(pid, on_stdout, on_stderr)
        return await self._handle(checked, stdout, stderr)._started()

    async def list(self) -> builtins.list[ProcessInfo]:
        """Commands the daemon knows, running or ended."""
        return await adrive(self._core.list_op(), self._transport)
