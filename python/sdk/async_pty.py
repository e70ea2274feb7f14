"""``sbx.pty`` of ``AsyncSandbox``: the terminals of ``pty.py``, awaited (its module text says how they work)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Mapping

from ._accounts import Account
from ._command_output import afollow
from ._http import AsyncTransport, adrive
from ._sandbox_core import SandboxCore
from ._command_options import DEFAULT_PTY_CMD, DataCallback, pid_of, resolve_pty_connect, resolve_pty_options
from ._wire import ProcessEvent
from .errors import InvalidArgumentException, SandboxException
from ._pty_core import (
    PtyResult,
    _Screen,
    _input_op,
    _resize_op,
    _kill_op,
    _outcome,
)



class AsyncPtyHandle:
    """A terminal of an :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`PtyHandle` awaited. Its events
    are followed by a task from the start; ``on_data`` may be a plain function or a coroutine function."""

    def __init__(
        self,
        core: SandboxCore,
        transport: AsyncTransport,
        pid: int,
        on_data: DataCallback,
        followers: set[asyncio.Task[None]],
    ) -> None:
        #: The terminal's pid in sandboxd: what :meth:`AsyncPty.connect` takes.
        self.pid = pid
        self._core = core
        self._transport = transport
        self._screen = _Screen(on_data)
        self._first = asyncio.Event()
        self._disconnected = False
        self._result: PtyResult | None = None
        self._error: BaseException | None = None
        self._task = asyncio.get_running_loop().create_task(self._follow(), name=f"sdk-pty-{pid}")
        followers.add(self._task)
        self._task.add_done_callback(followers.discard)

    def __repr__(self) -> str:
        return f"AsyncPtyHandle(pid={self.pid})"

    async def _follow(self) -> None:
        try:
            call = self._core.events_call(self.pid)
            await afollow(self._transport, self._core, call, self._feed, self._screen)
            self._result = self._screen.result()
        except Exception as error:  # kept for wait(); the task itself never fails
            self._error = error
        finally:
            self._first.set()

    async def _feed(self, event: ProcessEvent) -> None:
        if self._disconnected:  # events read with the last chunk: no on_data after disconnect()
            return
        self._first.set()
        returned = self._screen.feed(event)
        if inspect.isawaitable(returned):
            await returned

    async def _started(self) -> AsyncPtyHandle:
        """Returns once the first event (the terminal's start) arrived; raises what stopped the stream."""
        await self._first.wait()
        if self._screen.pid is None and self._error is not None:
            raise self._error
        return self

    async def send_input(self, data: str | bytes) -> None:
        """As :meth:`PtyHandle.send_input`, awaited.

        :raises InvalidArgumentException: for ``data`` that is neither text nor bytes, before any call
        """
        await adrive(_input_op(self._core, self.pid, data), self._transport)

    async def resize(self, *, cols: int, rows: int) -> None:
        """As :meth:`PtyHandle.resize`, awaited.

        :raises InvalidArgumentException: for a size out of 1-1000, before any call
        """
        await adrive(_resize_op(self._core, self.pid, cols, rows), self._transport)

    async def kill(self) -> None:
        """Ends the terminal's program and everything it started (SIGKILL to its tree)."""
        await adrive(_kill_op(self._core, self.pid), self._transport)

    async def disconnect(self) -> None:
        """As :meth:`PtyHandle.disconnect`, awaited: cancels the follower task (its stream closes; the
        terminal runs on) and returns once it has stopped (at once from ``on_data``: it stops at its next
        wait)."""
        if self._disconnected:
            return
        self._disconnected = True
        self._task.cancel()
        if self._task is not asyncio.current_task():  # from on_data itself: no self-wait
            await asyncio.gather(self._task, return_exceptions=True)

    async def wait(self) -> PtyResult:
        """Waits until the terminal's program ends; how it ended. Cancelling the wait leaves it running.

        :raises SandboxException: when the event stream broke or the sandbox ended, or after
            :meth:`disconnect` (unless the end was seen before it)
        """
        try:
            await asyncio.shield(self._task)
        except asyncio.CancelledError:
            if not (self._task.cancelled() and self._disconnected):
                raise  # this wait cancelled, or the follower (its sandbox handle closed)
        return _outcome(self._screen, self._result, self._error, self._disconnected)


class AsyncPty:
    """The terminals of one :class:`~sdk.async_sandbox.AsyncSandbox`: :class:`Pty` awaited."""

    def __init__(self, core: SandboxCore, transport: AsyncTransport) -> None:
        self._core = core
        self._transport = transport
        #: The tasks following this handle's terminals.
        self._followers: set[asyncio.Task[None]] = set()

    async def stop_following(self) -> None:
        """Stops following terminals (they go on running; their ``wait`` is cancelled). The sandbox handle
        calls this when it closes."""
        tasks = set(self._followers)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def create(
        self,
        *,
        cols: int = 80,
        rows: int = 24,
        cwd: str | None = None,
        envs: Mapping[str, str] | None = None,
        user: Account = "user",
        cmd: str = DEFAULT_PTY_CMD,
        timeout: float | None = None,
        on_data: DataCallback,
    ) -> AsyncPtyHandle:
        """As :meth:`Pty.create`, awaited; ``on_data`` plain or ``async``.

        Example::

            term = await sbx.pty.create(on_data=screen.append)
            await term.send_input("echo hello\\n")

        :raises InvalidArgumentException: for a malformed option, before any call
        """
        o = resolve_pty_options(
            cols=cols, rows=rows, cwd=cwd, envs=envs, user=user, cmd=cmd, timeout=timeout, on_data=on_data
        )
        pid = (await adrive(self._core.start_op(o.start), self._transport)).pid
        return await AsyncPtyHandle(self._core, self._transport, pid, o.on_data, self._followers)._started()

    async def connect(self, pid: int, *, on_data: DataCallback) -> AsyncPtyHandle:
        """As :meth:`Pty.connect`, awaited: the screen's recent output first, then the rest.

        :raises InvalidArgumentException: for a malformed pid or ``on_data``, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        checked, callback = resolve_pty_connect(pid, on_data)
        return await AsyncPtyHandle(self._core, self._transport, checked, callback, self._followers)._started()

    async def send_input(self, pid: int, data: str | bytes) -> None:
        """As :meth:`Pty.send_input`, awaited.

        :raises InvalidArgumentException: for a malformed pid or ``data``, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        await adrive(_input_op(self._core, pid_of("pty.send_input", pid), data), self._transport)

    async def resize(self, pid: int, *, cols: int, rows: int) -> None:
        """As :meth:`Pty.resize`, awaited.

        :raises InvalidArgumentException: for a malformed pid, or a size out of 1-1000, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        await adrive(_resize_op(self._core, pid_of("pty.resize", pid), cols, rows), self._transport)

    async def kill(self, pid: int) -> None:
        """As :meth:`Pty.kill`, awaited.

        :raises InvalidArgumentException: for a malformed pid, before any call
        :raises SandboxException: ``process_not_found`` for a pid sandboxd does not know
        """
        await adrive(_kill_op(self._core, pid_of("pty.kill", pid)), self._transport)

    def __repr__(self) -> str:
        return f"AsyncPty(sandbox_id={self._core.sandbox_id!r})"
