"""``AgentLimits``: the bounds of one agent execution (SPEC "AgentLimits")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ._check import Checker, Path, check_int, expected, is_number, whole
from ._rules import (
    AGENT_MAX_OUTPUT_BYTES,
    AGENT_MAX_STEPS,
    AGENT_MAX_TOTAL_TOKENS,
    AGENT_TIMEOUT_MS,
    SANDBOX_MAX_TIMEOUT_MS,
)

_MAX_SAFE_INTEGER: Final = 2**53 - 1
_DEFAULT_TOKENS: Final = object()


def seconds_to_ms(check: Checker, path: Path, value: object, max_ms: int, cap: str = "") -> int:
    """A duration in seconds as whole milliseconds in ``1..max_ms`` (the TypeScript SDK's unit)."""
    if not is_number(value):
        check.add(path, expected("a number of seconds", value))
        return 0
    ms = float(value) * 1000  # type: ignore[arg-type]
    if abs(ms - round(ms)) > 1e-6 * max(1.0, abs(ms)):
        check.add(path, "must be a whole number of milliseconds")
        return 0
    if round(ms) < 1:
        check.add(path, "must be at least 0.001 (1 ms)")
        return 0
    if round(ms) > max_ms:
        check.add(path, f"must be at most {max_ms // 1000}{cap}")
        return 0
    return round(ms)


@dataclass(frozen=True, init=False)
class AgentLimits:
    """Deadline (``timeout_seconds``, default 600), step limit (``max_steps``, default 50), token budget
    checked after each step (``max_total_tokens``, default 1,000,000; None disables) and runtime output
    the SDK keeps (``max_output_bytes``, default 16 MiB; it stops nothing).

    Example: ``AgentLimits(timeout_seconds=120, max_total_tokens=None)``
    """

    timeout_seconds: float
    max_steps: int
    max_total_tokens: int | None
    max_output_bytes: int

    def __init__(
        self,
        timeout_seconds: float = AGENT_TIMEOUT_MS / 1000,
        max_steps: int = AGENT_MAX_STEPS,
        max_total_tokens: int | None | object = _DEFAULT_TOKENS,
        max_output_bytes: int = AGENT_MAX_OUTPUT_BYTES,
    ) -> None:
        check = Checker("AgentLimits")
        ms = seconds_to_ms(check, ("timeout_seconds",), timeout_seconds, SANDBOX_MAX_TIMEOUT_MS, " (the sandbox cap)")
        check_int(check, ("max_steps",), max_steps, 1, 100_000, high_rule="must be at most 100000 steps")
        tokens = AGENT_MAX_TOTAL_TOKENS if max_total_tokens is _DEFAULT_TOKENS else max_total_tokens
        if tokens is not None:
            cap = "must be at most 2**53-1 tokens"
            check_int(check, ("max_total_tokens",), tokens, 1, _MAX_SAFE_INTEGER, high_rule=cap)
        cap = "must be at most 4294967296 bytes"
        check_int(check, ("max_output_bytes",), max_output_bytes, 1, 2**32, high_rule=cap)
        check.done()
        object.__setattr__(self, "timeout_seconds", ms / 1000)
        object.__setattr__(self, "max_steps", whole(max_steps))
        object.__setattr__(self, "max_total_tokens", None if tokens is None else whole(tokens))
        object.__setattr__(self, "max_output_bytes", whole(max_output_bytes))

    @property
    def timeout_ms(self) -> int:
        """The deadline in milliseconds, as the wire and the TypeScript SDK carry it."""
        return round(self.timeout_seconds * 1000)
