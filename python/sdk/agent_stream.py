"""``AgentStream`` (sync): one agent execution's events as they arrive (``sdk/agent-stream.ts``).

An agent failure (busy, timeout, aborted…) is the stream's last event, ``AgentFailed``, never an
exception while iterating; sandbox and transport failures are exceptions, and a stream that ends without
a last event is one (``SandboxException``). Lines are read as the caller iterates (or calls
:meth:`AgentStream.result`), so a slow loop holds sandboxd back instead of piling events up in memory.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from types import TracebackType
from typing import Iterator

from ._agent_ops import Opened, WireLine, abort_op
from ._agent_stream_core import StreamCore
from ._http import Op, Transport, drive
from ._sandbox_core import SandboxCore
from .agent_events import AgentEvent, AgentResult
from .errors import SandboxException, SdkException


class AgentStream:
    """The events of one execution, from ``sbx.agent.stream()``.

    Iteration and :meth:`result` share one reading: leaving a ``for`` loop early does not close the
    stream (``result()`` can follow). Close it with ``with`` or :meth:`close` when done; closing stops
    reading, the execution goes on (stop it with :meth:`abort`, which works from any thread).

    Example::

        with sbx.agent.stream("fix the failing test", spec=spec) as stream:
            for event in stream:
                if event.type == "tool_call":
                    print(event.name, event.status)
            result = stream.result()  # or AgentException with the reason
    """

    def __init__(self, core: SandboxCore, transport: Transport, opening: Op[Opened], state: StreamCore) -> None:
        """Not for callers: made by ``sbx.agent.stream()``. Opens the execution before returning."""
        self._core = core
        self._transport = transport
        self._state = state
        self._stack = ExitStack()
        self._lines: Iterator[WireLine] | None = None
        self._read_lock = threading.Lock()
        opened = drive(opening, transport)
        if opened.kind == "refused":
            assert opened.reason is not None
            state.refuse(opened.reason)
        elif opened.kind == "lines":
            assert opened.lines is not None
            self._lines = self._stack.enter_context(transport.lines(opened.lines))

    def __repr__(self) -> str:
        return f"AgentStream(execution_id={self.execution_id!r}, finished={self._state.finished})"

    @property
    def execution_id(self) -> str | None:
        """The execution id, once sandboxd started it."""
        return self._state.execution_id

    @property
    def session_id(self) -> str | None:
        """The session id, once sandboxd reported it (its session line, or the summary at the end)."""
        return self._state.session_id

    @property
    def dropped_lines(self) -> int:
        """Runtime output lines discarded so far: beyond ``max_output_bytes`` here, and by sandboxd."""
        return self._state.dropped_lines

    @property
    def cursor(self) -> int:
        """The sequence number of the last line read from sandboxd (0 before any)."""
        return self._state.cursor

    def _read(self, to_iterator: bool) -> AgentEvent | None:
        """Reads lines until one carries an event; None once the stream ended or was closed."""
        state = self._state
        with self._read_lock:
            try:
                while not state.finished and not state.is_closed and self._lines is not None:
                    line = next(self._lines, None)
                    if line is None:
                        raise SandboxException("the agent event stream ended before its last event")
                    event = state.accept(line, to_iterator)
                    if event is not None:
                        return event
            except SdkException as error:
                if state.is_closed:
                    return None  # closed while a line was read
                state.fail(error)
                self._stack.close()
                raise
            if state.finished:
                self._stack.close()
            return None

    def __iter__(self) -> AgentStream:
        return self

    def __next__(self) -> AgentEvent:
        """The next event; the last is ``Done`` or ``AgentFailed``.

        :raises SandboxException: (or another SDK exception) on a sandbox or transport failure
        """
        event = self._state.next_kept()
        if event is None:
            event = self._read(True)
        if event is not None:
            return event
        if self._state.failure is not None:
            raise self._state.failure
        raise StopIteration

    def result(self) -> AgentResult:
        """Reads the rest of the stream and returns the execution's result.

        :raises AgentException: with the reason when the execution ended with ``agent_failed``
        :raises SandboxException: on a sandbox or transport failure, or when the stream was closed
            before its last event
        """
        while not self._state.finished and not self._state.is_closed and self._lines is not None:
            self._read(False)
        return self._state.outcome()

    def abort(self) -> None:
        """Stops the execution (sandboxd freezes and kills its tree); the stream then ends with
        ``AgentFailed`` ``aborted``. Callable from any thread; nothing happens after the last event."""
        execution_id = self._state.request_abort()
        if execution_id is not None:
            drive(abort_op(self._core, execution_id), self._transport)

    def close(self) -> None:
        """Stops reading and releases the connection; the execution goes on (see :meth:`abort`)."""
        self._state.is_closed = True
        self._stack.close()

    def __enter__(self) -> AgentStream:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
