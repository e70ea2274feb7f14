"""Signed webhooks against the session's control plane (TypeScript's
``test/integration/sandbox/webhooks.test.ts`` and ``test/unit/control-plane/webhooks.test.ts`` test
delivery, retries and restarts): a sandbox created with ``webhook_url`` pointing at a receiver on
loopback gets its ``created`` and, once killed, ``ended`` events there, each verified with
``verify_webhook_signature`` under the control plane's secret (its state folder's ``webhook-secret``)
over the raw body, parsed as a ``WebhookEvent``, the id header the event's id; a tampered body does not
verify. The test ends the sandbox it created."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from conftest import ControlPlane
from sdk import (
    WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    WEBHOOK_TIMESTAMP_HEADER,
    Sandbox,
    WebhookEvent,
    verify_webhook_signature,
)


class Receiver:
    """An HTTP server on loopback keeping each POST's headers and raw body, answering 204."""

    def __init__(self) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self._arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver._arrived:
                    receiver.posts.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    receiver._arrived.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/sdk"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, count: int, seconds: float = 60) -> list[tuple[dict[str, str], bytes]]:
        """The first ``count`` POSTs, once they arrived."""
        deadline = time.monotonic() + seconds
        with self._arrived:
            while len(self.posts) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.posts)} webhook(s) arrived, not {count}"
                self._arrived.wait(left)
            return list(self.posts[:count])

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    try:
        yield made
    finally:
        made.stop()


def test_a_sandbox_webhook_is_signed_and_verified_in_python(control_plane: ControlPlane, receiver: Receiver) -> None:
    secret = Path(control_plane.state_dir, "webhook-secret").read_text().strip()
    sbx = Sandbox.create(template="sdk-base", webhook_url=receiver.url, metadata={"suite": "python"})
    try:
        assert "webhook" not in repr(sbx.get_info()).lower()  # kept in its facts, never shown
        sbx.kill()
    finally:
        sbx.close()
    posts = receiver.wait_for(2)
    events = []
    for headers, body in posts:
        timestamp, signature = headers.get(WEBHOOK_TIMESTAMP_HEADER), headers.get(WEBHOOK_SIGNATURE_HEADER)
        assert verify_webhook_signature(secret, timestamp, body, signature)
        assert verify_webhook_signature(secret, timestamp, body.decode(), signature)
        assert not verify_webhook_signature(secret, timestamp, body + b" ", signature)
        assert not verify_webhook_signature("not-the-secret-0123", timestamp, body, signature)
        event = WebhookEvent.model_validate_json(body)
        assert headers.get(WEBHOOK_ID_HEADER) == event.id
        events.append(event)
    assert [(e.type, e.state, e.reason) for e in events] == [
        ("sandbox.lifecycle.created", "running", None),
        ("sandbox.lifecycle.ended", "ended", "killed"),
    ]
    assert {e.sandbox_id for e in events} == {sbx.sandbox_id}
    assert events[0].metadata == {"suite": "python"} and events[0].template == "sdk-base"
    assert events[0].seq < events[1].seq
