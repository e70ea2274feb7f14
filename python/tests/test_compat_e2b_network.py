"""E2B's ``network`` in the E2B shim, as the egress policy (``sdk.compat.e2b._network``): ``Sandbox.create``
sending exactly the policy each of E2B's rule combinations means (``deny_out=[ALL_TRAFFIC]`` with
``allow_out`` an allowlist, another ``deny_out`` denied less what ``allow_out`` covers, ``allow_out``
alone nothing), ``allow_internet_access=False`` closed; what cannot be honoured refused by name before any
call; ``update_network`` on the class (with the key) and on a handle (with the sandbox's token) as ``PUT
/v1/sandboxes/:id/egress``; ``get_info().network`` from the policy; and E2B's network names importable.
Against a fake control plane (httpx's ``send`` answered here, as in ``test_egress.py``)."""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import pytest

from _httpx_fake import answer_httpx_with

import sdk.compat.e2b as shim
from sdk.compat.e2b import (
    ALL_TRAFFIC,
    AsyncSandbox,
    InvalidArgumentException,
    NotSupportedException,
    Sandbox,
    SandboxNetworkOpts,
    SandboxNetworkSelectorContext,
    SandboxNetworkUpdate,
    SandboxNotFoundException,
)
from sdk.compat.e2b._options import TOKENS

PLANE = "http://plane.test"
DAEMON = "http://daemon.test"
SBX = "0123456789ab"
SNAP = "snap_0123456789abcdef"
TOKEN = "token-" + "x" * 20
KEY = "operator-key"
#: The preview facts of a create answer (issue 28).
PREVIEW = {"previewKey": "preview-key", "previewUrl": f"{PLANE}/v1/sandboxes/{SBX}/ports/{{port}}/"}
OPEN: dict[str, Any] = {"mode": "open", "allow": [], "deny": []}
CLOSED: dict[str, Any] = {"mode": "closed", "allow": [], "deny": []}


def opened(*deny: str) -> dict[str, Any]:
    return {"mode": "open", "allow": [], "deny": list(deny)}


def allowlist(*allow: str) -> dict[str, Any]:
    return {"mode": "allowlist", "allow": list(allow), "deny": []}


def info(egress: dict[str, Any], **more: object) -> dict[str, Any]:
    """A sandbox's facts as the control plane sends them."""
    return {
        "sandboxId": SBX, "template": "sdk-base", "isolation": "namespace", "state": "running",
        "allowInternetAccess": egress["mode"] != "closed", "egress": egress, "endReason": None,
        "suspendReason": None, "deadlineAt": 1_900_000_000_000, "startedAt": 1_899_996_400_000,
        "metadata": {}, "seq": 1, **more,
    }  # fmt: skip


