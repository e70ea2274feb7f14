"""``AgentSpec``: everything an agent execution needs but the prompt (SPEC "AgentSpec")."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Mapping

from ._check import Checker, check_mapping, check_string, expected, items, printable_text
from ._rules import AGENT_NAME, AGENT_NAME_RULE, RESERVED_RAW_CONFIG_KEYS, RESERVED_SUBAGENT_NAME
from .agent_model import AgentModel
from .agent_permissions import AgentPermissions
from .mcp_servers import McpLocal, McpRemote, McpServer
from .sub_agent import SubAgent

_MODEL_ID: Final = printable_text(256)
_VERSION: Final = printable_text(128)


def _is_json(value: object) -> bool:
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_is_json(item) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _check_named(
    check: Checker, field: str, value: object, kinds: tuple[type, ...], what: str, reserved: str = ""
) -> None:
    if not check_mapping(check, (field,), value):
        return
    before = check.count()
    for name, item in items(value):
        if not isinstance(item, kinds):
            check.add((field, name), f"must be {what}")
    if check.count() > before:
        return
    for name, _ in items(value):
        if AGENT_NAME.fullmatch(name) is None:
            check.add((field, name), f"is not a name: {AGENT_NAME_RULE}")
        elif name == reserved:
            check.add((field, name), f"the name {name} is reserved")


@dataclass(frozen=True, init=False)
class AgentSpec:
    """Model, instructions, permissions, subagents (``agents``; the name ``build`` is reserved), MCP
    servers (``mcp``, runtime_a only), extra runtime_a configuration (``raw_config``, without the
    reserved keys) and ``runtime_version`` (validated as text only). It has no credential field.

    Example::

        spec = AgentSpec(AgentModel("vendor_b", "m", "llm"))
        spec.gateway_names()  # ["llm"]
    """

    model: AgentModel
    #: Model for titles and summaries (default: ``model.id``).
    small_model: str
    instructions: str | None
    permissions: AgentPermissions
    agents: Mapping[str, SubAgent]
    mcp: Mapping[str, McpServer]
    raw_config: Mapping[str, Any] | None
    runtime_version: str | None

    def __init__(
        self,
        model: AgentModel,
        *,
        small_model: str | None = None,
        instructions: str | None = None,
        permissions: AgentPermissions | None = None,
        agents: Mapping[str, SubAgent] | None = None,
        mcp: Mapping[str, McpServer] | None = None,
        raw_config: Mapping[str, Any] | None = None,
        runtime_version: str | None = None,
    ) -> None:
        check = Checker("AgentSpec")
        if not isinstance(model, AgentModel):
            check.add(("model",), expected("an AgentModel", model))
        if small_model is not None:
            check_string(check, ("small_model",), small_model, _MODEL_ID, "must be a model id of 1-256 characters")
        if instructions is not None:
            check_string(check, ("instructions",), instructions)
        if permissions is not None and not isinstance(permissions, AgentPermissions):
            check.add(("permissions",), expected("an AgentPermissions", permissions))
        agents = {} if agents is None else agents
        mcp = {} if mcp is None else mcp
        _check_named(check, "agents", agents, (SubAgent,), "a SubAgent", RESERVED_SUBAGENT_NAME)
        _check_named(check, "mcp", mcp, (McpLocal, McpRemote), "an McpLocal or McpRemote")
        if raw_config is not None and check_mapping(check, ("raw_config",), raw_config):
            bad = [key for key, value in items(raw_config) if not _is_json(value)]
            for key in bad:
                check.add(("raw_config", key), "must be a JSON value")
            if not bad:
                for key in RESERVED_RAW_CONFIG_KEYS:
                    if key in raw_config:
                        check.add(("raw_config", key), "is a reserved key")
        if runtime_version is not None:
            rule = "must be 1-128 characters without control characters"
            check_string(check, ("runtime_version",), runtime_version, _VERSION, rule)
        check.done()
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "small_model", model.id if small_model is None else small_model)
        object.__setattr__(self, "instructions", instructions)
        object.__setattr__(self, "permissions", permissions or AgentPermissions(default="allow"))
        object.__setattr__(self, "agents", MappingProxyType(dict(agents)))
        object.__setattr__(self, "mcp", MappingProxyType(dict(mcp)))
        frozen = None if raw_config is None else MappingProxyType(copy.deepcopy(dict(raw_config)))
        object.__setattr__(self, "raw_config", frozen)
        object.__setattr__(self, "runtime_version", runtime_version)

    def gateway_names(self) -> list[str]:
        """Every gateway the spec needs: the model's, then each ``McpRemote``'s, without repeats."""
        remote = [server.gateway for server in self.mcp.values() if isinstance(server, McpRemote)]
        return list(dict.fromkeys([self.model.gateway, *remote]))
