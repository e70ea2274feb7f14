"""``AgentPermissions``: what the agent's tools may do (SPEC "AgentPermissions"). Not a security boundary:
the boundary is the microVM plus closed egress."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal, Mapping, Union

from ._check import Checker, check_mapping, items, printable_text

#: A permission action; ``ask`` is not supported (no one is there to answer).
PermissionAction = Literal["allow", "deny"]
#: A tool's rule: one action, or a mapping of pattern to action (the last matching pattern wins).
ToolPermission = Union[PermissionAction, Mapping[str, PermissionAction]]
#: Tools denied unless a tools entry says otherwise.
DENIED_BY_DEFAULT: Final = ("question", "webfetch", "websearch")

_ACTIONS: Final = ("allow", "deny")
_TOOL: Final = re.compile(r"[A-Za-z0-9_.*-]{1,128}")
_PATTERN: Final = printable_text(1024)
# A whole number as a key moves ahead of every other key in the JSON the runtime reads.
_WHOLE_NUMBER: Final = re.compile(r"0|[1-9][0-9]*")
_RULE: Final = "must be allow or deny, or patterns to allow or deny (ask is not supported)"


def _rule_ok(rule: object) -> bool:
    if isinstance(rule, str):
        return rule in _ACTIONS
    if not isinstance(rule, Mapping):
        return False
    return all(
        isinstance(k, str) and _PATTERN.fullmatch(k) is not None and isinstance(v, str) and v in _ACTIONS
        for k, v in rule.items()
    )


@dataclass(frozen=True, init=False)
class AgentPermissions:
    """Default action (``allow`` or ``deny``) plus per-tool rules.

    Example: ``AgentPermissions(default="allow", tools={"bash": {"*": "deny", "git *": "allow"}})``
    """

    default: PermissionAction
    tools: Mapping[str, ToolPermission]

    def __init__(self, default: PermissionAction = "allow", tools: Mapping[str, ToolPermission] | None = None) -> None:
        check = Checker("AgentPermissions")
        if default not in _ACTIONS:
            check.add(("default",), "must be allow or deny (ask is not supported)")
        tools = {} if tools is None else tools
        if check_mapping(check, ("tools",), tools):
            before = check.count()
            for tool, rule in items(tools):
                if _TOOL.fullmatch(tool) is None:
                    check.add(("tools", tool), "tool name must be 1-128 characters [A-Za-z0-9_.*-]")
                elif not _rule_ok(rule):
                    check.add(("tools", tool), _RULE)
            if check.count() == before:
                for tool, rule in items(tools):
                    keys = list(rule) if isinstance(rule, Mapping) else []
                    numeric = next((k for k in [tool, *keys] if _WHOLE_NUMBER.fullmatch(k)), None)
                    if numeric is not None:
                        what = "tool name" if numeric == tool else "pattern"
                        check.add(("tools", tool), f"{what} must not be a whole number (key order would change)")
        check.done()
        object.__setattr__(self, "default", default)
        frozen = {t: r if isinstance(r, str) else MappingProxyType(dict(r)) for t, r in tools.items()}
        object.__setattr__(self, "tools", MappingProxyType(frozen))

    def effective_tools(self) -> Mapping[str, ToolPermission]:
        """The rules in force: ``question``, ``webfetch`` and ``websearch`` denied unless ``tools`` names
        them."""
        denied: dict[str, ToolPermission] = {tool: "deny" for tool in DENIED_BY_DEFAULT}
        return MappingProxyType({**denied, **self.tools})