class FakePlane:
    """Answers create (``egress`` as sent, else open or closed), a sandbox's facts, kill, sandboxd's
    ``PUT /v1/secrets`` and ``PUT …/egress`` (the body); keeps each request's method, URL,
    authorization and body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str | None, Any]] = []
        self.egress: dict[str, Any] = OPEN

    def answer(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        self.requests.append((request.method, str(request.url), request.headers.get("authorization"), body))
        at = (request.method, str(request.url))
        if at == ("POST", f"{PLANE}/v1/sandboxes"):
            self.egress = body.get("egress") or (OPEN if body.get("allowInternetAccess", True) else CLOSED)
            created = info(self.egress, daemonUrl=DAEMON, accessToken=TOKEN, **PREVIEW)
            return httpx.Response(201, json=created)
        if at == ("GET", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info(self.egress))
        if at == ("DELETE", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info(self.egress, state="ended", endReason="killed"))
        if at == ("PUT", f"{DAEMON}/v1/secrets"):
            return httpx.Response(200, json={"names": sorted(body)})
        if at == ("PUT", f"{PLANE}/v1/sandboxes/{SBX}/egress"):
            self.egress = body
            return httpx.Response(200, json=body)
        return httpx.Response(404, json={"code": "not_found", "message": "not faked"})

    def bodies(self, method: str, url: str) -> list[Any]:
        return [body for m, u, _, body in self.requests if (m, u) == (method, url)]

    @property
    def create_body(self) -> dict[str, Any]:
        (body,) = self.bodies("POST", f"{PLANE}/v1/sandboxes")
        assert isinstance(body, dict)
        return body

    def puts(self) -> list[tuple[str, str | None, Any]]:
        """Each ``PUT …/egress``: URL, authorization, body."""
        return [(url, auth, body) for m, url, auth, body in self.requests if m == "PUT" and url.endswith("/egress")]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePlane]:
    """The fake control plane behind the sync and async clients, at ``SDK_CONTROL_PLANE_URL``."""
    fake = FakePlane()

    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.delenv("E2B_DOMAIN", raising=False)
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    monkeypatch.setenv("SDK_API_KEY", KEY)
    yield fake
    TOKENS.forget(SBX)


@pytest.fixture
def keyed(no_traffic: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """No HTTP request may be sent; a key and a server are set, so only the refusal under test raises."""
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    monkeypatch.setenv("SDK_API_KEY", KEY)
    monkeypatch.delenv("E2B_DOMAIN", raising=False)


# --- create -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("network", "egress"),
    [
        # deny_out ALL_TRAFFIC with allow_out: an allowlist of allow_out (normalised)
        (
            {"deny_out": [ALL_TRAFFIC], "allow_out": ["1.1.1.1", "PyPI.org.", "*.npmjs.org", "8.8.8.0/24"]},
            allowlist("1.1.1.1/32", "pypi.org", "*.npmjs.org", "8.8.8.0/24"),
        ),
        # selectors given as callables get E2B's context
        (
            {
                "deny_out": lambda ctx: [ctx.all_traffic],
                "allow_out": lambda ctx: ["1.1.1.1", *ctx.rules.keys()],
            },
            allowlist("1.1.1.1/32"),
        ),
        ({"deny_out": [ALL_TRAFFIC]}, allowlist()),  # nothing reachable
        ({"deny_out": ["8.8.8.8", "10.0.0.0/8"]}, opened("8.8.8.8/32", "10.0.0.0/8")),
        # allow_out wins: what it names or covers is not denied
        (
            {"deny_out": ["8.8.8.8", "1.1.1.0/24", "9.9.9.9"], "allow_out": ["8.8.8.8", "1.0.0.0/8"]},
            opened("9.9.9.9/32"),
        ),
        ({"allow_out": ["1.1.1.1", "pypi.org"]}, OPEN),  # restricts nothing
        ({"deny_out": [ALL_TRAFFIC], "allow_out": [ALL_TRAFFIC]}, OPEN),
        # E2B's default allow_public_traffic, empty rules and https_ports, no proxy
        ({"allow_public_traffic": True, "rules": {}, "https_ports": [], "egress_proxy": None}, OPEN),
    ],
)
def test_create_sends_the_policy_e2b_s_rules_mean(
    plane: FakePlane, network: SandboxNetworkOpts, egress: dict[str, Any]
) -> None:
    with Sandbox.create(network=network) as sbx:
        assert plane.create_body["egress"] == egress
        assert plane.create_body["template"] == "sdk-base"
        assert plane.create_body["allowInternetAccess"] is True
        assert plane.requests[0][2] == f"Bearer {KEY}"
        assert sbx.native.egress.policy._wire().wire() == egress


def test_allow_internet_access_false_with_a_network_leaving_nothing_open_is_closed(plane: FakePlane) -> None:
    with Sandbox.create(allow_internet_access=False, network={"deny_out": ["8.8.8.8"]}) as sbx:
        body = plane.create_body
        assert (body["template"], body["allowInternetAccess"], body["egress"]) == ("sdk-base-caps", False, CLOSED)
        assert sbx.get_info().network == {"deny_out": [ALL_TRAFFIC]}


def test_create_from_a_snapshot_id_sends_the_policy_too(plane: FakePlane) -> None:
    with Sandbox.create(SNAP, network={"deny_out": [ALL_TRAFFIC], "allow_out": ["pypi.org"]}):
        body = plane.create_body
        assert body["snapshot"] == SNAP and "template" not in body
        assert body["egress"] == allowlist("pypi.org")


# --- refusals before any call -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("feature", "network"),
    [
        ("network.allow_public_traffic", {"allow_public_traffic": False}),
        ("network.allow_public_traffic", {"allow_public_traffic": 1}),
        ("network.mask_request_host", {"mask_request_host": "${PORT}-mine.example.com"}),
        ("network.https_ports", {"https_ports": [3000]}),
        ("network.rules", {"rules": {"api.example.com": [{"transform": {"headers": {"A": "b"}}}]}}),
        ("network.egress_proxy", {"egress_proxy": {"address": "proxy.example.com:1080"}}),
        # an allow entry inside a denied range works only with an allowlist here
        ("network.allow_out[1]", {"deny_out": ["8.0.0.0/8"], "allow_out": ["1.1.1.1", "8.8.8.0/24"]}),
        ("network.allow_out[0]", {"deny_out": ["*.example.com"], "allow_out": ["api.example.com"]}),
    ],
)
def test_what_cannot_be_honoured_is_not_supported_naming_it(keyed: None, feature: str, network: Any) -> None:
    with pytest.raises(NotSupportedException) as refused:
        Sandbox.create(network=network)
    assert refused.value.feature == feature and refused.value.code == "not_supported"


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ({"allow_out": ["1.1.1.1", "2001:db8::/32"]}, "network.allow_out[1]: IPv6 is not routed"),
        ({"deny_out": ["pypi.org:443"]}, "network.deny_out[0]: is a domain or an IPv4 address"),
        ({"deny_out": [42]}, "network.deny_out[0]: must be a string"),
        ({"deny_out": "0.0.0.0/0"}, "network.deny_out: must be a list"),
        ({"deny_out": lambda ctx: "all"}, "network.deny_out: must be a list"),
        ({"colour": "red"}, "network.colour: is not an option of E2B's network"),
        ("closed", "network: must be a mapping"),
        (
            {"deny_out": [ALL_TRAFFIC], "allow_out": [f"10.0.{i // 256}.{i % 256}" for i in range(257)]},
            "at most 256 entries",
        ),
    ],
)
def test_malformed_networks_are_invalid_arguments(keyed: None, network: Any, message: str) -> None:
    with pytest.raises(InvalidArgumentException) as refused:
        Sandbox.create(network=network, allow_internet_access=True)
    assert message in str(refused.value)


def test_allow_out_with_allow_internet_access_false_is_refused_saying_how(keyed: None) -> None:
    for allow_out in (["pypi.org"], [ALL_TRAFFIC]):
        with pytest.raises(InvalidArgumentException, match=r"'deny_out': \[ALL_TRAFFIC\], 'allow_out'"):
            Sandbox.create(allow_internet_access=False, network={"allow_out": allow_out})


def test_update_network_checks_its_network_and_the_id_first(keyed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotSupportedException) as refused:
        Sandbox.update_network(SBX, {"rules": {"a": [{}]}})
    assert refused.value.feature == "network.rules"
    with pytest.raises(NotSupportedException, match="^network.egress_proxy"):
        Sandbox.update_network(SBX, {"egress_proxy": {"address": "p:1080"}})
    with pytest.raises(InvalidArgumentException, match="allow_public_traffic: is not an option"):
        Sandbox.update_network(SBX, {"allow_public_traffic": True})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(InvalidArgumentException, match="allow_internet_access: must be a bool"):
        Sandbox.update_network(SBX, {"allow_internet_access": "no"})  # type: ignore[typeddict-item]
    with pytest.raises(SandboxNotFoundException):
        Sandbox.update_network("not-an-id", {})
    with pytest.raises(NotSupportedException, match="^domain"):
        Sandbox.update_network(SBX, {}, domain="e2b.app")
    monkeypatch.delenv("SDK_API_KEY")
    with pytest.raises(shim.AuthenticationException):
        Sandbox.update_network(SBX, {})


# --- update_network ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("network", "egress"),
    [
        ({"deny_out": [ALL_TRAFFIC], "allow_out": ["1.1.1.1", "*.PyPI.org"]}, allowlist("1.1.1.1/32", "*.pypi.org")),
        ({"deny_out": ["8.8.8.8"]}, opened("8.8.8.8/32")),
        ({}, OPEN),  # E2B's update clears what is left out
        ({"allow_internet_access": False}, allowlist()),  # deny_out [ALL_TRAFFIC]
        ({"allow_internet_access": False, "allow_out": ["1.1.1.1"]}, allowlist("1.1.1.1/32")),
        ({"rules": {}, "deny_out": ["10.0.0.0/8"]}, opened("10.0.0.0/8")),
    ],
)
def test_update_network_by_id_puts_the_policy_with_the_key(
    plane: FakePlane, network: SandboxNetworkUpdate, egress: dict[str, Any]
) -> None:
    assert Sandbox.update_network(SBX, network) is None
    assert plane.puts() == [(f"{PLANE}/v1/sandboxes/{SBX}/egress", f"Bearer {KEY}", egress)]


def test_a_handle_s_update_network_puts_with_the_sandbox_token_and_get_info_shows_it(plane: FakePlane) -> None:
    with Sandbox.create() as sbx:
        assert sbx.get_info().network is None  # open, nothing denied
        assert sbx.update_network({"deny_out": [ALL_TRAFFIC], "allow_out": ["PyPI.org", "1.1.1.1"]}) is None
        assert plane.puts() == [
            (f"{PLANE}/v1/sandboxes/{SBX}/egress", f"Bearer {TOKEN}", allowlist("pypi.org", "1.1.1.1/32"))
        ]
        assert sbx.get_info().network == {"allow_out": ["pypi.org", "1.1.1.1/32"], "deny_out": [ALL_TRAFFIC]}
        sbx.update_network({"deny_out": ["10.1.2.3/16"]})
        assert sbx.get_info().network == {"deny_out": ["10.1.0.0/16"]}
        assert Sandbox.get_info(SBX).network == {"deny_out": ["10.1.0.0/16"]}
        before = len(plane.requests)
        with pytest.raises(NotSupportedException, match="^network.rules"):
            sbx.update_network({"rules": {"a": [{}]}})
        with pytest.raises(InvalidArgumentException, match="IPv6"):
            sbx.update_network({"allow_out": ["::1"]})
        with pytest.raises(InvalidArgumentException, match="colour"):
            sbx.update_network({}, colour=1)
        assert len(plane.requests) == before  # refused before any call


async def test_the_async_shim_maps_create_and_both_updates(plane: FakePlane) -> None:
    sbx = await AsyncSandbox.create(network={"deny_out": [ALL_TRAFFIC], "allow_out": ["pypi.org"]})
    try:
        assert plane.create_body["egress"] == allowlist("pypi.org")
        assert (await sbx.get_info()).network == {"allow_out": ["pypi.org"], "deny_out": [ALL_TRAFFIC]}
        await sbx.update_network({"deny_out": ["8.8.8.8"]})
        await AsyncSandbox.update_network(SBX, {"allow_internet_access": False})
        assert plane.puts() == [
            (f"{PLANE}/v1/sandboxes/{SBX}/egress", f"Bearer {TOKEN}", opened("8.8.8.8/32")),
            (f"{PLANE}/v1/sandboxes/{SBX}/egress", f"Bearer {KEY}", allowlist()),
        ]
        with pytest.raises(NotSupportedException, match="^network.egress_proxy"):
            await sbx.update_network({"egress_proxy": {"address": "p:1080"}})
    finally:
        await sbx.kill()
        await sbx.close()


# --- E2B's names ------------------------------------------------------------------------------------

#: The network names E2B's Python SDK exports (``e2b/__init__.py``, 2.55): all import from the shim.
E2B_NETWORK_NAMES = (
    "ALL_TRAFFIC",
    "SandboxEgressProxyInfo",
    "SandboxEgressProxyOpts",
    "SandboxNetworkInfo",
    "SandboxNetworkOpts",
    "SandboxNetworkRule",
    "SandboxNetworkRuleInfo",
    "SandboxNetworkRules",
    "SandboxNetworkSelector",
    "SandboxNetworkSelectorContext",
    "SandboxNetworkTransform",
    "SandboxNetworkTransformContext",
    "SandboxNetworkTransformResolver",
    "SandboxNetworkUpdate",
)


def test_e2b_s_network_names_import_from_the_shim() -> None:
    for name in E2B_NETWORK_NAMES:
        assert name in shim.__all__ and getattr(shim, name) is not None
    assert ALL_TRAFFIC == "0.0.0.0/0"
    # E2B's own spellings: TypedDicts called as E2B's tests call them, the selector context's fields.
    assert SandboxNetworkOpts(deny_out=[ALL_TRAFFIC], allow_out=["1.1.1.1"]) == {
        "deny_out": [ALL_TRAFFIC],
        "allow_out": ["1.1.1.1"],
    }
    context = SandboxNetworkSelectorContext(all_traffic=ALL_TRAFFIC, rules={})
    assert (context.all_traffic, dict(context.rules)) == (ALL_TRAFFIC, {})
