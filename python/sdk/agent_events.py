"""The agent's public data types (SPEC "Events", "AgentResult and TokenUsage"): the events of one
execution as sandboxd sends them (``protocol/agent-wire.ts``), the result built from its summary, and
what ``sbx.agent.executions()`` lists. Mirrors ``sdk/agent-events.ts``; pydantic models validated strictly
at the wire edge (camelCase on the wire, snake_case in Python), frozen once made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

#: Reasons an execution can fail with (SPEC "Agent reasons"; ``rules/agent-reasons.ts``).
AgentFailureReason = Literal[
    "runtime_missing",
    "busy",
    "timeout",
    "aborted",
    "max_steps",
    "token_budget",
    "output_limit",
    "runtime_version_mismatch",
    "runtime_error",
]


class _Wire(BaseModel):
    model_config = ConfigDict(
        frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True, strict=True
    )


class TokenUsage(_Wire):
    """Tokens of one step (``StepFinished.usage``) or of a whole execution (``AgentResult.usage``)."""

    input: int = Field(ge=0)
    output: int = Field(ge=0)
    reasoning: int = Field(ge=0)
    cache_read: int = Field(ge=0)
    cache_write: int = Field(ge=0)
    total: int = Field(ge=0)


class StepStarted(_Wire):
    """A step begins."""

    type: Literal["step_started"] = "step_started"


class Text(_Wire):
    """The complete text of one part (runtime_a emits no deltas)."""

    type: Literal["text"] = "text"
    text: str


class TextDelta(_Wire):
    """A streamed text chunk (runtime_b only)."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class Reasoning(_Wire):
    """Reasoning text, only when the call asked for ``reasoning=True``."""

    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCall(_Wire):
    """A tool call: ``name``, ``status`` (``running``, ``completed``, ``error``), ``input``, ``output``
    (truncated by the runtime)."""

    type: Literal["tool_call"] = "tool_call"
    name: str
    status: Literal["running", "completed", "error"]
    input: Any = None
    output: str


class StepFinished(_Wire):
    """A step ends, with its ``usage``."""

    type: Literal["step_finished"] = "step_finished"
    usage: TokenUsage


class AgentFailed(_Wire):
    """The execution failed or was stopped: the last event, with its ``reason``."""

    type: Literal["agent_failed"] = "agent_failed"
    reason: AgentFailureReason


class Done(_Wire):
    """The execution ended normally: the last event."""

    type: Literal["done"] = "done"


#: One event of an execution (SPEC "Events"); the last one of a stream is ``Done`` or ``AgentFailed``.
AgentEvent = Annotated[
    Union[StepStarted, Text, TextDelta, Reasoning, ToolCall, StepFinished, AgentFailed, Done],
    Field(discriminator="type"),
]

AGENT_EVENT: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


class AgentToolCall(_Wire):
    """One entry of ``AgentResult.tool_calls``."""

    name: str
    status: Literal["running", "completed", "error"]
    input: Any = None
    output: str


class ExecutionSummary(_Wire):
    """What ``AgentResult`` is made of, sent once with the last event."""

    text: str
    session_id: str
    steps: int = Field(ge=0)
    usage: TokenUsage
    exit_code: int | None
    tool_calls: list[AgentToolCall]
    dropped_lines: int = Field(ge=0)


@dataclass(frozen=True)
class AgentResult:
    """What a finished execution produced (SPEC "AgentResult").

    Example::

        result = sbx.agent.run("add a test", spec=spec)
        sbx.agent.run("now run it", spec=spec, session_id=result.session_id)  # the same session
    """

    #: The last assistant text.
    text: str
    #: The session to continue with the ``session_id`` call option.
    session_id: str
    #: Number of steps.
    steps: int
    #: Tokens of the whole execution.
    usage: TokenUsage
    #: The runtime's exit code; None when a signal ended it or it never started.
    exit_code: int | None
    #: Tool calls in order (those beyond ``max_output_bytes`` are not kept).
    tool_calls: tuple[AgentToolCall, ...]
    #: Runtime output lines discarded: by sandboxd, and by the SDK beyond ``max_output_bytes``.
    dropped_lines: int


@dataclass(frozen=True)
class AgentFeedEvent:
    """One event of ``sbx.agent.events()`` (TypeScript's ``sbx.agent.events$``): the execution, the
    event's ``cursor`` in it (``sbx.agent.attach(execution_id, after=cursor)`` goes on after it), the event."""

    execution_id: str
    cursor: int
    event: AgentEvent


class ExecutionOutcome(_Wire):
    """How a listed execution ended."""

    type: Literal["done", "agent_failed"]
    reason: AgentFailureReason | None = None


class ExecutionLimits(_Wire):
    """The limits an execution was started with, as the wire carries them (milliseconds)."""

    timeout_ms: int
    max_steps: int
    max_total_tokens: int | None
    max_output_bytes: int


class ExecutionInfo(_Wire):
    """One execution as ``sbx.agent.executions()`` lists it."""

    execution_id: str
    runtime: Literal["runtime_a", "runtime_b"]
    #: The execution actor's state while it runs; ``ended`` after.
    state: str
    started_at: float
    steps: int
    total_tokens: int
    limits: ExecutionLimits
    #: The last event's type and reason once ended, else None.
    outcome: ExecutionOutcome | None


class ExecutionList(_Wire):
    """``sbx.agent.executions()``: the running execution's id (or None) and every one sandboxd knows."""

    current: str | None
    executions: list[ExecutionInfo]
