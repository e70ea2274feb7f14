"""What ``sbx.agent.attach`` and ``sbx.agent.events`` share between the sync and the async agent
(``attach`` and ``events$`` of ``sdk/sandbox-agent.ts``, ``attachedExecution`` of ``sdk/agent-execution.ts``):
the checks of ``attach``'s arguments, the operation that finds the execution, the one that opens its
event stream from a cursor, and the resumable feed of the running execution's events."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ._agent_ops import EventLine, Opened, OpenControl, events_call, execution_path, executions_op, parse_wire_line
from ._check import Checker, check_int, check_string, whole
from ._feeds import Feed
from ._http import Op
from ._sandbox_core import SandboxCore
from .agent_events import AgentFeedEvent, ExecutionList
from .errors import InvalidArgumentException

_EXECUTION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_MAX_SAFE = 2**53 - 1


@dataclass(frozen=True)
class AttachOptions:
    """``attach``'s arguments, checked."""

    execution_id: str | None
    after: int
    max_output_bytes: int | None


def check_attach(execution_id: object, after: object, max_output_bytes: object) -> AttachOptions:
    """``agent.attach(execution_id, after=, max_output_bytes=)`` checked before any call.

    :raises InvalidArgumentException: naming the field (``execution_id``, ``after``, ``max_output_bytes``)
    """
    check = Checker("agent.attach")
    if execution_id is not None:
        check_string(check, ("execution_id",), execution_id, _EXECUTION_ID, "must be an execution id")
    check_int(check, ("after",), after, 0, _MAX_SAFE, high_rule="must be 0 (from the start) or a cursor")
    if max_output_bytes is not None:
        check_int(check, ("max_output_bytes",), max_output_bytes, 1, 2**32)
    check.done()
    return AttachOptions(
        None if execution_id is None else str(execution_id),
        whole(after),
        None if max_output_bytes is None else whole(max_output_bytes),
    )


def _no_execution(message: str) -> InvalidArgumentException:
    return InvalidArgumentException(f"agent.attach: execution_id: {message}", "execution_id")


def target_op(core: SandboxCore, options: AttachOptions) -> Op[tuple[str, int]]:
    """The execution to attach to (the named one, else the running one) and what the SDK keeps of its
    events (``max_output_bytes``, else the execution's own).

    :raises InvalidArgumentException: when none runs and none is named, or sandboxd has no such execution
    """
    listed: ExecutionList = yield from executions_op(core)
    execution_id = options.execution_id if options.execution_id is not None else listed.current
    if execution_id is None:
        raise _no_execution("no execution is running; name one")
    info = next((e for e in listed.executions if e.execution_id == execution_id), None)
    if info is None:
        raise _no_execution("the sandbox has no such execution")
    kept = options.max_output_bytes if options.max_output_bytes is not None else info.limits.max_output_bytes
    return execution_id, kept


def attached_op(core: SandboxCore, execution_id: str, after: int, control: OpenControl) -> Op[Opened]:
    """Opens an existing execution's stream after the cursor ``after`` (0: from its start): no call of its
    own, the stream is the events call (refused before any traffic once the handle knows its sandbox
    ended, as every daemon call)."""
    yield from ()  # an operation, as every opening of a stream, though it makes no call
    if control.closed():
        return Opened("closed")
    return Opened("lines", lines=events_call(core, execution_id, after))


def _feed_parser(execution_id: str) -> Callable[[object], AgentFeedEvent | None]:
    def parse(value: object) -> AgentFeedEvent | None:
        try:
            line = parse_wire_line(value)
        except ValueError:  # pydantic's ValidationError is one; a line that is not an event is skipped
            return None
        if not isinstance(line, EventLine):
            return None
        return AgentFeedEvent(execution_id, line.seq, line.event)

    return parse


def _cursor_of(event: AgentFeedEvent) -> int:
    return event.cursor


def running_op(core: SandboxCore) -> Op[str]:
    """The running execution's id, for ``agent.events()``.

    :raises InvalidArgumentException: (field ``execution_id``) when no execution runs
    """
    listed: ExecutionList = yield from executions_op(core)
    if listed.current is None:
        raise InvalidArgumentException("agent.events: no execution is running", "execution_id")
    return listed.current


def agent_feed(core: SandboxCore, execution_id: str) -> Feed[AgentFeedEvent]:
    """The execution's events from its start (``GET /v1/agent/executions/:id/events?after=``), resumed
    after the last cursor; it ends after the last event. Its reads reach sandboxd through the control
    plane as every daemon call does (a suspended sandbox with auto-resume is resumed there)."""
    url = f"{core._daemon.url}{execution_path(execution_id, '/events')}"
    return Feed(url, core.access_token, 0, parse=_feed_parser(execution_id), seq_of=_cursor_of)
