"""The credential broker through the Python SDK against the session's control plane (TypeScript's
``test/integration/sandbox/credential-broker.test.ts`` tests the proxy itself with real tools and
servers): a rule given at create reaches sandboxd with its secret's value, every command gets the
broker's proxy in ``HTTPS_PROXY`` and never the value, ``status`` tells the host, the proxy and the CA's
fingerprint, ``refresh()`` sends a rotated value, and a connected handle reads the state back. The test
ends the sandbox it created."""

from __future__ import annotations

import re
import secrets
from pathlib import Path

from conftest import ControlPlane
from sdk import CredentialRule, Sandbox, SecretCache, SecretStore


def test_commands_get_the_proxy_and_never_the_value(control_plane: ControlPlane, tmp_path: Path) -> None:
    store = SecretStore(file=str(tmp_path / "secrets.json"))
    token = f"live-{secrets.token_hex(12)}"
    store.create("api-authorization", f"Bearer {token}")
    sbx = Sandbox.create(
        template="sdk-base",
        secret_cache=SecretCache(store=store),
        credentials=[CredentialRule("API.Example.test.", {"authorization": "api-authorization"})],
    )
    try:
        status = sbx.credentials.status
        assert status.hosts == ("api.example.test",)
        assert status.proxy is not None and re.fullmatch(r"http://127\.0\.0\.1:[0-9]+", status.proxy)
        assert status.ca_fingerprint256 is not None
        assert re.fullmatch(r"([0-9A-F]{2}:){31}[0-9A-F]{2}", status.ca_fingerprint256)
        env = sbx.commands.run("env").stdout
        assert f"HTTPS_PROXY={status.proxy}" in env.splitlines()
        assert token not in env
        rotated = f"rotated-{secrets.token_hex(12)}"
        store.update("api-authorization", f"Bearer {rotated}")
        assert sbx.credentials.refresh() == status  # same host, proxy and CA; the next requests get it
        again = sbx.commands.run("env").stdout
        assert token not in again and rotated not in again
        connected = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        try:
            assert connected.credentials.refresh() == status
        finally:
            connected.close()
    finally:
        sbx.kill()
        sbx.close()
