"""The runtime configuration of one spec on one sandbox: the body of ``PUT /v1/agent/config``, as the
TypeScript SDK builds it (``sdk/agent-config.ts``, ``runtime-drivers/runtime-a/*.ts``,
``runtime-drivers/runtime-b/config.ts``), so both SDKs write the same text under the same hash.

runtime_a's text is the JSON opencode reads from ``OPENCODE_CONFIG_CONTENT``: one provider pointed at the
model's gateway listener with no credential, permissions with SPEC's defaults and no ``ask``, subagents,
MCP servers, ``raw_config`` without reserved, pinned or credential keys. runtime_b's is the runner's JSON.
No credential anywhere: the gateway injects the key."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final, Mapping

from ._rules import RESERVED_RAW_CONFIG_KEYS
from .agent_permissions import DENIED_BY_DEFAULT, AgentPermissions
from .agent_spec import AgentSpec
from .errors import InvalidArgumentException
from .mcp_servers import McpLocal


@dataclass(frozen=True)
class OpencodeProvider:
    """How opencode reaches one of our providers through a loopback listener (``providers.ts``)."""

    id: str
    npm: str
    url_option: str
    base_path: str
    placeholder_key_env: str | None


#: Our provider token to opencode's provider (``runtime-drivers/runtime-a/providers.ts``).
OPENCODE_PROVIDERS: Final[Mapping[str, OpencodeProvider]] = {
    "vendor_a": OpencodeProvider("amazon-bedrock", "@ai-sdk/amazon-bedrock", "endpoint", "", "AWS_BEARER_TOKEN_BEDROCK"),
    "vendor_b": OpencodeProvider("anthropic", "@ai-sdk/anthropic", "baseURL", "/v1", "ANTHROPIC_API_KEY"),
    "vendor_c": OpencodeProvider("openai", "@ai-sdk/openai", "baseURL", "/v1", "OPENAI_API_KEY"),
    "vendor_d": OpencodeProvider("google", "@ai-sdk/google", "baseURL", "/v1beta", "GOOGLE_GENERATIVE_AI_API_KEY"),
    "vendor_e": OpencodeProvider("azure", "@ai-sdk/azure", "baseURL", "/vendor_c/v1", "AZURE_API_KEY"),
    "compatible": OpencodeProvider("gateway", "@ai-sdk/openai-compatible", "baseURL", "", None),
}

#: The non-secret key some provider packages need to start; the gateway drops it.
PLACEHOLDER_KEY: Final = "sdk-placeholder"
#: Where configuration files are written in the sandbox.
AGENT_CONFIG_DIR: Final = "/run/agent"
#: The permission keys of opencode 1.18.33, each written out (none falls back to ``ask``).
OPENCODE_PERMISSION_KEYS: Final = (
    "read", "edit", "glob", "grep", "list", "bash", "task", "external_directory", "todowrite",
    "question", "webfetch", "websearch", "lsp", "doom_loop", "skill",
)  # fmt: skip
_PINNED_KEYS: Final = ("auth", "lsp", "formatter")
_CREDENTIAL_SUFFIXES: Final = (
    "apikey", "token", "secret", "password", "passwd", "credential", "credentials", "authorization",
    "cookie", "accesskey", "accesskeyid", "privatekey",
)  # fmt: skip
_MAX_TEXT: Final = 1024 * 1024


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def config_hash(text: str, files: list[dict[str, str]]) -> str:
    """sha256 over the text and each file's path and content (``runtime-drivers/config-hash.ts``)."""
    digest = hashlib.sha256(text.encode())
    for file in files:
        digest.update(f"\0{file['path']}\0{file['content']}".encode())
    return digest.hexdigest()


def instructions_path(instructions: str | None) -> str:
    """Where the instructions are written: named by the first 16 hex digits of their sha256."""
    digest = hashlib.sha256((instructions or "").encode()).hexdigest()
    return f"{AGENT_CONFIG_DIR}/instructions-{digest[:16]}.md"


def _is_credential_key(key: str) -> bool:
    folded = re.sub(r"[-_.\s]", "", key.lower())
    return folded in ("auth", "headers") or any(folded.endswith(s) for s in _CREDENTIAL_SUFFIXES)


