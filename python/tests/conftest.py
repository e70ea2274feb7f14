"""Test session fixtures: a real control plane (``sdk serve`` from the built package, as root, with a
state folder of its own) that the Python SDK talks to, and the repository's paths."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "cli" / "sdk.js"


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

    def kill_all(self) -> None:
        """Kills every sandbox this control plane still runs (the tests' own: its state folder is new)."""
        listed = self._call("GET", "/v1/sandboxes")
        for sandbox in listed if isinstance(listed, list) else []:
            if isinstance(sandbox, dict) and sandbox.get("state") != "ended":
                self._call("DELETE", f"/v1/sandboxes/{sandbox['sandboxId']}")


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """``sdk serve`` on a free loopback port; ``SDK_API_KEY`` and ``SDK_CONTROL_PLANE_URL`` point at it."""
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: run npm run build first")
    state_dir = tempfile.mkdtemp(prefix="sdk-python-plane-")
    process = subprocess.Popen(
        ["node", str(CLI), "serve", "--port", "0", "--host", "127.0.0.1", "--state-dir", state_dir],
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
