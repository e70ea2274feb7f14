"""The cross-language parity corpus (``test/parity/corpus.json``, recorded from the built TypeScript SDK
by ``test/parity/generate-corpus.mjs``): every case must give the same outcome in Python — accepted, or
the same exception class (``…Error`` becomes ``…Exception``), the same field in snake_case and the same
code — and a gateway must be built the same (upstream, headers, allow rules, rate, preset binding)."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

import pytest
from conftest import REPO

import sdk
from sdk import (
    AgentLimits,
    AgentModel,
    AgentPermissions,
    AgentSpec,
    AgentTemplate,
    IdlePolicy,
    InvalidArgumentException,
    McpLocal,
    McpRemote,
    PoolConfig,
    RuntimeB,
    S3Prefix,
    SdkException,
    SecretGateway,
    SecretRef,
    SubAgent,
    agent_pool_warmup,
    check_spec_for_runtime,
)

CORPUS: list[dict[str, Any]] = json.loads((REPO / "test" / "parity" / "corpus.json").read_text())["cases"]

# TypeScript option -> Python keyword, per type. Only these top-level keys are renamed: the keys inside
# map-like options (headers, tools, envs, agents, mcp, raw_config) are data and stay as they are.
RATE = {"ratePerMinute": "rate_per_minute"}
OPTIONS: dict[str, dict[str, str]] = {
    "SecretRef": {"name": "name", "region": "region"},
    "SecretGateway": {"upstream": "upstream", "headers": "headers", "allow": "allow", **RATE},
    "IdlePolicy": {"maxIdleSeconds": "max_idle_seconds", "autoResume": "auto_resume"},
    "S3Prefix": {"bucket": "bucket", "prefix": "prefix", "name": "name", "region": "region", "endpoint": "endpoint"},
    "PoolConfig": {
        "size": "size",
        "template": "template",
        "allowInternetAccess": "allow_internet_access",
        "warmup": "warmup",
    },
    "agentPoolWarmup": {"runtime": "runtime"},
    "AgentModel": {
        "provider": "provider",
        "id": "id",
        "gateway": "gateway",
        "region": "region",
        "basePath": "base_path",
        "promptCaching": "prompt_caching",
    },
    "AgentLimits": {
        "timeoutMs": "timeout_seconds",
        "maxSteps": "max_steps",
        "maxTotalTokens": "max_total_tokens",
        "maxOutputBytes": "max_output_bytes",
    },
    "AgentPermissions": {"default": "default", "tools": "tools"},
    "SubAgent": {
        "description": "description",
        "instructions": "instructions",
        "model": "model",
        "permissions": "permissions",
    },
    "McpLocal": {"command": "command", "envs": "envs", "timeoutMs": "timeout_seconds"},
    "McpRemote": {"gateway": "gateway", "path": "path"},
    "RuntimeB": {"entrypoint": "entrypoint"},
    "AgentSpec": {
        "model": "model",
        "smallModel": "small_model",
        "instructions": "instructions",
        "permissions": "permissions",
        "agents": "agents",
        "mcp": "mcp",
        "rawConfig": "raw_config",
        "runtimeVersion": "runtime_version",
    },
    "checkSpecForRuntime": {"spec": "spec", "runtime": "runtime"},
    "AgentTemplate": {
        "name": "name",
        "base": "base",
        "memoryMb": "memory_mb",
        "runtimeB": "runtime_b",
        "prefetch": "prefetch",
        "kernelWarmup": "kernel_warmup",
    },
}
PRESETS = ("A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K")
for letter in PRESETS:
    OPTIONS[f"vendor{letter}Gateway"] = {"secret": "secret", "region": "region", "models": "models", **RATE}
    OPTIONS[f"vendor{letter}Gateway"].update(resource="resource", upstream="upstream", basePath="base_path")
OPTIONS["compatibleGateway"] = {"secret": "secret", "upstream": "upstream", "basePath": "base_path", **RATE}

BUILDERS: dict[str, Callable[..., object]] = {
    "SecretRef": SecretRef,
    "SecretGateway": SecretGateway,
    "IdlePolicy": IdlePolicy,
    "S3Prefix": S3Prefix,
    "PoolConfig": PoolConfig,
    "agentPoolWarmup": agent_pool_warmup,
    "AgentModel": AgentModel,
    "AgentLimits": AgentLimits,
    "AgentPermissions": AgentPermissions,
    "SubAgent": SubAgent,
    "McpLocal": McpLocal,
    "McpRemote": McpRemote,
    "RuntimeB": RuntimeB,
    "AgentSpec": AgentSpec,
    "checkSpecForRuntime": check_spec_for_runtime,
    "AgentTemplate": AgentTemplate,
    "compatibleGateway": sdk.compatible_gateway,
    **{f"vendor{x}Gateway": getattr(sdk, f"vendor_{x.lower()}_gateway") for x in PRESETS},
}
FIELD_NAMES = {ts: py for table in OPTIONS.values() for ts, py in table.items()}


def decode(value: Any) -> Any:
    """Builds the SDK instances the corpus's markers (``{"$AgentModel": {...}}``) stand for."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (key, inner), = value.items()
        if key == "$agentPoolWarmup":
            return agent_pool_warmup(inner)
        if key.startswith("$"):
            return BUILDERS[key[1:]](**python_options(key[1:], inner))
    return {k: decode(v) for k, v in value.items()}


