"""The egress policy through the Python SDK's calls (issue 27): ``Sandbox.create(egress=...)`` and
``AsyncSandbox.create`` sending exactly the normalised policy (and nothing without one),
``allow_internet_access=False`` with another mode than ``closed`` refused before any call; and
``sbx.egress``: ``policy`` from the control plane's answers, ``update`` as ``PUT
/v1/sandboxes/:id/egress`` with the sandbox's token. Against a fake control plane (``_httpx_fake.py``).
The policy's own rules are ``test_egress_policy.py``'s."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from _httpx_fake import answer_httpx_with

from sdk import (
    AsyncSandbox,
    AsyncSandboxEgress,
    EgressPolicy,
    InvalidArgumentException,
    Sandbox,
    SandboxEgress,
    SandboxException,
    SandboxInfo,
    SandboxPool,
)

PLANE = "http://plane.test"
DAEMON = "http://daemon.test"
SBX = "0123456789ab"
SNAP = "snap_0123456789abcdef"
TOKEN = "token-" + "x" * 20
OPEN = {"mode": "open", "allow": [], "deny": []}
CLOSED = {"mode": "closed", "allow": [], "deny": []}
#: The preview facts of create and connect answers (issue 28; ``test_ports.py`` uses them).
PREVIEW_KEY = "preview-key-" + "p" * 20
PREVIEW_URL = f"{PLANE}/v1/sandboxes/{SBX}/ports/{{port}}/"

IPV6_RULE = "IPv6 is not routed to sandboxes: give IPv4 addresses or domains"
SHAPE_RULE = "is a domain or an IPv4 address or CIDR, without a scheme, port or path"
MODE_RULE = "must be one of open, closed, allowlist"
NOT_A_POLICY = "must be an EgressPolicy or a mapping of mode, allow and deny"


# --- a fake control plane ---------------------------------------------------------------------------


def info(egress: dict[str, Any], **more: object) -> dict[str, Any]:
    """A sandbox's facts as the control plane sends them."""
    return {
        "sandboxId": SBX, "template": "sdk-base", "isolation": "namespace", "state": "running",
        "allowInternetAccess": egress["mode"] != "closed", "egress": egress, "endReason": None,
        "suspendReason": None, "deadlineAt": 1_900_000_000_000, "startedAt": 1_899_996_400_000,
        "metadata": {}, "seq": 1, **more,
    }  # fmt: skip


