"""``AsyncAgentStream``: the events of one execution for ``AsyncSandbox`` (``sdk/agent-stream.ts``), the
same state as :class:`~sdk.agent_stream.AgentStream` (``sdk._agent_stream_core``) read with async I/O.

The execution is opened by a task of its own as soon as the stream is made. Cancelling a task while it
waits on the stream (``async for``, :meth:`AsyncAgentStream.result`, so also ``await sbx.agent.run()``)
aborts the execution (SPEC: reason ``aborted``) before the cancellation goes on; the stream can still be
read afterwards (it reads on from its cursor) to see its last event."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from types import TracebackType
from typing import AsyncIterator

from ._agent_ops import Opened, WireLine, abort_op, events_call
from ._agent_stream_core import StreamCore
from ._http import AsyncTransport, Op, adrive
from ._sandbox_core import SandboxCore
from .agent_events import AgentEvent, AgentResult
from .errors import SandboxException, SdkException


class AsyncAgentStream:
    """The events of one execution, from ``sbx.agent.stream()`` of an ``AsyncSandbox``.

    Example::

        async with sbx.agent.stream("fix the failing test", spec=spec) as stream:
            async for event in stream:
                print(event.type)
            result = await stream.result()  # or AgentException with the reason
    """

    def __init__(self, core: SandboxCore, transport: AsyncTransport, opening: Op[Opened], state: StreamCore) -> None:
        """Not for callers: made by ``sbx.agent.stream()`` (in a running event loop)."""
        self._core = core
        self._transport = transport
        self._state = state
        self._stack = AsyncExitStack()
        self._lines: AsyncIterator[WireLine] | None = None
        self._broken = False
        self._read_lock = asyncio.Lock()
        self._opening = asyncio.get_running_loop().create_task(self._open(opening), name="sdk-agent-open")

    def __repr__(self) -> str:
        return f"AsyncAgentStream(execution_id={self.execution_id!r}, finished={self._state.finished})"

    @property
    def execution_id(self) -> str | None:
        """The execution id, once sandboxd started it."""
        return self._state.execution_id

    @property
    def session_id(self) -> str | None:
        """The session id, once sandboxd reported it."""
        return self._state.session_id

    @property
    def dropped_lines(self) -> int:
        """Runtime output lines discarded so far: beyond ``max_output_bytes`` here, and by sandboxd."""
        return self._state.dropped_lines

    @property
    def cursor(self) -> int:
        """The sequence number of the last line read from sandboxd (0 before any)."""
        return self._state.cursor

    async def _open(self, opening: Op[Opened]) -> None:
        try:
            opened = await adrive(opening, self._transport)
            if opened.kind == "refused":
                assert opened.reason is not None
                self._state.refuse(opened.reason)
            elif opened.kind == "lines" and not self._state.is_closed:
                assert opened.lines is not None
                self._lines = await self._stack.enter_async_context(self._transport.lines(opened.lines))
        except Exception as error:  # kept for every reader; the task itself never fails
            if not self._state.is_closed:
                self._state.fail(error)

    async def _cancelled(self) -> None:
        """The waiting task was cancelled: abort the execution (SPEC "aborted"), then let it go on."""
        try:
            await self.abort()
        except SdkException:
            pass  # the cancellation is what the caller sees

    async def _read(self, to_iterator: bool) -> AgentEvent | None:
        """Reads lines until one carries an event; None once the stream ended or was closed."""
        state = self._state
        try:
            await asyncio.shield(self._opening)
            async with self._read_lock:
                while not state.finished and not state.is_closed:
                    if self._lines is None:
                        if not self._broken or state.execution_id is None:
                            return None
                        self._broken = False  # read on after the cursor
                        call = events_call(self._core, state.execution_id, state.cursor)
                        self._lines = await self._stack.enter_async_context(self._transport.lines(call))
                    line = await anext(self._lines, None)
                    if line is None:
                        raise SandboxException("the agent event stream ended before its last event")
                    event = state.accept(line, to_iterator)
                    if event is not None:
                        return event
        except asyncio.CancelledError:
            if self._lines is not None and not state.finished:
                self._lines, self._broken = None, True
                await self._stack.aclose()
            await self._cancelled()
            raise
        except SdkException as error:
            if state.is_closed:
                return None
            state.fail(error)
            await self._stack.aclose()
            raise
        if state.finished:
            await self._stack.aclose()
        return None

    def __aiter__(self) -> AsyncAgentStream:
        return self

    async def __anext__(self) -> AgentEvent:
        """The next event; the last is ``Done`` or ``AgentFailed``.

        :raises SandboxException: (or another SDK exception) on a sandbox or transport failure
        """
        event = self._state.next_kept()
        if event is None:
            event = await self._read(True)
        if event is not None:
            return event
        if self._state.failure is not None:
            raise self._state.failure
        raise StopAsyncIteration

    async def result(self) -> AgentResult:
        """Reads the rest of the stream and returns the execution's result. Cancelling the awaiting task
        aborts the execution.

        :raises AgentException: with the reason when the execution ended with ``agent_failed``
        :raises SandboxException: on a sandbox or transport failure, or when the stream was closed
            before its last event
        """
        await self._read(False)
        while not self._state.finished and not self._state.is_closed and (self._lines is not None or self._broken):
            await self._read(False)
        return self._state.outcome()

    async def abort(self) -> None:
        """Stops the execution (sandboxd freezes and kills its tree); the stream then ends with
        ``AgentFailed`` ``aborted``. Nothing happens after the last event."""
        execution_id = self._state.request_abort()
        if execution_id is None:
            if not self._opening.done():
                await asyncio.shield(self._opening)  # the opener sends the abort once it has started
            return
        await adrive(abort_op(self._core, execution_id), self._transport)

    async def aclose(self) -> None:
        """Stops reading and releases the connection; the execution goes on (see :meth:`abort`)."""
        self._state.is_closed = True
        try:
            await asyncio.shield(self._opening)
        finally:
            await self._stack.aclose()

    async def __aenter__(self) -> AsyncAgentStream:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()
