"""Presets driven by the shared catalogue (``presets/catalogue.json``), as the TypeScript SDK's
``test/unit/presets/presets.test.ts``: every preset exists under its ``python`` name and builds the
upstream, header and POST paths of its row (and of SPEC's table, a second source), refuses bad
parameters, follows ``SDK_PRESET_CATALOGUE``, and makes no network call nor loads an optional package."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import REPO

import sdk
from sdk import InvalidArgumentException, SecretGateway, SecretRef
from sdk.presets import CATALOGUE_ENV, PRESET_BUILDERS, PRESET_KEYS, load_catalogue

SAMPLE: dict[str, dict[str, Any]] = {
    "vendor_a": {"region": "eu-west-1", "models": ["vendor.model-v1:0"]},
    "vendor_b": {},
    "compatible": {"upstream": "https://llm.corp.example", "base_path": "/v1"},
    "vendor_c": {},
    "vendor_d": {"models": ["model-pro", "model-flash"]},
    "vendor_e": {"resource": "my-res"},
    "vendor_f": {},
    "vendor_g": {},
    "vendor_h": {},
    "vendor_i": {},
    "vendor_j": {},
    "vendor_k": {"upstream": "https://10.0.0.5:4000"},
}

# SPEC's catalogue table, written out here as a second source for the data file.
SPEC_ROWS: dict[str, tuple[str, list[str], str, str]] = {
    "vendor_a": (
        "authorization",
        [
            "/model/vendor.model-v1:0/converse-stream",
            "/model/vendor.model-v1%3A0/converse-stream",
            "/model/vendor.model-v1:0/converse",
            "/model/vendor.model-v1%3A0/converse",
        ],
        "vendor_a",
        "",
    ),
    "vendor_b": ("x-api-key", ["/v1/messages"], "vendor_b", ""),
    "compatible": ("authorization", ["/v1/chat/completions"], "compatible", "/v1"),
    "vendor_c": ("authorization", ["/v1/responses", "/v1/chat/completions"], "vendor_c", ""),
    "vendor_d": (
        "x-vendor_d-api-key",
        [
            "/v1beta/models/model-pro:streamGenerateContent",
            "/v1beta/models/model-flash:streamGenerateContent",
            "/v1beta/models/model-pro:generateContent",
            "/v1beta/models/model-flash:generateContent",
        ],
        "vendor_d",
        "",
    ),
    "vendor_e": ("api-key", ["/vendor_c/v1/responses", "/vendor_c/v1/chat/completions"], "vendor_e", ""),
    "vendor_f": ("authorization", ["/api/v1/chat/completions"], "compatible", "/api/v1"),
    "vendor_g": ("authorization", ["/vendor_c/v1/chat/completions"], "compatible", "/vendor_c/v1"),
    "vendor_h": ("authorization", ["/v1/chat/completions"], "compatible", "/v1"),
    "vendor_i": ("authorization", ["/chat/completions"], "compatible", ""),
    "vendor_j": ("authorization", ["/v1/responses", "/v1/chat/completions"], "vendor_c", ""),
    "vendor_k": ("authorization", ["/v1/responses", "/v1/chat/completions"], "compatible", "/v1"),
}


def builder(key: str) -> Callable[..., SecretGateway]:
    found: Callable[..., SecretGateway] = getattr(sdk, load_catalogue().presets[key].python)
    return found


def snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def fails(make: Callable[[], object], field: str) -> InvalidArgumentException:
    with pytest.raises(InvalidArgumentException) as caught:
        make()
    assert caught.value.field == field
    return caught.value


def test_the_catalogue_lists_every_preset_and_each_has_its_exported_builder() -> None:
    catalogue = load_catalogue()
    assert list(catalogue.presets) == list(PRESET_KEYS)
    for key, entry in catalogue.presets.items():
        assert entry.python == snake(entry.typescript)
        assert getattr(sdk, entry.python) is PRESET_BUILDERS[key]
        assert entry.python in sdk.__all__


@pytest.mark.parametrize("key", PRESET_KEYS)
def test_builds_the_restricted_gateway_of_its_catalogue_row_and_of_spec(key: str) -> None:
    entry = load_catalogue().presets[key]
    header, paths, provider, base_path = SPEC_ROWS[key]
    g = builder(key)("my-secret", **SAMPLE[key], rate_per_minute=120)
    assert isinstance(g, SecretGateway)
    assert entry.header.name == header
    assert dict(g.headers) == {header: "my-secret"}
    assert list(g.allow) == [("POST", p) for p in paths]
    assert g.rate_per_minute == 120
    assert g.preset is not None
    assert (g.preset.preset, g.preset.provider, g.preset.base_path) == (key, provider, base_path)
    assert re.fullmatch(r"https://[a-z0-9.:\[\]-]+", g.upstream)
    if entry.upstream.startswith("https://"):
        assert g.upstream.endswith(".example")
    # Every catalogue path template is accounted for once filled in.
    assert len({p for _, p in g.allow}) == len(g.allow)


@pytest.mark.parametrize("key", PRESET_KEYS)
def test_takes_a_secret_ref_defaults_the_rate_and_refuses_a_secret_value(key: str) -> None:
    build = builder(key)
    g = build(SecretRef("k"), **SAMPLE[key])
    assert g.rate_per_minute == 0 and g.effective_rate_per_minute == 600
    error = fails(lambda: build("Bearer sk-123", **SAMPLE[key]), "secret")
    assert "sk-123" not in str(error) and "sk-123" not in repr(error)
    fails(lambda: build("k", **SAMPLE[key], rate_per_minute=6001), "rate_per_minute")
    fails(lambda: build("k", **SAMPLE[key], rate_per_minute=True), "rate_per_minute")
    with pytest.raises(TypeError):
        build("k", **SAMPLE[key], unknown=1)


def test_vendor_a_region_host_given_models_only_no_arns_or_encoded_slashes() -> None:
    assert sdk.vendor_a_gateway("k", region="us-east-1", models=["m"]).upstream == (
        "https://runtime.us-east-1.vendor-a.example"
    )
    fails(lambda: sdk.vendor_a_gateway("k", region="US", models=["m"]), "region")
    fails(lambda: sdk.vendor_a_gateway("k", region="us-east-1", models=[]), "models")
    arn = "arn:aws:bedrock:us-east-1::foundation-model/x"
    fails(lambda: sdk.vendor_a_gateway("k", region="us-east-1", models=[arn]), "models[0]")
    fails(lambda: sdk.vendor_a_gateway("k", region="us-east-1", models=["a%2Fb"]), "models[0]")
    fails(lambda: sdk.vendor_a_gateway("k", region="us-east-1", models=["a/b"]), "models[0]")
    many = [f"m{i}:0" for i in range(9)]
    fails(lambda: sdk.vendor_a_gateway("k", region="us-east-1", models=many), "models")
    fails(lambda: sdk.vendor_a_gateway("k", region="us-east-1", models="m"), "models")


def test_vendor_d_models_required_without_the_models_prefix() -> None:
    fails(lambda: sdk.vendor_d_gateway("k", models=["models/pro"]), "models[0]")
    assert len(sdk.vendor_d_gateway("k", models=["pro", "pro"]).allow) == 2
    with pytest.raises(TypeError):
        sdk.vendor_d_gateway("k")  # type: ignore[call-arg]


def test_vendor_e_resource_is_1_to_63_characters_without_edge_hyphens() -> None:
    assert sdk.vendor_e_gateway("k", resource="a").upstream == "https://a.vendor-e.example"
    for resource in ["", "-a", "a-", "A", "a.b", "x" * 64]:
        fails(lambda: sdk.vendor_e_gateway("k", resource=resource), "resource")


@pytest.mark.parametrize(
    "upstream",
    [
        "http://proxy.example",
        "https://proxy.example/v1",
        "https://localhost",
        "https://localhost:4000",
        "https://127.0.0.1",
        "https://127.8.9.10",
        "https://2130706433",
        "https://0x7f.0.0.1",
        "https://0177.0.0.01",
        "https://127.1",
        "https://[::1]",
        "https://[::ffff:127.0.0.1]",
        "https://0.0.0.0",
        "https://169.254.0.1",
        "https://169.254.169.254",
    ],
)
def test_vendor_k_and_compatible_refuse_the_upstream(upstream: str) -> None:
    fails(lambda: sdk.vendor_k_gateway("k", upstream=upstream), "upstream")
    fails(lambda: sdk.compatible_gateway("k", upstream=upstream), "upstream")


def test_vendor_k_and_compatible_take_base_paths_in_path_form() -> None:
    binding = sdk.vendor_k_gateway("k", upstream="https://p.example").preset
    assert binding is not None and binding.base_path == "/v1"
    assert sdk.compatible_gateway("k", upstream="https://p.example").allow == (("POST", "/chat/completions"),)
    fails(lambda: sdk.vendor_k_gateway("k", upstream="https://p.example", base_path="v1"), "base_path")
    fails(lambda: sdk.compatible_gateway("k", upstream="https://p.example", base_path="/v1//x"), "base_path")


def test_an_operator_catalogue_replaces_the_placeholder_hosts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads((REPO / "presets" / "catalogue.json").read_text())
    data["presets"]["vendor_b"]["upstream"] = "https://models.internal.example"
    file = tmp_path / "catalogue.json"
    file.write_text(json.dumps(data))
    monkeypatch.setenv(CATALOGUE_ENV, str(file))
    assert sdk.vendor_b_gateway("k").upstream == "https://models.internal.example"
    monkeypatch.delenv(CATALOGUE_ENV)
    assert sdk.vendor_b_gateway("k").upstream == "https://api.vendor-b.example"


@pytest.mark.parametrize("text", ['{"version":2}', "not json", '{"version":1,"method":"POST","presets":{}}'])
def test_a_malformed_operator_catalogue_is_refused(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "bad.json"
    file.write_text(text)
    monkeypatch.setenv(CATALOGUE_ENV, str(file))
    with pytest.raises(InvalidArgumentException):
        sdk.vendor_b_gateway("k")


def test_building_every_preset_makes_no_network_call_and_loads_no_optional_package() -> None:
    probe = f"""
import socket, sys, json
calls = []
def refuse(*args, **kwargs):
    calls.append("network")
    raise OSError("no network in this probe")
socket.socket.connect = refuse
socket.getaddrinfo = refuse
from sdk import presets
samples = {json.dumps(SAMPLE)}
built = [presets.PRESET_BUILDERS[key]("k", **samples[key]) for key in presets.PRESET_KEYS]
print(json.dumps({{"built": len(built), "network": calls,
    "optional": sorted(m for m in sys.modules if m.split(".")[0] in ("boto3", "botocore", "s3transfer"))}}))
"""
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO / "python", capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report == {"built": len(PRESET_KEYS), "network": [], "optional": []}
    assert socket.socket.connect is not None
