"""Preview URLs through the Python SDK (issue 28, ``sdk/sandbox-ports.ts``): ``sbx.ports.token`` equal to
TypeScript's ``portToken`` (a fixed vector computed with Node, and the built ``protocol/preview-wire.js``
on several keys), ``url`` and ``sbx.get_host`` from the pattern of create, fork and connect with no call,
``expose`` and ``public_ports`` as ``PUT``/``GET /v1/sandboxes/:id/previews…`` with the sandbox's token,
bad ports and options refused before any call, no preview key (a token connect did not admit) as
``AuthenticationException``, the wire models of the answers, the ``preview`` record of sandboxd's feed,
the two new error codes, and the async twin. Against the fake control plane of ``test_egress.py`` with
the previews and fork added; the key never shown by a handle is also ``test_token_display.py``'s."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Callable

import httpx
import pytest
from pydantic import ValidationError

from _httpx_fake import answer_httpx_with
from conftest import REPO
from test_egress import DAEMON, OPEN, PLANE, PREVIEW_KEY, PREVIEW_URL, SBX, TOKEN, FakePlane, info

from sdk import (
    AsyncSandbox,
    AsyncSandboxPorts,
    AuthenticationException,
    InvalidArgumentException,
    PreviewTraffic,
    Sandbox,
    SandboxException,
    SandboxPorts,
    error_from_envelope,
)
from sdk._wire import ConnectedSandbox, CreatedSandbox, ForkedSandboxes
from sdk.compat.e2b import SandboxException as E2BSandboxException
from sdk.compat.e2b.exceptions import from_native
from sdk.daemon_events import parse_daemon_event
from sdk.ports import PREVIEW_TOKEN_PARAM, port_token, preview_url_of

#: ``node -e "const c=require('crypto');console.log(c.createHmac('sha256','key-1').update('port 8000').digest('base64url'))"``
NODE_VECTOR = ("key-1", 8000, "Zo0Ud7XvkLiftlCun9BXKsKPzP91C2i_FGKbP1AmP-0")
FORKED = "fedcba987654"
FORKED_KEY = "forked-preview-key-" + "f" * 16
SNAPSHOT = {
    "snapshotId": "snap_0123456789abcdef", "sandboxId": SBX, "createdAt": 1_800_000_000_000,
    "kind": "filesystem", "isolation": "namespace", "template": "sdk-base", "bytes": 4096,
}  # fmt: skip
BAD_PORTS: tuple[object, ...] = (0, -1, 65_536, 80.5, float("nan"), "8000", True, False, None, [8000])


class PortsPlane(FakePlane):
    """``test_egress.FakePlane`` with ``PUT /v1/sandboxes/:id/previews/:port`` (``{port, public}``, the
    public ports kept), ``GET /v1/sandboxes/:id/previews`` and a fork of one sandbox."""

    def __init__(self) -> None:
        super().__init__()
        self.public: set[int] = set()

    def answer(self, request: httpx.Request) -> httpx.Response:
        at = (request.method, str(request.url))
        previews = f"{PLANE}/v1/sandboxes/{SBX}/previews"
        if at == ("GET", previews) or (request.method == "PUT" and str(request.url).startswith(f"{previews}/")):
            body: Any = json.loads(request.content) if request.content else None
            self.requests.append((request.method, str(request.url), request.headers.get("authorization"), body))
            if request.method == "GET":
                return httpx.Response(200, json={"ports": [{"port": p, "public": True} for p in sorted(self.public)]})
            port = int(str(request.url).rsplit("/", 1)[1])
            (self.public.add if body["public"] else self.public.discard)(port)
            return httpx.Response(200, json={"port": port, "public": body["public"]})
        if at == ("POST", f"{PLANE}/v1/sandboxes/{SBX}/fork"):
            self.requests.append((request.method, str(request.url), request.headers.get("authorization"), None))
            forked = info(OPEN, sandboxId=FORKED, daemonUrl=DAEMON, accessToken="forked-" + "t" * 20)
            pattern = f"http://{{port}}-{FORKED}.preview.test:4780/"
            sandbox = {**forked, "previewKey": FORKED_KEY, "previewUrl": pattern}
            return httpx.Response(201, json={"snapshot": SNAPSHOT, "sandboxes": [sandbox]})
        return super().answer(request)

    def sent(self) -> list[tuple[str, str, str | None, Any]]:
        """The previews requests: method, path, authorization, body."""
        return [(m, url.removeprefix(PLANE), auth, body) for m, url, auth, body in self.requests if "/previews" in url]


@pytest.fixture
def plane(monkeypatch: pytest.MonkeyPatch) -> PortsPlane:
    """The fake control plane behind the sync and async clients."""
    fake = PortsPlane()
    answer_httpx_with(monkeypatch, fake.answer)
    monkeypatch.setenv("SDK_API_KEY", "operator-key")
    return fake


def expected_url(port: int, key: str = PREVIEW_KEY) -> str:
    return f"{PLANE}/v1/sandboxes/{SBX}/ports/{port}/?{PREVIEW_TOKEN_PARAM}={port_token(key, port)}"


# --- the token and the URL --------------------------------------------------------------------------


def test_the_token_is_typescripts_port_token() -> None:
    key, port, token = NODE_VECTOR
    assert port_token(key, port) == token
    assert "=" not in token and "+" not in token and "/" not in token  # base64url, no padding


def test_the_token_matches_the_built_typescript_on_other_keys_and_ports() -> None:
    cases = [("key-1", 1), ("key-1", 65_535), ("ключ-🔑", 3000), ("x" * 200, 8080), ("", 443)]
    script = (
        "import('./dist/protocol/preview-wire.js').then((m) => process.stdout.write(JSON.stringify("
        f"{json.dumps(cases)}.map(([k, p]) => m.portToken(k, p)))))"
    )
    out = subprocess.run(["node", "-e", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [port_token(key, port) for key, port in cases]


def test_the_url_replaces_the_first_placeholder_and_adds_the_token() -> None:
    assert preview_url_of("http://h:1/v1/sandboxes/s/ports/{port}/", 8000) == "http://h:1/v1/sandboxes/s/ports/8000/"
    assert preview_url_of("http://{port}-s.preview.test/", 3000, "tok") == (
        f"http://3000-s.preview.test/?{PREVIEW_TOKEN_PARAM}=tok"
    )
    assert preview_url_of("http://{port}/{port}/", 1) == "http://1/{port}/"  # as JavaScript's replace


def test_url_token_and_get_host_make_no_call(plane: PortsPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        assert isinstance(sbx.ports, SandboxPorts)
        plane.requests.clear()
        assert sbx.ports.token(8000) == port_token(PREVIEW_KEY, 8000)
        assert sbx.ports.url(8000) == expected_url(8000)
        assert sbx.get_host(8000) == sbx.ports.url(8000)
        assert sbx.ports.url(1) == expected_url(1) and sbx.ports.url(65_535) == expected_url(65_535)
        # A whole float is the port, as TypeScript's number is (and ``fork(count=2.0)`` is 2).
        assert sbx.ports.url(8000.0) == expected_url(8000)  # type: ignore[arg-type]
        assert plane.requests == []


def test_bad_ports_are_refused_before_any_call(plane: PortsPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        plane.requests.clear()
        attempts: list[Callable[[Any], object]] = [
            sbx.ports.url, sbx.ports.token, sbx.get_host, lambda port: sbx.ports.expose(port, public=True),
        ]  # fmt: skip
        for port in BAD_PORTS:
            for attempt in attempts:
                with pytest.raises(InvalidArgumentException) as caught:
                    attempt(port)
                assert caught.value.field == "port" and caught.value.message.startswith("sbx.ports: port: ")
        for public in (None, 1, "true"):
            with pytest.raises(InvalidArgumentException) as caught:
                sbx.ports.expose(8000, public=public)  # type: ignore[arg-type]
            assert caught.value.field == "public"
        assert plane.requests == []


# --- expose and public_ports ------------------------------------------------------------------------


def test_expose_and_public_ports_call_the_control_plane_with_the_token(plane: PortsPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        assert sbx.ports.public_ports() == []
        sbx.ports.expose(8000, public=True)
        sbx.ports.expose(3000, public=True)
        assert sbx.ports.public_ports() == [3000, 8000]
        sbx.ports.expose(8000, public=False)
        assert sbx.ports.public_ports() == [3000]
        bearer = f"Bearer {TOKEN}"
        previews = f"/v1/sandboxes/{SBX}/previews"
        assert plane.sent() == [
            ("GET", previews, bearer, None),
            ("PUT", f"{previews}/8000", bearer, {"public": True}),
            ("PUT", f"{previews}/3000", bearer, {"public": True}),
            ("GET", previews, bearer, None),
            ("PUT", f"{previews}/8000", bearer, {"public": False}),
            ("GET", previews, bearer, None),
        ]


def test_expose_on_an_ended_sandbox_is_refused_before_any_call(plane: PortsPlane) -> None:
    sbx = Sandbox.create(control_plane_url=PLANE)
    try:
        sbx.kill()
        plane.requests.clear()
        calls: list[Callable[[], object]] = [lambda: sbx.ports.expose(8000, public=True), sbx.ports.public_ports]
        for attempt in calls:
            with pytest.raises(SandboxException) as caught:
                attempt()
            assert caught.value.code == "sandbox_ended"
        assert plane.requests == []
    finally:
        sbx.close()


# --- connect, fork, no key --------------------------------------------------------------------------


def test_a_connected_handle_with_the_token_has_the_preview_key(plane: PortsPlane) -> None:
    sbx = Sandbox.connect(SBX, access_token=TOKEN, control_plane_url=PLANE)
    try:
        assert sbx.ports.url(8000) == expected_url(8000) == sbx.get_host(8000)
    finally:
        sbx.close()


def test_a_handle_without_a_preview_key_raises_authentication(plane: PortsPlane) -> None:
    # The control plane leaves previewKey out of connect for a token it does not admit.
    sbx = Sandbox.connect(SBX, access_token="not-the-token-" + "y" * 10, control_plane_url=PLANE)
    try:
        plane.requests.clear()
        attempts: list[Callable[[int], str]] = [sbx.ports.url, sbx.ports.token, sbx.get_host]
        for attempt in attempts:
            with pytest.raises(AuthenticationException) as caught:
                attempt(8000)
            assert caught.value.code == "unauthenticated"
        with pytest.raises(InvalidArgumentException):  # the port is checked first, as TypeScript's url
            sbx.ports.url(0)
        assert plane.requests == []
    finally:
        sbx.close()


def test_forked_handles_have_their_own_preview_key_and_url(plane: PortsPlane) -> None:
    with Sandbox.create(control_plane_url=PLANE) as sbx:
        (forked,) = sbx.fork(count=1)
        try:
            token = port_token(FORKED_KEY, 5173)
            assert forked.ports.url(5173) == f"http://5173-{FORKED}.preview.test:4780/?{PREVIEW_TOKEN_PARAM}={token}"
            assert forked.ports.token(5173) != sbx.ports.token(5173)
        finally:
            forked.close()


# --- the wire ---------------------------------------------------------------------------------------


def test_the_answers_carry_the_preview_facts() -> None:
    created = info(OPEN, daemonUrl=DAEMON, accessToken=TOKEN, previewKey=PREVIEW_KEY, previewUrl=PREVIEW_URL)
    parsed = CreatedSandbox.model_validate(created, strict=True)
    assert (parsed.preview_key, parsed.preview_url) == (PREVIEW_KEY, PREVIEW_URL)
    assert PREVIEW_KEY not in repr(parsed) and TOKEN not in repr(parsed)
    for missing in ("previewKey", "previewUrl"):
        with pytest.raises(ValidationError):
            CreatedSandbox.model_validate({k: v for k, v in created.items() if k != missing}, strict=True)
    forked = ForkedSandboxes.model_validate({"snapshot": SNAPSHOT, "sandboxes": [created]}, strict=True)
    assert forked.sandboxes[0].preview_key == PREVIEW_KEY

    connected = info(OPEN, daemonUrl=DAEMON, previewUrl=PREVIEW_URL)
    assert ConnectedSandbox.model_validate(connected, strict=True).preview_key is None  # not admitted
    admitted = ConnectedSandbox.model_validate({**connected, "previewKey": PREVIEW_KEY}, strict=True)
    assert admitted.preview_key == PREVIEW_KEY and PREVIEW_KEY not in repr(admitted)
    for wrong in ({**connected, "previewKey": None}, {k: v for k, v in connected.items() if k != "previewUrl"}):
        with pytest.raises(ValidationError):  # zod's optional(): absent, never null; the URL required
            ConnectedSandbox.model_validate(wrong, strict=True)


def test_the_preview_record_of_sandboxds_feed_is_read() -> None:
    record = parse_daemon_event({"seq": 9, "at": 1.5, "type": "preview", "port": 8000, "bytes": 0})
    assert isinstance(record, PreviewTraffic)
    assert (record.seq, record.type, record.port, record.bytes) == (9, "preview", 8000, 0)
    moved = parse_daemon_event({"seq": 10, "at": 2.5, "type": "preview", "port": 8000, "bytes": 123_456})
    assert isinstance(moved, PreviewTraffic) and moved.bytes == 123_456
    base = {"seq": 1, "at": 1.0, "type": "preview", "port": 8000, "bytes": 1}
    for bad in ({**base, "bytes": -1}, {**base, "port": "8000"}, {**base, "extra": 1}, {**base, "port": 1.5}):
        assert parse_daemon_event(bad) is None
    assert parse_daemon_event({k: v for k, v in base.items() if k != "bytes"}) is None


def test_the_preview_error_codes_are_sandbox_exceptions() -> None:
    for code in ("port_closed", "port_forbidden"):
        error = error_from_envelope({"code": code, "message": "preview: refused"})
        assert type(error) is SandboxException and error.code == code
        shim = from_native(error)
        assert type(shim) is E2BSandboxException and shim.code == code


# --- the async handle -------------------------------------------------------------------------------


async def test_the_async_twin(plane: PortsPlane) -> None:
    sbx = await AsyncSandbox.create(control_plane_url=PLANE)
    try:
        assert isinstance(sbx.ports, AsyncSandboxPorts)
        plane.requests.clear()
        assert sbx.ports.url(8000) == expected_url(8000) == sbx.get_host(8000)
        assert sbx.ports.token(8000) == port_token(PREVIEW_KEY, 8000)
        for port in BAD_PORTS:
            with pytest.raises(InvalidArgumentException):
                await sbx.ports.expose(port, public=True)  # type: ignore[arg-type]
            with pytest.raises(InvalidArgumentException):
                sbx.get_host(port)  # type: ignore[arg-type]
        assert plane.requests == []
        await sbx.ports.expose(8000, public=True)
        assert await sbx.ports.public_ports() == [8000]
        previews = f"/v1/sandboxes/{SBX}/previews"
        assert plane.sent() == [
            ("PUT", f"{previews}/8000", f"Bearer {TOKEN}", {"public": True}),
            ("GET", previews, f"Bearer {TOKEN}", None),
        ]
        assert PREVIEW_KEY not in repr(sbx.ports) and PREVIEW_KEY not in repr(vars(sbx.ports))
    finally:
        await sbx.close()
    stranger = await AsyncSandbox.connect(SBX, access_token="not-the-token-" + "y" * 10, control_plane_url=PLANE)
    try:
        with pytest.raises(AuthenticationException):
            stranger.ports.url(8000)
    finally:
        await stranger.close()
