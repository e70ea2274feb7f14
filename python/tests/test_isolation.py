"""A sandbox's isolation (``namespace`` or ``gvisor``): ``Sandbox.create(isolation=...)`` and
``AsyncSandbox.create``, else ``SDK_ISOLATION``, sent in the create body only when one was chosen, checked
before any call as ``sdk/sandbox-options.ts`` and ``protocol/isolation-environment.ts`` check it; and
``isolation`` on every ``SandboxInfo``. Against a fake control plane (httpx's ``send`` answered here, so
the body is seen and a gVisor sandbox needs no runsc); the E2B shim honours ``SDK_ISOLATION`` too and its
``SandboxInfo`` leaves the field out."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import httpx
import pytest

from _httpx_fake import answer_httpx_with

from sdk import AsyncSandbox, InvalidArgumentException, Sandbox, SandboxInfo
from sdk._sandbox_options import isolation_from_environment
from sdk.compat import e2b

PLANE = "http://plane.test"
DAEMON = "http://daemon.test"
SBX = "0123456789ab"


def info(isolation: str, **more: object) -> dict[str, Any]:
    """A sandbox's facts as the control plane sends them."""
    return {
        "sandboxId": SBX, "template": "sdk-base", "isolation": isolation, "state": "running",
        "allowInternetAccess": True, "egress": {"mode": "open", "allow": [], "deny": []},
        "endReason": None, "suspendReason": None,
        "deadlineAt": 1_900_000_000_000, "startedAt": 1_899_996_400_000, "metadata": {}, "seq": 1, **more,
    }  # fmt: skip