def python_options(type_name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the Python call: names from ``OPTIONS``, milliseconds as seconds."""
    out = {}
    for key, value in options.items():
        if key == "timeoutMs" and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = value / 1000
        out[OPTIONS[type_name][key]] = decode(value)
    return out


def python_field(field: str | None) -> str | None:
    """``ratePerMinute`` -> ``rate_per_minute``, ``rawConfig.model`` -> ``raw_config.model``: only the
    first segment is an option name."""
    if field is None:
        return None
    found = re.match(r"[A-Za-z]+", field)
    if found is None:
        return field
    return FIELD_NAMES.get(found.group(0), found.group(0)) + field[found.end() :]


def encode_source(source: object) -> object:
    if isinstance(source, SecretRef):
        return {"$SecretRef": {"name": source.name, "region": source.region}}
    return source


def built_of(value: SecretGateway) -> dict[str, Any]:
    binding = value.preset
    return {
        "upstream": value.upstream,
        "headers": {name: encode_source(source) for name, source in value.headers.items()},
        "allow": [list(rule) for rule in value.allow],
        "ratePerMinute": value.rate_per_minute,
        "preset": None
        if binding is None
        else {
            "preset": binding.preset,
            "provider": binding.provider,
            "basePath": binding.base_path,
            "models": None if binding.models is None else list(binding.models),
        },
    }


def test_the_corpus_is_large_and_covers_every_type() -> None:
    assert len(CORPUS) >= 500
    assert {case["type"] for case in CORPUS} == set(BUILDERS)
    for type_name in BUILDERS:
        outcomes = [case["outcome"] == "ok" for case in CORPUS if case["type"] == type_name]
        assert any(outcomes) and not all(outcomes), type_name


@pytest.mark.parametrize("case", CORPUS, ids=[f"{i}-{c['type']}" for i, c in enumerate(CORPUS)])
def test_python_gives_the_recorded_outcome(case: dict[str, Any]) -> None:
    call = BUILDERS[case["type"]]
    outcome = case["outcome"]
    if outcome == "ok":
        kwargs = python_options(case["type"], case["options"])
        value = call(**kwargs)
        if "built" in case:
            assert isinstance(value, SecretGateway)
            assert built_of(value) == case["built"]
        return
    with pytest.raises(SdkException) as caught:
        call(**python_options(case["type"], case["options"]))
    error = caught.value
    assert type(error).__name__ == outcome["error"].replace("Error", "Exception")
    assert isinstance(error, InvalidArgumentException)
    assert error.field == python_field(outcome["field"])
    assert error.code == outcome["code"]
