"""Test session fixtures: a real control plane (``sdk serve`` from the built package, as root, with a
state folder of its own, the test CA as its gateways' trust roots and metrics sampled every half second)
that the Python SDK talks to, the repository's paths, ``no_traffic`` (for a test that must send no HTTP
request), the HTTPS upstream of the gateway tests in a network namespace, and moto's server for Secrets
Manager (``_world.py``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any, Iterator, NoReturn

import httpx
import pytest

from _world import Moto, Pki, Upstream, make_pki

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "cli" / "sdk.js"
#: How often the session's control plane samples each running sandbox's use (``sbx.get_metrics()``), ms:
#: half a second, so a test sees what sandbox code did within a second (5 s by default).
METRICS_INTERVAL_MS = 500


class ControlPlane:
    """A running ``sdk serve``: its URL and operator key."""

    def __init__(self, url: str, operator_key: str, state_dir: str) -> None:
        self.url = url
        self.operator_key = operator_key
        self.state_dir = state_dir

    def _call(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"authorization": f"Bearer {self.operator_key}"}
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read() or b"null")

    def live_ids(self) -> set[str]:
        """Ids of the sandboxes this control plane has that have not ended."""
        listed = self._call("GET", "/v1/sandboxes")
        return {
            str(s["sandboxId"])
            for s in (listed if isinstance(listed, list) else [])
            if isinstance(s, dict) and s.get("state") != "ended"
        }

    def kill_all(self) -> None:
        """Kills every sandbox this control plane still runs (the tests' own: its state folder is new)."""
        listed = self._call("GET", "/v1/sandboxes")
        for sandbox in listed if isinstance(listed, list) else []:
            if isinstance(sandbox, dict) and sandbox.get("state") != "ended":
                self._call("DELETE", f"/v1/sandboxes/{sandbox['sandboxId']}")


def refuse_traffic(*args: Any, **kwargs: Any) -> NoReturn:
    """Stands in for httpx's ``send`` where a test expects no HTTP request."""
    raise AssertionError("an HTTP request was sent")


@pytest.fixture
def no_traffic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any HTTP request from now on fails the test (sync and async clients)."""
    monkeypatch.setattr(httpx.Client, "send", refuse_traffic)
    monkeypatch.setattr(httpx.AsyncClient, "send", refuse_traffic)


@pytest.fixture(scope="session")
def test_pki() -> Iterator[Pki]:
    """A test CA and a server certificate for the upstream's address (made with openssl)."""
    folder = tempfile.mkdtemp(prefix="sdk-python-pki-")
    try:
        yield make_pki(folder)
    finally:
        subprocess.run(["rm", "-rf", folder], check=False)


@pytest.fixture(scope="session")
def https_upstream(test_pki: Pki) -> Iterator[Upstream]:
    """The HTTPS upstream in a test network namespace, reachable by sandboxes' gateways."""
    folder = tempfile.mkdtemp(prefix="sdk-python-upstream-")
    upstream = Upstream(test_pki, folder)
    try:
        yield upstream
    finally:
        upstream.stop()
        subprocess.run(["rm", "-rf", folder], check=False)


@pytest.fixture(scope="session")
def moto() -> Iterator[Moto]:
    """moto's server; throwaway AWS credentials in this process's environment for boto3's chain."""
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
    saved = {name: os.environ.get(name) for name in names}
    os.environ["AWS_ACCESS_KEY_ID"] = "moto-test-access-key"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "moto-test-secret-key"
    os.environ.pop("AWS_SESSION_TOKEN", None)
    server = Moto()
    try:
        yield server
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="session")
def control_plane(test_pki: Pki) -> Iterator[ControlPlane]:
    """``sdk serve`` on a free loopback port, trusting the test CA for gateway upstreams;
    ``SDK_API_KEY`` and ``SDK_CONTROL_PLANE_URL`` point at it."""
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: run npm run build first")
    state_dir = tempfile.mkdtemp(prefix="sdk-python-plane-")
    process = subprocess.Popen(
        ["node", str(CLI), "serve", "--port", "0", "--host", "127.0.0.1", "--state-dir", state_dir,
         "--gateway-ca", test_pki.ca_file, "--dns-server", "127.0.0.1:9",
         "--metrics-interval-ms", str(METRICS_INTERVAL_MS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    url = ""
    assert process.stdout is not None
    for line in process.stdout:
        found = re.match(r"control plane on (http://\S+)", line)
        if found:
            url = found.group(1)
            break
    if not url:
        process.kill()
        process.wait(timeout=30)
        process.stdout.close()
        subprocess.run(["rm", "-rf", state_dir], check=False)
        pytest.fail("sdk serve did not start")
    key = Path(state_dir, "operator-key").read_text().strip()
    saved = {name: os.environ.get(name) for name in ("SDK_API_KEY", "SDK_CONTROL_PLANE_URL")}
    os.environ["SDK_API_KEY"] = key
    os.environ["SDK_CONTROL_PLANE_URL"] = url
    plane = ControlPlane(url, key, state_dir)
    try:
        yield plane
    finally:
        try:
            plane.kill_all()
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            process.stdout.close()
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            subprocess.run(["rm", "-rf", state_dir], check=False)
