"""``IdlePolicy``: when a sandbox suspends itself and whether calls resume it (SPEC "States")."""

from __future__ import annotations

from dataclasses import dataclass

from ._check import Checker, check_bool, check_int, whole
from ._rules import IDLE_SECONDS, SANDBOX_MAX_TIMEOUT_MS

_MAX_IDLE = SANDBOX_MAX_TIMEOUT_MS // 1000


@dataclass(frozen=True, init=False)
class IdlePolicy:
    """Suspend after ``max_idle_seconds`` without traffic (default 300, at most 28800, the sandbox cap);
    with ``auto_resume`` (default True), any SDK call on a suspended sandbox resumes it first.

    Example: ``IdlePolicy(max_idle_seconds=60, auto_resume=False)``
    """

    #: Seconds without traffic before auto-suspend.
    max_idle_seconds: int
    #: Whether an SDK call resumes a suspended sandbox.
    auto_resume: bool

    def __init__(self, max_idle_seconds: int = IDLE_SECONDS, auto_resume: bool = True) -> None:
        check = Checker("IdlePolicy")
        cap = f"must be at most {_MAX_IDLE} (the sandbox cap)"
        if check_int(check, ("max_idle_seconds",), max_idle_seconds, 1, _MAX_IDLE, high_rule=cap):
            object.__setattr__(self, "max_idle_seconds", whole(max_idle_seconds))
        check_bool(check, ("auto_resume",), auto_resume)
        check.done()
        object.__setattr__(self, "auto_resume", auto_resume)
