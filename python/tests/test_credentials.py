"""The credential broker through the Python SDK's calls (issue 27 item 2): ``Sandbox.create(credentials=...)``
and ``AsyncSandbox.create`` resolve every rule's secrets with the caller's cache just before the one
``POST /v1/credentials`` (after the gateways, before ``secrets``), end the sandbox when that fails unless
``keep_on_failure``, and send nothing for a rule that breaks a rule; ``sbx.credentials``: ``status`` as
sandboxd answered, ``refresh()`` re-reading the secrets on the creating handle and reading the state on
any other. Against the fake control plane of ``test_egress.py`` with sandboxd's routes added. The rules
themselves are ``test_credential_rules.py``'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from _httpx_fake import answer_httpx_with
from test_egress import DAEMON, PLANE, SBX, TOKEN, FakePlane

from sdk import (
    AsyncSandbox,
    AsyncSandboxCredentials,
    CredentialRule,
    CredentialStatus,
    InvalidArgumentException,
    Sandbox,
    SandboxCredentials,
    SandboxException,
    SecretCache,
    SecretGateway,
    SecretNotFoundException,
    SecretRef,
    SecretStore,
)

PROXY = "http://127.0.0.1:3128"
FINGERPRINT = ":".join(["AB"] * 32)
VALUE = "Bearer sk-live-123"
EMPTY = CredentialStatus((), None, None)
CONFIGURED = CredentialStatus(("api.example", "registry.npmjs.org"), PROXY, FINGERPRINT)


class BrokerPlane(FakePlane):
    """``test_egress.FakePlane`` and sandboxd's calls of a create: ``POST``/``GET /v1/credentials`` (the
    hosts of the rules last sent, or ``refusal`` with status 400), ``GET /v1/version``, ``POST
    /v1/gateways`` and ``PUT /v1/secrets``."""

    def __init__(self) -> None:
        super().__init__()
        self.hosts: list[str] = []
        self.credential_refusal: dict[str, Any] | None = None

    def state(self) -> httpx.Response:
        configured = bool(self.hosts)
        return httpx.Response(
            200,
            json={
                "hosts": sorted(self.hosts),
                "proxy": PROXY if configured else None,
                "caFingerprint256": FINGERPRINT if configured else None,
            },
        )

    def answer(self, request: httpx.Request) -> httpx.Response:
        answered = super().answer(request)  # kept in ``requests``; a 404 for what it does not fake
        body: Any = self.requests[-1][3]
        at = (request.method, str(request.url))
        if at == ("POST", f"{DAEMON}/v1/credentials"):
            if self.credential_refusal is not None:
                return httpx.Response(400, json=self.credential_refusal)
            self.hosts = [rule["host"] for rule in body["rules"]]
            return self.state()
        if at == ("GET", f"{DAEMON}/v1/credentials"):
            return self.state()
        if at == ("GET", f"{DAEMON}/v1/version"):
            return httpx.Response(200, json={"version": "0.10.0"})
        if at == ("POST", f"{DAEMON}/v1/gateways"):
            route = {"port": 40001, "url": "http://127.0.0.1:40001", "lastErrorClass": None}
            return httpx.Response(200, json={"routes": {name: route for name in body["routes"]}})
        if at == ("PUT", f"{DAEMON}/v1/secrets"):
            return httpx.Response(200, json={"names": sorted(body["envs"])})
        return answered

    def daemon_calls(self) -> list[tuple[str, str]]:
        """Method and path of each call to sandboxd."""
        return [(m, url[len(DAEMON) :]) for m, url, _, _ in self.requests if url.startswith(DAEMON)]

    def credential_bodies(self) -> list[Any]:
        return [body for m, url, _, body in self.requests if (m, url) == ("POST", f"{DAEMON}/v1/credentials")]

    def killed(self) -> bool:
        return any((m, url) == ("DELETE", f"{PLANE}/v1/sandboxes/{SBX}") for m, url, _, _ in self.requests)


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> BrokerPlane:
    fake = BrokerPlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


@pytest.fixture
def store(tmp_path: Path) -> SecretStore:
    store = SecretStore(file=str(tmp_path / "secrets.json"))
    store.create("api-token", VALUE)
    store.create("npm-token", "Bearer npm-value")
    return store


@pytest.fixture
def cache(store: SecretStore) -> SecretCache:
    return SecretCache(store=store)


RULES: list[Any] = [
    CredentialRule("API.Example.", {"authorization": "api-token"}),
    {
        "host": "registry.npmjs.org",
        "headers": {"Authorization": SecretRef("npm-token"), "x-api-key": "api-token"},
    },
]
SENT = {
    "rules": [
        {"host": "api.example", "headers": {"authorization": VALUE}},
        {"host": "registry.npmjs.org", "headers": {"Authorization": "Bearer npm-value", "x-api-key": VALUE}},
    ]
}


# --- create -----------------------------------------------------------------------------------------


def test_create_sends_every_rule_with_its_values_resolved(plane: BrokerPlane, cache: SecretCache) -> None:
    with Sandbox.create(credentials=RULES, secret_cache=cache, control_plane_url=PLANE) as sbx:
        assert plane.credential_bodies() == [SENT]
        (auth,) = {a for m, url, a, _ in plane.requests if url == f"{DAEMON}/v1/credentials"}
        assert auth == f"Bearer {TOKEN}"
        assert isinstance(sbx.credentials, SandboxCredentials)
        assert sbx.credentials.status == CONFIGURED
        # No value on the handle's face.
        shown = repr(sbx.credentials) + repr(sbx.credentials.status) + repr(vars(sbx.credentials))
        assert "sk-live-123" not in shown and "npm-value" not in shown


def test_gateways_then_credentials_then_secrets(plane: BrokerPlane, cache: SecretCache) -> None:
    gateway = SecretGateway(
        "https://api.vendor.example", headers={"x-api-key": "api-token"}, allow=[("GET", "/*")]
    )
    sbx = Sandbox.create(
        gateways={"llm": gateway}, credentials=RULES[:1], secrets={"NPM": "npm-token"}, secret_cache=cache,
        control_plane_url=PLANE,
    )  # fmt: skip
    sbx.close()
    assert plane.daemon_calls() == [
        ("GET", "/v1/version"),
        ("POST", "/v1/gateways"),
        ("POST", "/v1/credentials"),
        ("PUT", "/v1/secrets"),
    ]


def test_nothing_is_sent_to_the_broker_without_rules(plane: BrokerPlane, cache: SecretCache) -> None:
    with Sandbox.create(secret_cache=cache, control_plane_url=PLANE) as sbx:
        assert plane.daemon_calls() == [] and sbx.credentials.status == EMPTY
        # A refresh on a handle without rules reads the broker's state, as TypeScript's does.
        assert sbx.credentials.refresh() == EMPTY
        assert plane.daemon_calls() == [("GET", "/v1/credentials")]


def test_a_missing_secret_ends_the_sandbox_before_anything_is_sent(
    plane: BrokerPlane, cache: SecretCache
) -> None:
    rules = [RULES[0], {"host": "b.example", "headers": {"authorization": "no-such-secret"}}]
    with pytest.raises(SecretNotFoundException) as missing:
        Sandbox.create(credentials=rules, secret_cache=cache, control_plane_url=PLANE)
    assert "no-such-secret" in str(missing.value) and "sk-live-123" not in str(missing.value)
    assert plane.credential_bodies() == [] and plane.killed()


def test_keep_on_failure_keeps_the_sandbox(plane: BrokerPlane, cache: SecretCache) -> None:
    rules = [{"host": "b.example", "headers": {"authorization": "no-such-secret"}}]
    with pytest.raises(SecretNotFoundException):
        Sandbox.create(credentials=rules, secret_cache=cache, keep_on_failure=True, control_plane_url=PLANE)
    assert plane.credential_bodies() == [] and not plane.killed()


def test_a_refusal_of_sandboxd_ends_the_sandbox(plane: BrokerPlane, cache: SecretCache) -> None:
    plane.credential_refusal = {
        "code": "invalid_argument",
        "message": "rules[0].host: refused",
        "context": {"field": "rules[0].host"},
    }
    with pytest.raises(InvalidArgumentException) as refused:
        Sandbox.create(credentials=RULES, secret_cache=cache, control_plane_url=PLANE)
    assert refused.value.field == "rules[0].host" and plane.killed()


async def test_a_bad_rule_sends_nothing(no_traffic: None, cache: SecretCache) -> None:
    bad = [RULES[0], {"host": "*.example", "headers": {"authorization": "api-token"}}]
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(credentials=bad, secret_cache=cache, control_plane_url=PLANE)
    assert caught.value.field == "credentials[1].host"
    with pytest.raises(InvalidArgumentException) as async_caught:
        await AsyncSandbox.create(credentials=bad, secret_cache=cache, control_plane_url=PLANE)
    assert async_caught.value.message == caught.value.message


# --- sbx.credentials --------------------------------------------------------------------------------


def test_refresh_reads_every_secret_again_and_sends_the_rules(
    plane: BrokerPlane, store: SecretStore, cache: SecretCache, tmp_path: Path
) -> None:
    with Sandbox.create(credentials=RULES, secret_cache=cache, control_plane_url=PLANE) as sbx:
        store.update("api-token", "Bearer rotated")  # cached for 300 s: only a refresh reads it again
        assert sbx.credentials.refresh() == sbx.credentials.status
        rotated = plane.credential_bodies()[-1]
        assert rotated["rules"][0] == {"host": "api.example", "headers": {"authorization": "Bearer rotated"}}
        assert rotated["rules"][1]["headers"]["x-api-key"] == "Bearer rotated"
        # A secret gone: nothing is sent, the rules in force stay, and so does the status.
        (tmp_path / "secrets.json").write_text('{"npm-token": "Bearer npm-value"}')
        with pytest.raises(SecretNotFoundException):
            sbx.credentials.refresh()
        assert len(plane.credential_bodies()) == 2 and not plane.killed()
        assert sbx.credentials.status.hosts == ("api.example", "registry.npmjs.org")


def test_a_connected_handle_reads_the_state_only(plane: BrokerPlane, cache: SecretCache) -> None:
    Sandbox.create(credentials=RULES, secret_cache=cache, control_plane_url=PLANE).close()
    plane.requests.clear()
    sbx = Sandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert sbx.credentials.status == EMPTY  # no call at connect, as TypeScript's connect
        status = sbx.credentials.refresh()
        assert status == CONFIGURED
        assert sbx.credentials.status == status
        assert ("GET", "/v1/credentials") in plane.daemon_calls() and plane.credential_bodies() == []
    finally:
        sbx.close()


def test_a_refresh_on_an_ended_sandbox_is_refused_before_any_call(
    plane: BrokerPlane, cache: SecretCache
) -> None:
    sbx = Sandbox.create(credentials=RULES, secret_cache=cache, control_plane_url=PLANE)
    try:
        sbx.kill()
        plane.requests.clear()
        with pytest.raises(SandboxException) as caught:
            sbx.credentials.refresh()
        assert caught.value.code == "sandbox_ended" and plane.requests == []
    finally:
        sbx.close()


# --- the async handle -------------------------------------------------------------------------------


async def test_the_async_handle_creates_refreshes_and_connects(
    plane: BrokerPlane, store: SecretStore, cache: SecretCache
) -> None:
    sbx = await AsyncSandbox.create(credentials=RULES, secret_cache=cache, control_plane_url=PLANE)
    try:
        assert plane.credential_bodies() == [SENT]
        assert isinstance(sbx.credentials, AsyncSandboxCredentials)
        assert sbx.credentials.status == CONFIGURED
        store.update("npm-token", "Bearer npm-rotated")
        assert await sbx.credentials.refresh() == sbx.credentials.status
        assert plane.credential_bodies()[-1]["rules"][1]["headers"]["Authorization"] == "Bearer npm-rotated"
    finally:
        await sbx.close()
    with pytest.raises(SecretNotFoundException):
        await AsyncSandbox.create(
            credentials=[{"host": "c.example", "headers": {"a": "no-such-secret"}}], secret_cache=cache,
            control_plane_url=PLANE,
        )  # fmt: skip
    assert plane.killed()
    plane.ended = False  # the fake has one sandbox id: connect to it as to another, running sandbox
    connected = await AsyncSandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert connected.credentials.status == EMPTY
        assert (await connected.credentials.refresh()).proxy == PROXY
    finally:
        await connected.close()
