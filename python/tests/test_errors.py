"""The exceptions mirror the TypeScript registry: every code becomes the same class, and an envelope
becomes its exception with its field, failure class or reason, never echoing a malformed payload."""

from __future__ import annotations

import json
import subprocess

from conftest import REPO

from sdk import (
    AgentException,
    AuthenticationException,
    InvalidArgumentException,
    SandboxException,
    SecretNotFoundException,
    error_from_envelope,
)
from sdk.errors import ERROR_CLASS


def typescript_registry() -> dict[str, str]:
    script = (
        "import('./dist/rules/error-codes.js').then((m) => "
        "process.stdout.write(JSON.stringify(m.ERROR_CLASS)))"
    )
    out = subprocess.run(["node", "-e", script], cwd=REPO, capture_output=True, text=True, check=True)
    registry: dict[str, str] = json.loads(out.stdout)
    return registry


def test_every_code_maps_to_the_class_typescript_maps_it_to() -> None:
    expected = {code: name.replace("Error", "Exception") for code, name in typescript_registry().items()}
    assert dict(ERROR_CLASS) == expected


def test_an_envelope_becomes_its_exception() -> None:
    invalid = error_from_envelope({"code": "invalid_argument", "message": "m", "context": {"field": "upstream"}})
    assert isinstance(invalid, InvalidArgumentException) and invalid.field == "upstream"
    daemon = error_from_envelope(
        {"code": "configuration_rejected", "message": "m", "context": {"failureClass": "UnimplementedError"}}
    )
    assert isinstance(daemon, SandboxException) and daemon.failure_class == "UnimplementedError"
    assert isinstance(error_from_envelope({"code": "forbidden_host", "message": "m"}), AuthenticationException)
    assert isinstance(error_from_envelope({"code": "secret_not_found", "message": "m"}), SecretNotFoundException)
    agent = error_from_envelope({"code": "agent_failed", "message": "m", "context": {"reason": "timeout"}})
    assert isinstance(agent, AgentException) and agent.reason == "timeout"


def test_a_malformed_payload_is_not_echoed() -> None:
    for payload in ["sk-secret-value", {"code": "nope", "message": "sk-secret-value"}, None]:
        error = error_from_envelope(payload)
        assert isinstance(error, SandboxException)
        assert "sk-secret-value" not in str(error) and "sk-secret-value" not in repr(error)