def _scrub(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [_scrub(item) for item in value]
    if isinstance(value, Mapping):
        return {k: _scrub(v) for k, v in value.items() if not _is_credential_key(k)}
    return value


def _raw_kept(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    return {
        key: _scrub(value)
        for key, value in (raw or {}).items()
        if key not in RESERVED_RAW_CONFIG_KEYS and key not in _PINNED_KEYS and not _is_credential_key(key)
    }


def _rule(rule: object) -> object:
    return rule if isinstance(rule, str) else dict(rule)  # type: ignore[call-overload]


def opencode_permissions(permissions: AgentPermissions) -> dict[str, object]:
    """opencode's ``permission`` object: ``*`` first, every known key with its default, then the
    caller's entries in order (last match wins)."""
    wildcard = permissions.tools.get("*")
    base = wildcard if isinstance(wildcard, str) else permissions.default
    out: dict[str, object] = {"*": base if wildcard is None else _rule(wildcard)}
    for key in OPENCODE_PERMISSION_KEYS:
        out[key] = "deny" if key in DENIED_BY_DEFAULT else base
    for tool, rule in permissions.tools.items():
        if tool == "*":
            continue
        out.pop(tool, None)
        out[tool] = _rule(rule)
    return out


def _permissions_json(permissions: AgentPermissions) -> dict[str, object]:
    return {"default": permissions.default, "tools": {t: _rule(r) for t, r in permissions.tools.items()}}


def _listeners(spec: AgentSpec, ports: Mapping[str, int]) -> dict[str, str]:
    return {name: f"http://127.0.0.1:{ports[name]}" for name in spec.gateway_names() if name in ports}


def _write(operation: str, runtime: str, text: str, files: list[dict[str, str]], env: dict[str, str]) -> dict[str, Any]:
    if any(len(f["content"]) > _MAX_TEXT for f in files):
        raise InvalidArgumentException(f"{operation}: spec: instructions are over 1 MiB", "spec.instructions")
    if len(text) > _MAX_TEXT:
        raise InvalidArgumentException(f"{operation}: spec: the runtime configuration is over 1 MiB", "spec")
    return {"runtime": runtime, "hash": config_hash(text, files), "text": text, "files": files, "env": env}


def runtime_a_config_write(
    operation: str, spec: AgentSpec, ports: Mapping[str, int], model: str | None = None
) -> dict[str, Any]:
    """runtime_a's configuration write for ``spec``: ``ports`` maps each gateway the spec needs to its
    listener's port (checked before); ``model`` is the call's other model id, declared too."""
    m = spec.model
    provider = OPENCODE_PROVIDERS[m.provider]
    listeners = _listeners(spec, ports)
    files = [] if spec.instructions is None else [{"path": instructions_path(spec.instructions), "content": spec.instructions}]
    base_path = m.base_path if m.provider == "compatible" else provider.base_path
    options: dict[str, object] = {provider.url_option: f"{listeners[m.gateway]}{base_path}"}
    if m.provider == "vendor_a":
        options["region"] = m.region
    ids = [m.id, spec.small_model, *(sub.model for sub in spec.agents.values()), *([] if model is None else [model])]
    models = {i: {"tool_call": True} for i in dict.fromkeys(i for i in ids if i is not None)}
    agents: dict[str, object] = {}
    for name, sub in spec.agents.items():
        agents[name] = {
            "mode": "subagent",
            "description": sub.description,
            "prompt": sub.instructions,
            "model": f"{provider.id}/{sub.model or m.id}",
            **({} if sub.permissions is None else {"permission": opencode_permissions(sub.permissions)}),
        }
    mcp: dict[str, object] = {}
    for name, server in spec.mcp.items():
        if isinstance(server, McpLocal):
            timeout = None if server.timeout_seconds is None else round(server.timeout_seconds * 1000)
            mcp[name] = {
                "type": "local",
                "command": list(server.command),
                "environment": dict(server.envs),
                "enabled": True,
                **({} if timeout is None else {"timeout": timeout}),
            }
        else:
            mcp[name] = {"type": "remote", "url": f"{listeners[server.gateway]}{server.path}", "enabled": True, "oauth": False}
    raw = _raw_kept(spec.raw_config)
    config: dict[str, object] = {
        **raw,
        "provider": {provider.id: {"npm": provider.npm, "options": options, "models": models}},
        "enabled_providers": [provider.id],
        "model": f"{provider.id}/{m.id}",
        "small_model": f"{provider.id}/{spec.small_model}",
        "instructions": [f["path"] for f in files],
        "permission": opencode_permissions(spec.permissions),
        "agent": agents,
        "mcp": mcp,
        "autoupdate": False,
        "share": "disabled",
        "lsp": False,
        "formatter": False,
    }
    if "snapshot" not in raw:
        config["snapshot"] = False
    env = {} if provider.placeholder_key_env is None else {provider.placeholder_key_env: PLACEHOLDER_KEY}
    return _write(operation, "runtime_a", _json(config), files, env)


def runtime_b_config_write(
    operation: str, spec: AgentSpec, ports: Mapping[str, int], entrypoint: str | None
) -> dict[str, Any]:
    """runtime_b's configuration write: the runner's JSON with the model pointed at its listener."""
    m = spec.model
    base_path = m.base_path if m.provider == "compatible" else OPENCODE_PROVIDERS[m.provider].base_path
    listener = _listeners(spec, ports)[m.gateway]
    subagents: dict[str, object] = {}
    for name, sub in spec.agents.items():
        subagents[name] = {
            "description": sub.description,
            "instructions": sub.instructions,
            **({} if sub.model is None else {"model": sub.model}),
            **({} if sub.permissions is None else {"permissions": _permissions_json(sub.permissions)}),
        }
    config: dict[str, object] = {
        "model": {
            "provider": m.provider,
            "id": m.id,
            "baseURL": f"{listener}{base_path}",
            **({} if m.region is None else {"region": m.region}),
        },
        "smallModel": spec.small_model,
        **({} if spec.instructions is None else {"instructions": spec.instructions}),
        "permissions": _permissions_json(spec.permissions),
        "subagents": subagents,
        **({} if entrypoint is None else {"entrypoint": entrypoint}),
    }
    return _write(operation, "runtime_b", _json(config), [], {})