class FakePlane:
    """Answers the create (``isolation`` as sent, else ``namespace``, the control plane's default), a
    sandbox's facts, and sandboxd's ``PUT /v1/secrets``; keeps each request's method, URL
    and body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        self.isolation = "namespace"

    def answer(self, request: httpx.Request) -> httpx.Response:
        body: Any = json.loads(request.content) if request.content else None
        self.requests.append((request.method, str(request.url), body))
        if (request.method, str(request.url)) == ("POST", f"{PLANE}/v1/sandboxes"):
            self.isolation = body.get("isolation", "namespace")
            created = info(
                self.isolation, daemonUrl=DAEMON, accessToken="token-" + "x" * 20, previewKey="preview-key",
                previewUrl=f"{PLANE}/v1/sandboxes/{SBX}/ports/{{port}}/",
            )
            return httpx.Response(201, json=created)
        if (request.method, str(request.url)) == ("GET", f"{PLANE}/v1/sandboxes/{SBX}"):
            return httpx.Response(200, json=info(self.isolation))
        if (request.method, str(request.url)) == ("PUT", f"{DAEMON}/v1/secrets"):
            return httpx.Response(200, json={"names": sorted(body)})
        return httpx.Response(404, json={"code": "not_found", "message": "not faked"})

    @property
    def create_body(self) -> dict[str, Any]:
        create = ("POST", f"{PLANE}/v1/sandboxes")
        (body,) = [body for method, url, body in self.requests if (method, url) == create]
        assert isinstance(body, dict)
        return body


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> FakePlane:
    """The fake control plane behind the sync and async clients; ``SDK_ISOLATION`` unset."""
    fake = FakePlane()

    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


def refuse(*args: Any, **kwargs: Any) -> NoReturn:
    raise AssertionError("an HTTP request was sent")


def create(isolation: object = None) -> Sandbox:
    return Sandbox.create(isolation=isolation, control_plane_url=PLANE)  # type: ignore[arg-type]


# --- the create body --------------------------------------------------------------------------------


def test_isolation_is_sent_and_read_back(plane: FakePlane) -> None:
    sbx = create("gvisor")
    try:
        assert plane.create_body["isolation"] == "gvisor"
        got = sbx.get_info()
        assert isinstance(got, SandboxInfo) and got.isolation == "gvisor"
    finally:
        sbx.close()


def test_no_isolation_is_sent_when_none_is_chosen(plane: FakePlane) -> None:
    sbx = create()
    try:
        assert "isolation" not in plane.create_body  # the control plane's default
        assert sbx.get_info().isolation == "namespace"
    finally:
        sbx.close()


def test_sdk_isolation_is_the_default_and_the_argument_wins(
    plane: FakePlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDK_ISOLATION", "gvisor")
    create().close()
    assert plane.create_body["isolation"] == "gvisor"
    plane.requests.clear()
    create("namespace").close()
    assert plane.create_body["isolation"] == "namespace"
    plane.requests.clear()
    monkeypatch.setenv("SDK_ISOLATION", "")  # empty is unset
    create().close()
    assert "isolation" not in plane.create_body


async def test_async_create_sends_the_isolation_and_sdk_isolation(
    plane: FakePlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    sbx = await AsyncSandbox.create(isolation="gvisor", control_plane_url=PLANE)
    try:
        assert plane.create_body["isolation"] == "gvisor"
        assert (await sbx.get_info()).isolation == "gvisor"
    finally:
        await sbx.close()
    plane.requests.clear()
    await (await AsyncSandbox.create(control_plane_url=PLANE)).close()
    assert "isolation" not in plane.create_body
    plane.requests.clear()
    monkeypatch.setenv("SDK_ISOLATION", "gvisor")
    await (await AsyncSandbox.create(control_plane_url=PLANE)).close()
    assert plane.create_body["isolation"] == "gvisor"


# --- refusals before any call -----------------------------------------------------------------------


@pytest.mark.parametrize("isolation", ["kvm", "GVISOR", "", 5, True, ["gvisor"]])
def test_a_bad_isolation_is_refused_before_any_call(
    monkeypatch: pytest.MonkeyPatch, no_traffic: None, isolation: object
) -> None:
    monkeypatch.delenv("SDK_ISOLATION", raising=False)
    with pytest.raises(InvalidArgumentException) as raised:
        create(isolation)
    assert raised.value.field == "isolation"
    assert raised.value.message == "Sandbox.create: isolation: must be namespace or gvisor"


async def test_a_bad_isolation_is_refused_before_any_async_call(
    monkeypatch: pytest.MonkeyPatch, no_traffic: None
) -> None:
    monkeypatch.delenv("SDK_ISOLATION", raising=False)
    with pytest.raises(InvalidArgumentException) as raised:
        await AsyncSandbox.create(isolation="vm", control_plane_url=PLANE)  # type: ignore[arg-type]
    assert raised.value.field == "isolation"


@pytest.mark.parametrize("value", ["kvm", "Namespace", " gvisor", "é"])
async def test_a_bad_sdk_isolation_is_refused_before_any_call(
    monkeypatch: pytest.MonkeyPatch, no_traffic: None, value: str
) -> None:
    monkeypatch.setenv("SDK_ISOLATION", value)
    message = f"SDK_ISOLATION: must be namespace or gvisor, not {json.dumps(value, ensure_ascii=False)}"
    with pytest.raises(InvalidArgumentException) as raised:
        create()
    assert (raised.value.field, raised.value.message, raised.value.code) == ("isolation", message, "invalid_argument")
    with pytest.raises(InvalidArgumentException) as async_raised:
        await AsyncSandbox.create(control_plane_url=PLANE)
    assert (async_raised.value.field, async_raised.value.message) == ("isolation", message)
    with pytest.raises(InvalidArgumentException):
        isolation_from_environment()


def test_a_bad_sdk_isolation_is_not_read_when_the_argument_is_given(
    plane: FakePlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDK_ISOLATION", "kvm")
    create("gvisor").close()
    assert plane.create_body["isolation"] == "gvisor"


def test_the_other_options_are_checked_before_sdk_isolation(
    monkeypatch: pytest.MonkeyPatch, no_traffic: None
) -> None:
    monkeypatch.setenv("SDK_ISOLATION", "kvm")
    with pytest.raises(InvalidArgumentException) as raised:
        Sandbox.create(timeout=0)
    assert raised.value.field == "timeout"  # as TypeScript: the options first, then SDK_ISOLATION


# --- the E2B shim -----------------------------------------------------------------------------------


def test_the_e2b_shim_sends_sdk_isolation_and_leaves_it_out_of_its_info(
    plane: FakePlane, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDK_CONTROL_PLANE_URL", PLANE)
    monkeypatch.setenv("SDK_ISOLATION", "gvisor")
    sbx = e2b.Sandbox.create()
    try:
        assert plane.create_body["isolation"] == "gvisor"
        got = sbx.get_info()
        assert isinstance(got, e2b.SandboxInfo) and got.sandbox_id == SBX
        assert not hasattr(got, "isolation")  # E2B's SandboxInfo has no such field
    finally:
        sbx.close()
    monkeypatch.setenv("SDK_ISOLATION", "kvm")
    with monkeypatch.context() as patched:
        patched.setattr(httpx.Client, "send", refuse)
        with pytest.raises(e2b.InvalidArgumentException, match='^SDK_ISOLATION: must be .* not "kvm"$'):
            e2b.Sandbox.create()
