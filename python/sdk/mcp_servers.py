"""MCP servers of an agent (SPEC "AgentSpec", ``mcp``; runtime_a only): ``McpLocal`` runs as a child
process in the sandbox, ``McpRemote`` is reached only through a gateway route."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Mapping, Sequence, Union

from ._check import Checker, check_list, check_mapping, check_string, expected, items
from ._paths import request_path_problem
from ._rules import ENV_NAME, ENV_NAME_RULE, ROUTE_NAME, ROUTE_RULE
from .agent_limits import seconds_to_ms


@dataclass(frozen=True, init=False)
class McpLocal:
    """A local MCP server: an argument list (``command``) run without a shell. Its ``envs`` are written
    to the runtime configuration, readable by the sandbox user, so they must never hold credentials.
    ``timeout_seconds`` is its start-up time-out (the runtime's default when None; at most 3600).

    Example: ``McpLocal(["node", "tools/mcp.js"], envs={"LOG_LEVEL": "warn"})``
    """

    kind: Literal["local"]
    command: tuple[str, ...]
    envs: Mapping[str, str]
    timeout_seconds: float | None

    def __init__(
        self, command: Sequence[str], envs: Mapping[str, str] | None = None, timeout_seconds: float | None = None
    ) -> None:
        check = Checker("McpLocal")
        if check_list(check, ("command",), command):
            for i, arg in enumerate(command):
                if not isinstance(arg, str):
                    check.add(("command", i), expected("a string", arg))
                elif "\0" in arg:
                    check.add(("command", i), "must not contain NUL")
                elif arg == "":
                    check.add(("command", i), "must not be empty")
            if len(command) == 0:
                check.add(("command",), "must name a program")
        envs = {} if envs is None else envs
        if check_mapping(check, ("envs",), envs):
            for name, value in items(envs):
                if ENV_NAME.fullmatch(name) is None:
                    check.add(("envs", name), ENV_NAME_RULE)
                elif not isinstance(value, str):
                    check.add(("envs", name), expected("a string", value))
                elif "\0" in value:
                    check.add(("envs", name), "must not contain NUL")
        ms = None if timeout_seconds is None else seconds_to_ms(check, ("timeout_seconds",), timeout_seconds, 3_600_000)
        check.done()
        object.__setattr__(self, "kind", "local")
        object.__setattr__(self, "command", tuple(command))
        object.__setattr__(self, "envs", MappingProxyType(dict(envs)))
        object.__setattr__(self, "timeout_seconds", None if ms is None else ms / 1000)


@dataclass(frozen=True, init=False)
class McpRemote:
    """A remote MCP server behind a gateway route (``gateway``) that is also in the sandbox's
    ``gateways``, at ``path`` on it (default ``/``).

    Example: ``McpRemote("docs-mcp", path="/mcp")``
    """

    kind: Literal["remote"]
    gateway: str
    path: str

    def __init__(self, gateway: str, path: str = "/") -> None:
        check = Checker("McpRemote")
        check_string(check, ("gateway",), gateway, ROUTE_NAME, f"must be a route name: {ROUTE_RULE}")
        if check_string(check, ("path",), path):
            problem = request_path_problem(path)
            if problem is not None:
                check.add(("path",), problem)
        check.done()
        object.__setattr__(self, "kind", "remote")
        object.__setattr__(self, "gateway", gateway)
        object.__setattr__(self, "path", path)


#: Either kind of MCP server.
McpServer = Union[McpLocal, McpRemote]