class FakePlane:
    """Answers create (``egress`` as sent, else open or closed as ``allowInternetAccess`` says, with the
    preview key and URL), connect (the preview key only for the sandbox's token), a sandbox's facts, kill,
    sandboxd's routes, and ``PUT …/egress`` (the body, or ``answer_egress`` when set); keeps each
    request's method, URL, authorization and body. Once the sandbox ended (killed, or ``ended`` set as by
    another process), every daemon call is refused with ``sandbox_ended``, as the control plane's proxy
    to sandboxd does."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, str | None, Any]] = []
        self.egress: dict[str, Any] = OPEN
        self.answer_egress: dict[str, Any] | None = None
        #: An error envelope ``PUT …/egress`` answers with (status 400) when set.
        self.refusal: dict[str, Any] | None = None
        #: The sandbox ended: the daemon proxy refuses every daemon call.
        self.ended = False

    def proxy_refusal(self, request: httpx.Request) -> httpx.Response | None:
        """The daemon proxy's answer to a daemon call once the sandbox ended: 409 ``sandbox_ended``."""
        if self.ended and str(request.url).startswith(DAEMON):
            return httpx.Response(409, json={"code": "sandbox_ended", "message": f"sandbox {SBX} has ended"})
        return None

    def answer(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        self.requests.append((request.method, str(request.url), request.headers.get("authorization"), body))
        at = (request.method, str(request.url))
        refused = self.proxy_refusal(request)
        if refused is not None:
            return refused
        if at == ("POST", f"{PLANE}/v1/sandboxes"):
            self.ended = False  # a new sandbox (the fake has one id)
            self.egress = body.get("egress") or (OPEN if body.get("allowInternetAccess", True) else CLOSED)
            created = info(self.egress, daemonUrl=DAEMON, accessToken=TOKEN, previewKey=PREVIEW_KEY)
            return httpx.Response(201, json={**created, "previewUrl": PREVIEW_URL})
        if at == ("POST", f"{PLANE}/v1/sandboxes/{SBX}/connect"):
            # The preview key only for the sandbox's own token, as the control plane gives it.
            own = request.headers.get("authorization") == f"Bearer {TOKEN}"
            connected = info(self.egress, daemonUrl=DAEMON, previewUrl=PREVIEW_URL)
            return httpx.Response(200, json={**connected, **({"previewKey": PREVIEW_KEY} if own else {})})
        if at == ("GET", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info(self.egress))
        if at == ("DELETE", f"{PLANE}/v1/sandboxes/{SBX}"):
            self.ended = True
            return httpx.Response(200, json=info(self.egress, state="ended", endReason="killed"))
        if at == ("GET", f"{DAEMON}/v1/gateways"):  # a connected handle reads the routes' state
            return httpx.Response(200, json={"routes": {}})
        if at == ("PUT", f"{PLANE}/v1/sandboxes/{SBX}/egress") and self.refusal is not None:
            return httpx.Response(400, json=self.refusal)
        if at == ("PUT", f"{PLANE}/v1/sandboxes/{SBX}/egress"):
            self.egress = self.answer_egress or body
            return httpx.Response(200, json=self.egress)
        return httpx.Response(404, json={"code": "not_found", "message": "not faked"})

    def bodies(self, method: str, path: str) -> list[Any]:
        return [body for m, url, _, body in self.requests if (m, url) == (method, f"{PLANE}{path}")]

    @property
    def create_body(self) -> dict[str, Any]:
        (body,) = self.bodies("POST", "/v1/sandboxes")
        assert isinstance(body, dict)
        return body


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> FakePlane:
    """The fake control plane behind the sync and async clients."""
    fake = FakePlane()

    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


# --- create -----------------------------------------------------------------------------------------


def test_create_sends_exactly_the_normalised_policy(plane: FakePlane) -> None:
    policy = EgressPolicy("allowlist", allow=[" PyPI.org. ", "*.pythonhosted.org", "10.1.2.3/24"])
    with Sandbox.create(egress=policy, control_plane_url=PLANE) as sbx:
        sent = {"mode": "allowlist", "allow": ["pypi.org", "*.pythonhosted.org", "10.1.2.0/24"], "deny": []}
        assert plane.create_body["egress"] == sent
        assert plane.create_body["allowInternetAccess"] is True  # as without egress: the default
        assert isinstance(sbx.egress, SandboxEgress)
        assert sbx.egress.policy == policy
        got = sbx.get_info()
        assert isinstance(got, SandboxInfo) and got.egress.allow == sent["allow"]


def test_create_takes_a_mapping_of_the_options(plane: FakePlane) -> None:
    egress = {"mode": "open", "deny": ["169.254.0.1", "Ads.Example."]}
    with Sandbox.create(egress=egress, control_plane_url=PLANE) as sbx:
        sent = {"mode": "open", "allow": [], "deny": ["169.254.0.1/32", "ads.example"]}
        assert plane.create_body["egress"] == sent
        assert sbx.egress.policy == EgressPolicy("open", deny=["169.254.0.1/32", "ads.example"])


def test_no_egress_is_sent_when_none_is_given(plane: FakePlane) -> None:
    with Sandbox.create(allow_internet_access=False, control_plane_url=PLANE) as sbx:
        assert "egress" not in plane.create_body and plane.create_body["allowInternetAccess"] is False
        assert sbx.egress.policy == EgressPolicy("closed")  # the control plane's answer


def test_closed_is_accepted_with_allow_internet_access_false(plane: FakePlane) -> None:
    Sandbox.create(allow_internet_access=False, egress={"mode": "closed"}, control_plane_url=PLANE).close()
    assert plane.create_body["egress"] == CLOSED and plane.create_body["allowInternetAccess"] is False


def test_create_from_a_snapshot_sends_the_policy_given(plane: FakePlane) -> None:
    Sandbox.create(snapshot=SNAP, egress=EgressPolicy("closed"), control_plane_url=PLANE).close()
    assert plane.create_body["egress"] == CLOSED and "allowInternetAccess" not in plane.create_body


@pytest.mark.parametrize(
    ("options", "field", "message"),
    [
        (
            {"allow_internet_access": False, "egress": EgressPolicy("open")},
            "egress",
            "must be mode 'closed' with allow_internet_access=False",
        ),
        (
            {"allow_internet_access": False, "egress": {"mode": "allowlist", "allow": ["pypi.org"]}},
            "egress",
            "must be mode 'closed' with allow_internet_access=False",
        ),
        ({"egress": {"mode": "allowlist", "allow": ["pypi.org", "::1"]}}, "egress.allow[1]", IPV6_RULE),
        ({"egress": {"mode": "open", "block": ["x"]}}, "egress.block", "is not an option (mode, allow, deny)"),
        ({"egress": {"allow": []}}, "egress.mode", MODE_RULE),
        ({"egress": {"mode": "closed", "deny": ["x.org"]}}, "egress.deny", "means nothing with mode 'closed'"),
        (
            {"egress": {"mode": "allowlist", "allow": [f"a{i}.example" for i in range(257)]}},
            "egress",
            "at most 256 entries in allow and deny",
        ),
        ({"egress": "closed"}, "egress", f"{NOT_A_POLICY}, got string"),
        ({"egress": ["closed"]}, "egress", f"{NOT_A_POLICY}, got list"),
    ],
)
async def test_a_bad_egress_is_refused_before_any_call(
    no_traffic: None, options: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(control_plane_url=PLANE, **options)
    assert (caught.value.field, caught.value.message) == (field, f"Sandbox.create: {field}: {message}")
    with pytest.raises(InvalidArgumentException) as async_caught:
        await AsyncSandbox.create(control_plane_url=PLANE, **options)
    assert (async_caught.value.field, async_caught.value.message) == (field, caught.value.message)


def test_egress_is_refused_with_a_pool(no_traffic: None) -> None:
    """A pool's slots have its config's egress: a policy given with ``pool`` would be silently lost."""
    pool = SandboxPool.__new__(SandboxPool)  # never started: the check comes first
    with pytest.raises(InvalidArgumentException) as caught:
        Sandbox.create(pool=pool, egress={"mode": "closed"})
    assert caught.value.field == "egress"
    assert caught.value.message == "Sandbox.create: egress: is not accepted with pool"


# --- sbx.egress -------------------------------------------------------------------------------------


def test_update_puts_the_normalised_policy_with_the_sandbox_token(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        assert sbx.egress.policy == EgressPolicy("open")
        new = sbx.egress.update(EgressPolicy("allowlist", allow=["*.NPMJS.org", "1.2.3.4"]))
        sent = {"mode": "allowlist", "allow": ["*.npmjs.org", "1.2.3.4/32"], "deny": []}
        puts = [r for r in plane.requests if r[0] == "PUT"]
        assert [(url, auth, body) for _, url, auth, body in puts] == [
            (f"{PLANE}/v1/sandboxes/{SBX}/egress", f"Bearer {TOKEN}", sent)
        ]
        assert new == EgressPolicy("allowlist", allow=["*.npmjs.org", "1.2.3.4/32"])
        assert sbx.egress.policy == new
        assert sbx.egress.update({"mode": "closed"}) == EgressPolicy("closed") == sbx.egress.policy
        assert plane.bodies("PUT", f"/v1/sandboxes/{SBX}/egress")[-1] == CLOSED


def test_policy_is_what_the_control_plane_answered(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.answer_egress = {"mode": "open", "allow": [], "deny": ["10.0.0.0/8"]}
        assert sbx.egress.update({"mode": "closed"}) == EgressPolicy("open", deny=["10.0.0.0/8"])
        assert sbx.egress.policy.deny == ("10.0.0.0/8",)
        plane.egress = CLOSED  # changed by another handle: any facts since tell this one
        sbx.get_info()
        assert sbx.egress.policy == EgressPolicy("closed")


def test_connect_reads_the_policy(plane: FakePlane) -> None:
    plane.egress = {"mode": "allowlist", "allow": ["pypi.org"], "deny": []}
    sbx = Sandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert sbx.egress.policy == EgressPolicy("allowlist", allow=["pypi.org"])
        assert "pypi.org" in repr(sbx.egress)
    finally:
        sbx.close()


def test_a_bad_update_is_refused_before_any_call(plane: FakePlane) -> None:
    too_many = [f"a{i}.example" for i in range(257)]
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.requests.clear()
        # Named as the control plane names them when it parses the same body (``sbx.egress.update``).
        for policy, field, message in (
            ({"mode": "open", "allow": ["pypi.org"]}, "allow", "allow: is for mode 'allowlist' only"),
            ({"mode": "allowlist", "allow": ["sk-live-123:x"]}, "allow[0]", f"allow[0]: {SHAPE_RULE}"),
            ({"mode": "closed", "extra": 1}, "extra", "extra: is not an option (mode, allow, deny)"),
            ({"mode": "open", "deny": too_many}, None, "at most 256 entries in allow and deny"),
            (None, "policy", f"policy: {NOT_A_POLICY}, got None"),
            ("closed", "policy", f"policy: {NOT_A_POLICY}, got string"),
        ):
            with pytest.raises(InvalidArgumentException) as caught:
                sbx.egress.update(policy)  # type: ignore[arg-type]
            assert (caught.value.field, caught.value.message) == (field, f"sbx.egress.update: {message}")
            assert "sk-live-123" not in str(caught.value)
        assert plane.requests == []
        assert sbx.egress.policy == EgressPolicy("open")


def test_update_on_an_ended_sandbox_is_refused_before_any_call(plane: FakePlane) -> None:
    sbx = Sandbox.create(control_plane_url=PLANE)
    try:
        sbx.kill()
        plane.requests.clear()
        with pytest.raises(SandboxException) as caught:
            sbx.egress.update(EgressPolicy("closed"))
        assert caught.value.code == "sandbox_ended" and plane.requests == []
    finally:
        sbx.close()


def test_a_refusal_of_the_control_plane_keeps_the_policy(plane: FakePlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.refusal = {
            "code": "invalid_argument",
            "message": "egress: the template cannot close egress",
            "context": {"field": "egress"},
        }
        with pytest.raises(InvalidArgumentException) as caught:
            sbx.egress.update(EgressPolicy("closed"))
        assert caught.value.field == "egress"
        assert sbx.egress.policy == EgressPolicy("open")


# --- the async handle -------------------------------------------------------------------------------


async def test_the_async_handle_creates_reads_and_updates(plane: FakePlane) -> None:
    egress = {"mode": "allowlist", "allow": ["PyPI.org"]}
    sbx = await AsyncSandbox.create(egress=egress, control_plane_url=PLANE)
    try:
        assert plane.create_body["egress"] == {"mode": "allowlist", "allow": ["pypi.org"], "deny": []}
        assert isinstance(sbx.egress, AsyncSandboxEgress)
        assert sbx.egress.policy == EgressPolicy("allowlist", allow=["pypi.org"])
        new = await sbx.egress.update({"mode": "open", "deny": ["10.1.2.3/16"]})
        assert new == EgressPolicy("open", deny=["10.1.0.0/16"]) == sbx.egress.policy
        (put,) = [r for r in plane.requests if r[0] == "PUT"]
        assert put[1:] == (
            f"{PLANE}/v1/sandboxes/{SBX}/egress",
            f"Bearer {TOKEN}",
            {"mode": "open", "allow": [], "deny": ["10.1.0.0/16"]},
        )
        with pytest.raises(InvalidArgumentException) as caught:
            await sbx.egress.update({"mode": "closed", "deny": ["a.example"]})
        assert caught.value.field == "deny"
    finally:
        await sbx.close()
    connected = await AsyncSandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert connected.egress.policy == EgressPolicy("open", deny=["10.1.0.0/16"])
    finally:
        await connected.close()
