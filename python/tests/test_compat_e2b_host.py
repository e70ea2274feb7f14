"""``get_host`` of the E2B shim on the preview URLs (issue 28), as the TypeScript shim's ``getHost``
(``test/unit/compat-e2b-host.test.ts``): E2B's host without a scheme, here the port's preview URL without
its scheme, its token and the slash after the port, for a control plane that answers previews by path and
one that answers them by host (``sdk serve --preview-domain``), on the sync and the async handle; computed
with no call; the port checked as E2B's ``InvalidArgumentException``. ``traffic_access_token`` (E2B's one
token for every port) and ``network.allow_public_traffic=False`` are refused by name. Against a fake
control plane (httpx's ``send`` answered here, as in ``test_compat_e2b_network.py``)."""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import pytest

from _httpx_fake import answer_httpx_with

from sdk import InvalidArgumentException as NativeInvalidArgumentException
from sdk._wire import SandboxInfo as WireSandboxInfo
from sdk.compat.e2b import (
    AsyncSandbox,
    InvalidArgumentException,
    NotSupportedException,
    Sandbox,
    SandboxException,
)
from sdk.compat.e2b._options import TOKENS
from sdk.compat.e2b._sandbox_plan import host_of
from sdk.ports import port_token

PLANE = "http://plane.test:4780"
DAEMON = "http://daemon.test"
SBX = "0123456789ab"
TOKEN = "token-" + "x" * 20
KEY = "operator-key"
PREVIEW_KEY = "preview-key"
BY_PATH = f"{PLANE}/v1/sandboxes/{SBX}/ports/{{port}}/"
BY_HOST = f"http://{{port}}-{SBX}.preview.test:4780/"


#: The facts' names this SDK's wire reads (it refuses others): ``startedAt`` and ``metadata`` only once
#: it knows them.
FACTS = {field.alias or name for name, field in WireSandboxInfo.model_fields.items()}


def info(**more: object) -> dict[str, Any]:
    """A sandbox's facts as the control plane sends them."""
    facts = {
        "sandboxId": SBX, "template": "sdk-base", "isolation": "namespace", "state": "running",
        "allowInternetAccess": True, "egress": {"mode": "open", "allow": [], "deny": []}, "endReason": None,
        "suspendReason": None, "deadlineAt": 1_900_000_000_000, "startedAt": 1_899_996_400_000,
        "metadata": {}, "seq": 1,
    }  # fmt: skip
    return {**{name: value for name, value in facts.items() if name in FACTS}, **more}


class FakePlane:
    """Answers create with ``preview_url`` as the sandbox's preview pattern, its facts, kill and
    sandboxd's ``PUT /v1/secrets``; keeps each request's method and URL."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.preview_url = BY_PATH

    def answer(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        at = (request.method, str(request.url))
        self.requests.append(at)
        if at == ("POST", f"{PLANE}/v1/sandboxes"):
            created = info(daemonUrl=DAEMON, accessToken=TOKEN, previewKey=PREVIEW_KEY, previewUrl=self.preview_url)
            return httpx.Response(201, json=created)
        if at == ("GET", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info())
        if at == ("DELETE", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info(state="ended", endReason="killed"))
        if at == ("PUT", f"{DAEMON}/v1/secrets"):
            return httpx.Response(200, json={"names": sorted(body)})
        return httpx.Response(404, json={"code": "not_found", "message": "not faked"})


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


def test_by_path_the_host_is_the_control_plane_and_the_path_to_the_port(plane: FakePlane) -> None:
    with Sandbox.create() as sbx:
        before = len(plane.requests)
        host = sbx.get_host(3000)
        assert host == f"plane.test:4780/v1/sandboxes/{SBX}/ports/3000"
        assert sbx.get_host(8000) == f"plane.test:4780/v1/sandboxes/{SBX}/ports/8000"
        # The native URL is the same place with the token: get_host is it without scheme, token and slash.
        assert sbx.native.ports.url(3000) == f"http://{host}/?sdk_preview_token={port_token(PREVIEW_KEY, 3000)}"
        assert port_token(PREVIEW_KEY, 3000) not in host
        assert not host.startswith("http") and not host.endswith("/") and "?" not in host
        assert len(plane.requests) == before  # no call


def test_by_host_the_host_is_e2b_s_own_shape(plane: FakePlane) -> None:
    plane.preview_url = BY_HOST
    with Sandbox.create() as sbx:
        before = len(plane.requests)
        assert sbx.get_host(3000) == f"3000-{SBX}.preview.test:4780"
        assert len(plane.requests) == before
    assert host_of(f"http://5173-{SBX}.preview.test/?sdk_preview_token=t") == f"5173-{SBX}.preview.test"
    assert host_of(f"http://5173-{SBX}.preview.test:80/") == f"5173-{SBX}.preview.test"  # as a URL parser
    assert host_of(f"http://127.0.0.1:8080/v1/sandboxes/{SBX}/ports/80/") == f"127.0.0.1:8080/v1/sandboxes/{SBX}/ports/80"


async def test_the_async_handle_answers_the_same_without_a_call(plane: FakePlane) -> None:
    plane.preview_url = BY_HOST
    sbx = await AsyncSandbox.create()
    try:
        before = len(plane.requests)
        assert sbx.get_host(3000) == f"3000-{SBX}.preview.test:4780"
        assert len(plane.requests) == before
        with pytest.raises(NotSupportedException, match="^traffic_access_token is not supported"):
            sbx.traffic_access_token
    finally:
        await sbx.kill()
        await sbx.close()


def test_the_port_is_checked_as_e2b_s_invalid_argument(plane: FakePlane) -> None:
    with Sandbox.create() as sbx:
        before = len(plane.requests)
        for port in (0, 65_536, True, "3000", 80.5):
            with pytest.raises(InvalidArgumentException) as refused:
                sbx.get_host(port)  # type: ignore[arg-type]
            assert isinstance(refused.value.__cause__, NativeInvalidArgumentException), port
        assert sbx.get_host(1).endswith("/ports/1") and sbx.get_host(65_535).endswith("/ports/65535")
        assert len(plane.requests) == before


def test_traffic_access_token_is_refused_naming_the_per_port_token(plane: FakePlane) -> None:
    with Sandbox.create() as sbx:
        with pytest.raises(NotSupportedException) as refused:
            sbx.traffic_access_token
        assert isinstance(refused.value, SandboxException)
        assert refused.value.feature == "traffic_access_token" and refused.value.code == "not_supported"
        assert "per port (sbx.native.ports.token(port), in the x-sdk-preview-token header)" in str(refused.value)
        assert "traffic_access_token" not in vars(sbx)
    # E2B's way to get one is refused at create, before any call, for the same reason.
    before = len(plane.requests)
    with pytest.raises(NotSupportedException, match="per port") as at_create:
        Sandbox.create(network={"allow_public_traffic": False})
    assert at_create.value.feature == "network.allow_public_traffic"
    assert len(plane.requests) == before
