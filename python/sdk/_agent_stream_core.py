"""What ``AgentStream`` and ``AsyncAgentStream`` share (``sdk/agent-stream.ts``, ``agent-event-hub.ts``):
the state of one execution's stream, without I/O. Lines read from sandboxd are fed in; events are kept
for iteration within ``max_output_bytes`` (the last event always); the last event settles the result. The
abort handshake is guarded by a lock, so ``abort()`` may come from another thread while one opens."""

from __future__ import annotations

import threading

from ._agent_ops import EventLine, Keepalive, OpenControl, SessionLine, WireLine
from .agent_events import AgentEvent, AgentFailed, AgentResult, Done, ExecutionSummary
from .errors import AgentException, SandboxException, SdkException


def _size(value: AgentEvent | object) -> int:
    dump = getattr(value, "model_dump_json")
    return len(dump(by_alias=True).encode())


def _truncate_utf8(text: str, max_bytes: int) -> str:
    raw = text.encode()
    return text if len(raw) <= max_bytes else raw[:max_bytes].decode(errors="ignore")


def result_of(summary: ExecutionSummary, max_bytes: int, dropped_by_sdk: int) -> AgentResult:
    """The result of a summary: text, then tool calls in order while they fit within ``max_bytes``."""
    text = _truncate_utf8(summary.text, max_bytes)
    budget = max_bytes - len(text.encode())
    calls = []
    for call in summary.tool_calls:
        size = _size(call)
        if size > budget:
            break
        budget -= size
        calls.append(call)
    return AgentResult(
        text,
        summary.session_id,
        summary.steps,
        summary.usage,
        summary.exit_code,
        tuple(calls),
        summary.dropped_lines + dropped_by_sdk,
    )


class StreamCore(OpenControl):
    """One stream's state; also the ``OpenControl`` of its opening operation."""

    def __init__(self, max_output_bytes: int, execution_id: str | None = None, after: int = 0) -> None:
        self.max_bytes = max_output_bytes
        self.execution_id = execution_id
        self.cursor = after
        self.session_id: str | None = None
        self._kept: list[AgentEvent] = []
        self._kept_bytes = 0
        self.dropped = 0
        self._position = 0
        self.last: AgentFailed | Done | None = None
        self.summary: ExecutionSummary | None = None
        self.result: AgentResult | None = None
        self.failure: SdkException | None = None
        self.is_closed = False
        self._abort_requested = False
        self._abort_sent = False
        self._lock = threading.Lock()

    # --- OpenControl ------------------------------------------------------------------------------

    def closed(self) -> bool:
        """True once the stream was closed."""
        return self.is_closed

    def abort_requested(self) -> bool:
        """True once an abort was asked."""
        return self._abort_requested

    def started(self, execution_id: str) -> bool:
        """Records the execution id; True when an abort asked before must now be sent (by the opener)."""
        with self._lock:
            self.execution_id = execution_id
            if self._abort_requested and not self._abort_sent:
                self._abort_sent = True
                return True
            return False

    def request_abort(self) -> str | None:
        """Asks for an abort; the execution id when the caller must send the abort call now (once)."""
        with self._lock:
            if self.finished:
                return None
            self._abort_requested = True
            if self.execution_id is None or self._abort_sent:
                return None
            self._abort_sent = True
            return self.execution_id

    # --- events -----------------------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True after the last event or a failure."""
        return self.last is not None or self.failure is not None

    @property
    def dropped_lines(self) -> int:
        """Lines discarded: beyond ``max_output_bytes`` here, and by sandboxd (known at the end)."""
        return self.dropped + (0 if self.summary is None else self.summary.dropped_lines)

    def next_kept(self) -> AgentEvent | None:
        """The next kept event iteration has not yielded yet, if any."""
        if self._position < len(self._kept):
            event = self._kept[self._position]
            self._position += 1
            return event
        return None

    def _publish(self, event: AgentEvent, to_iterator: bool) -> AgentEvent:
        size = 0 if isinstance(event, (AgentFailed, Done)) else _size(event)
        if self._kept_bytes + size <= self.max_bytes:
            self._kept.append(event)
            self._kept_bytes += size
        else:
            self.dropped += 1
        if to_iterator:
            self._position = len(self._kept)  # an iterating reader takes this event, kept or not
        return event

    def accept(self, line: WireLine, to_iterator: bool) -> AgentEvent | None:
        """Feeds one line; the event it carries (None for a keepalive or the session line).

        :raises SandboxException: for a last ``done`` without its summary
        """
        if isinstance(line, Keepalive) or self.finished:
            return None
        self.cursor = line.seq
        if isinstance(line, SessionLine):
            self.session_id = line.session
            return None
        assert isinstance(line, EventLine)
        event = line.event
        if not isinstance(event, (AgentFailed, Done)):
            return self._publish(event, to_iterator)
        if isinstance(event, Done) and line.summary is None:
            raise SandboxException("the last event of the agent stream carried no summary")
        self.summary = line.summary
        if line.summary is not None:
            self.session_id = line.summary.session_id
            if isinstance(event, Done):
                self.result = result_of(line.summary, self.max_bytes, self.dropped)
        self.last = event
        return self._publish(event, to_iterator)

    def refuse(self, reason: str) -> None:
        """The execution was refused before it started (busy, runtime_missing, aborted)."""
        event = AgentFailed.model_validate({"type": "agent_failed", "reason": reason})
        self.last = event
        self._publish(event, False)

    def fail(self, error: BaseException) -> SdkException:
        """A sandbox or transport failure ends the stream (kept for every reader)."""
        if self.failure is None and self.last is None:
            self.failure = error if isinstance(error, SdkException) else SandboxException(
                "the agent event stream of the sandbox broke"
            )
        assert self.failure is not None
        return self.failure

    def outcome(self) -> AgentResult:
        """The result once the stream ended.

        :raises AgentException: with the reason after ``agent_failed``
        :raises SdkException: the failure that ended the stream, or ``SandboxException`` when it was
            closed before its last event
        """
        if isinstance(self.last, AgentFailed):
            raise AgentException(self.last.reason)
        if self.result is not None:
            return self.result
        if self.failure is not None:
            raise self.failure
        raise SandboxException("the agent stream was closed before its last event; attach to read it again")
