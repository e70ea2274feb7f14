"""Preview URLs through the Python SDK against the session's control plane (TypeScript's
``test/integration/sandbox/preview-urls.test.ts`` tests the forwarding itself: events, WebSockets,
cookies, pauses): a Node server on the sandbox's loopback reached with ``sbx.ports.url`` (the token the
Python SDK derived is the one the control plane derives), with ``token`` in the header, refused without
a token until ``expose(public=True)``, ``public_ports``, a closed port as ``port_closed``, and a
connected handle's URL. The test ends the sandbox it created."""

from __future__ import annotations

import time

import httpx
import pytest

from conftest import ControlPlane
from sdk import AuthenticationException, Sandbox
from sdk.ports import PREVIEW_TOKEN_HEADER

PORT = 8000
SERVER = (
    "node -e \"require('http').createServer((q, s) => s.end('hello ' + q.url.split('?')[0]))"
    f".listen({PORT}, '127.0.0.1')\""
)


def wait_for_app(url: str) -> httpx.Response:
    """The app's answer once it listens (a closed port answers 502 until then)."""
    deadline = time.monotonic() + 30
    while True:
        answer = httpx.get(url, timeout=10)
        if answer.status_code != 502 or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def test_a_port_is_reached_with_the_python_token(control_plane: ControlPlane) -> None:
    sbx = Sandbox.create(template="sdk-base")
    try:
        sbx.commands.run(SERVER, background=True)
        url = sbx.ports.url(PORT)
        assert url == sbx.get_host(PORT)
        bare = url.split("?", 1)[0]
        assert bare == f"{control_plane.url}/v1/sandboxes/{sbx.sandbox_id}/ports/{PORT}/"
        linked = wait_for_app(url)  # a program's request: forwarded (a browser's gets the cookie instead)
        assert (linked.status_code, linked.text) == (200, "hello /")
        by_header = httpx.get(bare, headers={PREVIEW_TOKEN_HEADER: sbx.ports.token(PORT)}, timeout=10)
        assert (by_header.status_code, by_header.text) == (200, "hello /")
        refused = httpx.get(bare, timeout=10)
        assert refused.status_code in (401, 403)
        wrong = httpx.get(bare, headers={PREVIEW_TOKEN_HEADER: sbx.ports.token(PORT + 1)}, timeout=10)
        assert wrong.status_code in (401, 403)

        assert sbx.ports.public_ports() == []
        sbx.ports.expose(PORT, public=True)
        assert sbx.ports.public_ports() == [PORT]
        assert httpx.get(bare, timeout=10).text == "hello /"
        sbx.ports.expose(PORT, public=False)
        assert sbx.ports.public_ports() == []
        assert httpx.get(bare, timeout=10).status_code in (401, 403)

        other = bare.replace(f"/{PORT}/", "/8001/")
        closed = httpx.get(other, headers={PREVIEW_TOKEN_HEADER: sbx.ports.token(8001)}, timeout=10)
        assert closed.status_code == 502 and closed.json()["code"] == "port_closed"

        connected = Sandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
        try:
            assert connected.ports.url(PORT) == url
        finally:
            connected.close()
        stranger = Sandbox.connect(sbx.sandbox_id, access_token="not-the-token-" + "z" * 16)
        try:
            with pytest.raises(AuthenticationException):
                stranger.ports.url(PORT)
        finally:
            stranger.close()
    finally:
        sbx.kill()
        sbx.close()
