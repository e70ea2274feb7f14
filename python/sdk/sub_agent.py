"""``SubAgent``: a named helper agent the primary agent can delegate to (SPEC "AgentSpec", ``agents``)."""

from __future__ import annotations

from dataclasses import dataclass

from ._check import Checker, check_string, expected, printable_text
from .agent_permissions import AgentPermissions


@dataclass(frozen=True, init=False)
class SubAgent:
    """A subagent: what it is for (``description``), its ``instructions``, and optionally its own model id
    (on the spec's gateway) and ``permissions`` (the spec's when None).

    Example: ``SubAgent("Reviews diffs", "Review the change; never edit.")``
    """

    description: str
    instructions: str
    model: str | None
    permissions: AgentPermissions | None

    def __init__(
        self, description: str, instructions: str, model: str | None = None, permissions: AgentPermissions | None = None
    ) -> None:
        check = Checker("SubAgent")
        rule = "must be 1-1024 characters without control characters"
        check_string(check, ("description",), description, printable_text(1024), rule)
        check_string(check, ("instructions",), instructions)
        if model is not None:
            check_string(check, ("model",), model, printable_text(256), "must be a model id of 1-256 characters")
        if permissions is not None and not isinstance(permissions, AgentPermissions):
            check.add(("permissions",), expected("an AgentPermissions", permissions))
        check.done()
        object.__setattr__(self, "description", description)
        object.__setattr__(self, "instructions", instructions)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "permissions", permissions)
