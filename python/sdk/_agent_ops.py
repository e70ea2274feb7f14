"""sandboxd's agent calls (``protocol/agent-wire.ts``) and the operations of an execution, written once
as generators of calls for the sync and the async SDK (``sdk/agent-execution.ts``). A new execution is 2
calls when sandboxd already holds its configuration (start, then the prompt whose answer is the event
stream) and 3 when it does not; an attached or resumed stream is the events call."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Literal, Protocol, Union
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from ._agent_plan import ExecutionPlan
from ._http import Call, Op, model_parser
from ._sandbox_core import SandboxCore
from .agent_events import AGENT_EVENT, AgentEvent, ExecutionList, ExecutionSummary
from .errors import AgentException, SandboxException, SdkException

_MALFORMED = "malformed line in the agent event stream"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class _Empty(_Model):
    pass


class _Started(_Model):
    executionId: str


class _Written(_Model):
    hash: str


@dataclass(frozen=True)
class EventLine:
    """An event with its sequence number (the cursor), and the summary on the last event."""

    seq: int
    event: AgentEvent
    summary: ExecutionSummary | None


@dataclass(frozen=True)
class SessionLine:
    """The session id, as soon as the runtime reports it."""

    seq: int
    session: str


@dataclass(frozen=True)
class Keepalive:
    """A line that only keeps the connection alive."""


#: One line of an execution's stream.
WireLine = Union[EventLine, SessionLine, Keepalive]


def _seq(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("seq")
    return value


def parse_wire_line(value: object) -> WireLine:
    """One NDJSON line of an execution's stream (strict: anything else is refused)."""
    if not isinstance(value, dict):
        raise ValueError("line")
    keys = set(value)
    if keys == {"keepalive"} and value["keepalive"] is True:
        return Keepalive()
    if keys == {"seq", "session"} and isinstance(value["session"], str):
        return SessionLine(_seq(value["seq"]), value["session"])
    if keys in ({"seq", "event"}, {"seq", "event", "summary"}):
        summary = value.get("summary")
        return EventLine(
            _seq(value["seq"]),
            AGENT_EVENT.validate_python(value["event"], strict=True),
            None if summary is None else ExecutionSummary.model_validate(summary, strict=True),
        )
    raise ValueError("line")


def execution_path(execution_id: str, rest: str = "") -> str:
    """The path of execution ``execution_id`` and of its sub-resource ``rest``."""
    return f"/v1/agent/executions/{quote(execution_id, safe='')}{rest}"


def events_call(core: SandboxCore, execution_id: str, after: int = 0) -> Call[WireLine]:
    """``GET /v1/agent/executions/:id/events?after=``: the stream from after that cursor."""
    path = execution_path(execution_id, f"/events?after={after}")
    return Call(core._daemon, "GET", path, parse_wire_line, core.access_token, malformed=_MALFORMED)


def prompt_call(core: SandboxCore, execution_id: str, prompt: str) -> Call[WireLine]:
    """``POST /v1/agent/executions/:id/prompt``: the prompt as raw UTF-8; the answer is the stream."""
    path = execution_path(execution_id, "/prompt")
    token = core.access_token
    return Call(core._daemon, "POST", path, parse_wire_line, token, content=prompt.encode(), malformed=_MALFORMED)


def abort_op(core: SandboxCore, execution_id: str) -> Op[object]:
    """``POST /v1/agent/executions/:id/abort``: freeze and kill the execution's tree."""
    path = execution_path(execution_id, "/abort")
    return core.daemon_op(Call(core._daemon, "POST", path, model_parser(_Empty), core.access_token))


def executions_op(core: SandboxCore) -> Op[ExecutionList]:
    """``GET /v1/agent/executions``."""
    parse = model_parser(ExecutionList)
    return core.daemon_op(Call(core._daemon, "GET", "/v1/agent/executions", parse, core.access_token))


