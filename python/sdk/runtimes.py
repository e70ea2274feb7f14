"""Agent runtimes (SPEC "Runtimes"): ``runtime_a`` (the default) and ``runtime_b`` (graph-based,
optionally built by a user ``entrypoint``), and the spec rules that depend on which one runs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, Union

from ._check import Checker, check_string, raise_issues
from .agent_permissions import AgentPermissions
from .agent_spec import AgentSpec
from .pool_config import RuntimeName

#: Tools runtime_b has; only ``bash`` takes patterns there.
RUNTIME_B_TOOLS: Final = ("read", "edit", "list", "glob", "grep", "bash", "task", "todowrite")

_ENTRYPOINT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_$][A-Za-z0-9_$]*")


@dataclass(frozen=True, init=False)
class RuntimeB:
    """runtime_b with an optional ``entrypoint`` (``package.module:build``) imported from the working
    directory; the built-in graph when None.

    Example: ``sbx.agent.run("fix the tests", spec=spec, runtime=RuntimeB(entrypoint="agent.graph:build"))``
    """

    name: Literal["runtime_b"]
    entrypoint: str | None

    def __init__(self, entrypoint: str | None = None) -> None:
        check = Checker("RuntimeB")
        if entrypoint is not None:
            check_string(check, ("entrypoint",), entrypoint, _ENTRYPOINT, "must be package.module:function")
        check.done()
        object.__setattr__(self, "name", "runtime_b")
        object.__setattr__(self, "entrypoint", entrypoint)


#: What the ``runtime`` call option accepts.
RuntimeChoice = Union[RuntimeName, RuntimeB]


def _permission_problems(permissions: AgentPermissions, at: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    problems = []
    for tool, rule in permissions.tools.items():
        if tool not in RUNTIME_B_TOOLS:
            problems.append(((*at, "tools", tool), f"runtime_b has no such tool (it has {', '.join(RUNTIME_B_TOOLS)})"))
        elif not isinstance(rule, str) and tool != "bash":
            problems.append(((*at, "tools", tool), "only bash accepts patterns with runtime_b"))
    return problems


def check_spec_for_runtime(spec: AgentSpec, runtime: RuntimeChoice) -> None:
    """Checks the parts of a spec that depend on the runtime, before any call: runtime_b has no ``mcp``
    or ``raw_config``, only its eight tools, and patterns only for ``bash``.

    Raises ``InvalidArgumentException`` naming the first offending field.
    """
    name = runtime.name if isinstance(runtime, RuntimeB) else runtime
    if name != "runtime_b":
        return
    problems: list[tuple[tuple[str, ...], str]] = []
    if spec.mcp:
        problems.append((("mcp",), "is not supported by runtime_b"))
    if spec.raw_config is not None:
        problems.append((("raw_config",), "is not supported by runtime_b"))
    problems.extend(_permission_problems(spec.permissions, ("permissions",)))
    for agent, sub in spec.agents.items():
        if sub.permissions is not None:
            problems.extend(_permission_problems(sub.permissions, ("agents", agent, "permissions")))
    if problems:
        raise_issues("AgentSpec", [(path, message, "invalid_argument") for path, message in problems])


def entrypoint_of(runtime: RuntimeChoice) -> str | None:
    """The ``entrypoint`` of a runtime choice (RuntimeB's), if any."""
    return runtime.entrypoint if isinstance(runtime, RuntimeB) else None
