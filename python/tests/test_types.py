"""What the parity corpus cannot say: Python-only behaviour of the value types (immutability, keyword
errors, None as "absent", helpers) and that no message ever carries a value."""

from __future__ import annotations

import dataclasses

import pytest

from sdk import (
    AgentLimits,
    AgentModel,
    AgentPermissions,
    AgentSpec,
    IdlePolicy,
    InvalidArgumentException,
    McpLocal,
    McpRemote,
    S3Prefix,
    SecretGateway,
    SecretRef,
)
from sdk._check import Checker
from sdk.secret_gateway import check_gateway_map


def gateway(**extra: object) -> SecretGateway:
    options: dict[str, object] = {
        "upstream": "https://api.example",
        "headers": {"x-api-key": "k"},
        "allow": [("POST", "/v1/messages")],
        **extra,
    }
    return SecretGateway(**options)  # type: ignore[arg-type]


def test_types_are_immutable_and_keep_names_never_values() -> None:
    g = gateway(headers={"x-api-key": "llm-key", "authorization": SecretRef("other", region="eu-west-1")})
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.upstream = "https://other.example"  # type: ignore[misc]
    with pytest.raises(TypeError):
        g.headers["x"] = "y"  # type: ignore[index]
    assert g.effective_rate_per_minute == 600 and g.preset is None
    assert gateway(rate_per_minute=60).effective_rate_per_minute == 60


def test_unknown_and_missing_keywords_are_type_errors_as_python_users_expect() -> None:
    with pytest.raises(TypeError):
        SecretGateway("https://api.example", allow=[], api_key="k")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        SecretGateway()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        AgentModel("vendor_b", "m")  # type: ignore[call-arg]


def test_a_gateway_needs_only_its_upstream_and_without_allow_rules_admits_nothing() -> None:
    # SPEC marks only upstream required; an empty allowlist admits no request.
    g = SecretGateway("https://api.example")
    assert g.allow == () and dict(g.headers) == {} and g.rate_per_minute == 0


def test_none_means_absent_for_optional_options() -> None:
    assert dict(SecretGateway("https://api.example", headers=None, allow=[]).headers) == {}
    assert AgentPermissions(tools=None).tools == {}
    assert AgentLimits(max_total_tokens=None).max_total_tokens is None
    assert AgentLimits().max_total_tokens == 1_000_000


@pytest.mark.parametrize("value", ["Bearer sk-live-123", "sk-live-123\n"])
def test_no_message_carries_the_value(value: str) -> None:
    for make in (
        lambda: gateway(headers={"x-api-key": value}),
        lambda: SecretRef(value),
        lambda: gateway(upstream=value),
        lambda: AgentModel("vendor_b", value + "\x00", "llm"),
        lambda: McpLocal(["node"], envs={"A": "sk-live-123\x00"}),
    ):
        with pytest.raises(InvalidArgumentException) as caught:
            make()
        assert "sk-live-123" not in str(caught.value) and "sk-live-123" not in repr(caught.value)


def test_helpers() -> None:
    assert S3Prefix("team-sandboxes", "homes", "alice").key == "homes/alice/home.tar.gz"
    assert S3Prefix("team-sandboxes", "", "alice").key == "alice/home.tar.gz"
    assert IdlePolicy() == IdlePolicy(300, True)
    limits = AgentLimits(timeout_seconds=1.5)
    assert limits.timeout_ms == 1500 and limits.timeout_seconds == 1.5
    assert McpLocal(["x"], timeout_seconds=2).timeout_seconds == 2
    spec = AgentSpec(
        AgentModel("vendor_b", "m", "llm"),
        mcp={"docs": McpRemote("docs-mcp"), "again": McpRemote("llm"), "local": McpLocal(["x"])},
    )
    assert spec.gateway_names() == ["llm", "docs-mcp"] and spec.small_model == "m"
    assert spec.permissions.effective_tools()["webfetch"] == "deny"
    assert AgentPermissions(tools={"webfetch": "allow"}).effective_tools()["webfetch"] == "allow"


def test_the_gateway_map_of_a_sandbox() -> None:
    check = Checker("Sandbox.create")
    assert list(check_gateway_map(check, ("gateways",), {"llm": gateway()})) == ["llm"]
    check_gateway_map(check, ("gateways",), {f"r{i}": gateway() for i in range(9)})
    check_gateway_map(check, ("gateways",), {"LLM": gateway(), "x": "not a gateway"})
    assert [issue[0] for issue in check.issues] == [("gateways",), ("gateways", "LLM"), ("gateways", "x")]
    with pytest.raises(InvalidArgumentException) as caught:
        check.done()
    assert caught.value.field == "gateways"
