"""The records of sandboxd's own event feed (``protocol/daemon-events.ts``; ``sbx.daemon_events()``, the
TypeScript SDK's ``sbx.events$``) and of the control plane's inspection feed (``protocol/control-plane-api.ts``
``inspectionRecordSchema``; ``Sandbox.inspect()``, TypeScript's ``Sandbox.inspect$``).

Audit records only: no header value, body, query or output. Every string of a daemon record is bounded
(``MAX_RECORD_NAME``, ``MAX_RECORD_TEXT``); a line that is not a record is skipped, as in TypeScript.
Pydantic models, camelCase on the wire and snake_case in Python, frozen.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

import pydantic
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

from ._feeds import Feed

#: Longest path or command line a daemon record carries (a longer one is cut and ends with ``…``).
MAX_RECORD_TEXT = 512
#: Longest name a daemon record carries (method, endpoint pattern, route, actor, machine event or state).
MAX_RECORD_NAME = 128

_Name = Annotated[str, Field(max_length=MAX_RECORD_NAME)]
_Text = Annotated[str, Field(max_length=MAX_RECORD_TEXT)]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, strict=True)

    #: Position in sandboxd's log: ``sbx.daemon_events(after=seq)`` goes on after it.
    seq: int = Field(gt=0)
    #: When sandboxd recorded it (milliseconds since the epoch).
    at: float


class DaemonCall(_Record):
    """An authenticated call to sandboxd's API (``endpoint``: ``POST /v1/processes``)."""

    type: Literal["call"] = "call"
    method: _Name
    endpoint: _Name


class GatewayRequest(_Record):
    """A request a gateway route received."""

    type: Literal["gateway_request"] = "gateway_request"
    route: _Name
    method: _Name


class GatewayResponse(_Record):
    """A gateway route's answer once it is over: ``path`` without its query, the status the sandbox saw,
    the time from request to the end of the response, and the bytes written to the sandbox."""

    type: Literal["gateway_response"] = "gateway_response"
    route: _Name
    method: _Name
    path: _Text
    status: int
    latency_ms: float = Field(ge=0)
    bytes: int = Field(ge=0)


class DaemonProcess(_Record):
    """A command started (``command``: its line, cut at ``MAX_RECORD_TEXT``) or ended (``exit_code``, or
    the ``signal`` that ended it)."""

    type: Literal["process"] = "process"
    pid: int
    event: Literal["start", "end"]
    command: _Text | None = None
    exit_code: int | None = None
    signal: _Name | None = None


class RouteChange(_Record):
    """A gateway route opened (on ``port``), closed or failed (with its ``error_class``)."""

    type: Literal["route"] = "route"
    route: _Name
    event: Literal["opened", "closed", "failed"]
    port: int | None = None
    error_class: _Name | None = None


class ActorTransition(_Record):
    """A transition of an actor sandboxd hosts (a gateway route, the agent): its machine event's type
    and the new state; the agent's ``run`` names the execution it starts (``execution_id``)."""

    type: Literal["transition"] = "transition"
    actor_id: _Name
    kind: Literal["gateway_route", "agent_execution"]
    actor_seq: int = Field(gt=0)
    event: _Name
    state: _Name
    execution_id: _Name | None = None


class EgressDecision(_Record):
    """A decision of the sandbox's egress filter or credential broker (issue 27): a DNS question, a
    connection or a proxy request refused (``name``, ``port``, the ``rule``: an entry, the mode, or why),
    or a connection let through once it ended (the upstream ``address`` and ``port``, ``bytes`` both
    ways). ``via``: ``dns``, ``tls``, ``http`` (the name checks), ``proxy`` (the egress proxy) or
    ``credential`` (a connection the broker terminated to inject a host's headers). Never a header, a
    path or a body."""

    type: Literal["egress"] = "egress"
    event: Literal["allowed", "refused"]
    via: Literal["dns", "tls", "http", "proxy", "credential"]
    name: _Text
    address: _Name | None = None
    port: int | None = None
    rule: _Text
    bytes: int | None = Field(default=None, ge=0)


class PreviewTraffic(_Record):
    """Preview traffic (issue 28, ``sbx.ports``): a tunnel to ``port`` of the sandbox's loopback opened
    (``bytes`` 0), or moved ``bytes`` (both ways) since its last record; at most one a second per
    tunnel. Counts as traffic for the control plane's idle policy (``TRAFFIC_EVENTS`` of
    ``protocol/daemon-events.ts``), as ``call`` and ``gateway_request`` do."""

    type: Literal["preview"] = "preview"
    port: int
    bytes: int = Field(ge=0)


#: One record of sandboxd's feed (``DaemonEvent`` of ``protocol/daemon-events.ts``); ``type`` tells which.
DaemonEvent = Annotated[
    Union[
        DaemonCall, GatewayRequest, GatewayResponse, DaemonProcess, RouteChange, ActorTransition, EgressDecision,
        PreviewTraffic,
    ],
    Field(discriminator="type"),
]

_DAEMON_EVENT: TypeAdapter[DaemonEvent] = TypeAdapter(DaemonEvent)


class InspectionEvent(BaseModel):
    """The machine event of an inspection record: its ``type`` and whatever else the actor recorded
    (``model_extra``, camelCase as sent)."""

    model_config = ConfigDict(frozen=True, extra="allow", strict=True)

    type: str


class InspectionRecord(BaseModel):
    """One transition of one actor of the control plane (a sandbox, a gateway route, an agent execution),
    with the actor's own ``seq`` and the feed's ``cursor``: ``Sandbox.inspect(after=cursor)`` goes on
    from there."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, strict=True)

    actor_id: str
    kind: Literal["sandbox", "gateway_route", "agent_execution"]
    seq: int = Field(ge=0)
    event: InspectionEvent
    state: str
    at: float
    #: True for a transition replayed from the control plane's journal when it started (recovery).
    replayed: bool
    cursor: int = Field(gt=0)


def parse_daemon_event(value: object) -> DaemonEvent | None:
    """A line of sandboxd's feed as its record; None for a line that is not one (skipped)."""
    try:
        return _DAEMON_EVENT.validate_python(value)
    except pydantic.ValidationError:
        return None


def parse_inspection_record(value: object) -> InspectionRecord | None:
    """A line of the inspection feed as its record; None for a line that is not one (skipped)."""
    try:
        return InspectionRecord.model_validate(value)
    except pydantic.ValidationError:
        return None


def _cursor_of(record: InspectionRecord) -> int:
    return record.cursor


def daemon_feed(daemon_url: str, token: str, after: int) -> Feed[DaemonEvent]:
    """sandboxd's feed (``GET /v1/events?after=``, the sandbox token), from after ``after`` (0: the oldest
    record sandboxd still holds). Reading it is not using the sandbox: sandboxd records no call for it,
    and the control plane never resumes a suspended sandbox for it (the read waits until something else
    resumes it)."""
    return Feed(f"{daemon_url}/v1/events", token, after, parse=parse_daemon_event)


def inspection_feed(plane_url: str, operator_key: str | None, after: int | None) -> Feed[InspectionRecord]:
    """The inspection feed (``GET /v1/inspect?after=``, the operator key): after ``after`` when given, else
    from each actor's latest transition; resumed after the last cursor."""
    return Feed(f"{plane_url}/v1/inspect", operator_key, after, parse=parse_inspection_record, seq_of=_cursor_of)
