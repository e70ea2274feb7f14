"""What a handle asks a runtime for (the body of ``PUT /v1/agent/config``), mirroring the TypeScript SDK's
``sdk/agent-request.ts``: the spec as data and the runtime's own options (``protocol/agent-request.ts``),
named by the sha256 of its runtime, a newline and its text. sandboxd's runtime driver builds the runtime's configuration from it;
the SDK knows no configuration format.

The text is the JSON the TypeScript SDK's ``JSON.stringify`` gives for the same spec, so both SDKs write
the same request under the same hash: keys in JavaScript's order (whole-number keys first, ascending),
whole floats as integers, lone surrogates escaped."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final, Mapping, TypeVar

from .agent_permissions import AgentPermissions
from .agent_spec import AgentSpec
from .errors import InvalidArgumentException
from .mcp_servers import McpLocal

#: Largest instructions, in UTF-16 code units (JavaScript's ``length``).
MAX_INSTRUCTIONS: Final = 1024 * 1024
#: Largest request text, in UTF-16 code units.
MAX_AGENT_REQUEST: Final = 2 * 1024 * 1024

_ARRAY_INDEX: Final = re.compile(r"0|[1-9][0-9]{0,9}")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_V = TypeVar("_V")


def _js_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _is_index(key: str) -> bool:
    return _ARRAY_INDEX.fullmatch(key) is not None and int(key) < 2**32 - 1


def _js_object(mapping: Mapping[str, _V]) -> dict[str, _V]:
    """``mapping`` with its keys in the order a JavaScript object has them."""
    index = sorted((key for key in mapping if _is_index(key)), key=int)
    return {key: mapping[key] for key in [*index, *(key for key in mapping if not _is_index(key))]}


def _js_value(value: object) -> object:
    """A JSON value as JavaScript holds it: objects in its key order, whole floats as integers."""
    if isinstance(value, Mapping):
        return {key: _js_value(item) for key, item in _js_object(value).items()}
    if isinstance(value, (list, tuple)):
        return [_js_value(item) for item in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _permissions(value: AgentPermissions) -> dict[str, Any]:
    tools = {tool: rule if isinstance(rule, str) else dict(rule) for tool, rule in value.tools.items()}
    return {"default": value.default, "tools": tools}


def wire_spec(spec: AgentSpec) -> dict[str, Any]:
    """``spec`` as data (``WireAgentSpec``), keys in the TypeScript SDK's order."""
    m = spec.model
    model: dict[str, Any] = {"provider": m.provider, "id": m.id, "gateway": m.gateway}
    if m.region is not None:
        model["region"] = m.region
    if m.provider == "compatible":
        model["basePath"] = m.base_path
    model["promptCaching"] = m.prompt_caching
    wire: dict[str, Any] = {"model": model, "smallModel": spec.small_model}
    if spec.instructions is not None:
        wire["instructions"] = spec.instructions
    wire["permissions"] = _permissions(spec.permissions)
    agents: dict[str, Any] = {}
    for name, sub in _js_object(spec.agents).items():
        agents[name] = {"description": sub.description, "instructions": sub.instructions}
        if sub.model is not None:
            agents[name]["model"] = sub.model
        if sub.permissions is not None:
            agents[name]["permissions"] = _permissions(sub.permissions)
    wire["agents"] = agents
    mcp: dict[str, Any] = {}
    for name, server in _js_object(spec.mcp).items():
        if isinstance(server, McpLocal):
            mcp[name] = {"kind": "local", "command": list(server.command), "envs": _js_object(server.envs)}
            if server.timeout_seconds is not None:  # whole milliseconds, as McpLocal checked them
                mcp[name]["timeoutMs"] = round(server.timeout_seconds * 1000)
        else:
            mcp[name] = {"kind": "remote", "gateway": server.gateway, "path": server.path}
    wire["mcp"] = mcp
    if spec.raw_config is not None:
        wire["rawConfig"] = _js_value(spec.raw_config)
    return wire


def request_hash(runtime: str, text: str) -> str:
    """sha256 (hex) of the runtime's name, a newline and the request's text (``agentRequestHash``): one
    spec asked of two runtimes is two requests."""
    return hashlib.sha256(f"{runtime}\n{text}".encode()).hexdigest()


def agent_request_write(
    operation: str, runtime: str, spec: AgentSpec, options: Mapping[str, Any]
) -> dict[str, Any]:
    """The write of ``spec`` for ``runtime`` with the runtime's own ``options`` (runtime_b:
    ``entrypoint``), named by ``request_hash``: ``{"runtime", "hash", "text"}``.

    :raises InvalidArgumentException: when the instructions are over 1 MiB or the request over 2 MiB
    """
    if _js_length(spec.instructions or "") > MAX_INSTRUCTIONS:
        raise InvalidArgumentException(f"{operation}: spec: instructions are over 1 MiB", "spec.instructions")
    request = {"spec": wire_spec(spec), "options": _js_value(options)}
    text = json.dumps(request, separators=(",", ":"), ensure_ascii=False)
    # JSON.stringify writes a lone surrogate as an escape; Python would keep it (and not encode it).
    text = _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    if _js_length(text) > MAX_AGENT_REQUEST:
        raise InvalidArgumentException(f"{operation}: spec: the agent request is over 2 MiB", "spec")
    return {"runtime": runtime, "hash": request_hash(runtime, text), "text": text}