def prepare_op(
    core: SandboxCore, configs: ConfigWrites, runtime: str, config: dict[str, Any] | None = None
) -> Op[object]:
    """``POST /v1/agent/prepare``: warm the runtime up in the background; with ``config``, written first,
    the runtime starts with that configuration."""
    body: dict[str, Any] = {"runtime": runtime}
    if config is not None:
        yield from configs.ensure_op(core, config)
        body["configHash"] = config["hash"]
    parse = model_parser(_Empty)
    answer: object = yield from core.daemon_op(
        Call(core._daemon, "POST", "/v1/agent/prepare", parse, core.access_token, body)
    )
    return answer


class ConfigWrites:
    """The configuration hashes one sandbox handle has written, so an unchanged one is not written again."""

    def __init__(self) -> None:
        self._written: set[str] = set()
        self._lock = threading.Lock()

    def ensure_op(self, core: SandboxCore, config: dict[str, Any]) -> Op[None]:
        """Writes ``config`` unless this handle already has (a failed write is not remembered)."""
        with self._lock:
            if config["hash"] in self._written:
                return
        parse = model_parser(_Written)
        yield from core.daemon_op(Call(core._daemon, "PUT", "/v1/agent/config", parse, core.access_token, config))
        with self._lock:
            self._written.add(config["hash"])

    def forget(self, config_hash: str) -> None:
        """sandboxd no longer holds ``config_hash`` (it restarted, or another process wrote others)."""
        with self._lock:
            self._written.discard(config_hash)


class OpenControl(Protocol):
    """What the stream tells the opening operation."""

    def closed(self) -> bool:
        """True once the stream was closed: start nothing more."""

    def abort_requested(self) -> bool:
        """True once an abort was asked."""

    def started(self, execution_id: str) -> bool:
        """The execution started; True when an abort was asked before (the opener then sends it)."""


@dataclass(frozen=True)
class Opened:
    """What opening gave: the call whose answer is the stream, a refusal, or nothing (closed)."""

    kind: Literal["lines", "refused", "closed"]
    lines: Call[WireLine] | None = None
    reason: str | None = None


def _configuration_missing(error: SdkException) -> bool:
    return isinstance(error, SandboxException) and error.code == "agent_config_missing"


def _start_op(core: SandboxCore, configs: ConfigWrites, plan: ExecutionPlan) -> Op[str | AgentException]:
    """The start call; a configuration sandboxd lost is written again and the start tried once more."""
    parse = model_parser(_Started)
    for attempt in (0, 1):
        retry = False
        try:
            call = Call(core._daemon, "POST", "/v1/agent/executions", parse, core.access_token, plan.start)
            started: _Started = yield from core.daemon_op(call)
            return started.executionId
        except AgentException as refused:  # busy, runtime_missing: the stream holds just agent_failed
            return refused
        except SdkException as error:
            if attempt > 0 or not _configuration_missing(error):
                raise
            retry = True
        if retry:
            configs.forget(plan.config["hash"])
            yield from configs.ensure_op(core, plan.config)
    raise SandboxException("the agent execution could not be started")  # not reached


def open_op(core: SandboxCore, configs: ConfigWrites, plan: ExecutionPlan, control: OpenControl) -> Op[Opened]:
    """Opens a new execution: configuration (when new), start, then the prompt whose answer is the
    stream; aborted before its prompt, the prompt is never sent and the stream is the events call."""
    if control.abort_requested():
        return Opened("refused", reason="aborted")
    yield from configs.ensure_op(core, plan.config)
    if control.closed():
        return Opened("closed")
    if control.abort_requested():
        return Opened("refused", reason="aborted")
    started = yield from _start_op(core, configs, plan)
    if isinstance(started, AgentException):
        return Opened("refused", reason=started.reason)
    if control.started(started):
        try:
            yield from abort_op(core, started)
        except SdkException:
            pass  # the events tell how it ended
        return Opened("lines", lines=events_call(core, started))
    return Opened("lines", lines=prompt_call(core, started, plan.prompt))
