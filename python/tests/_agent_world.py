"""What the agent tests stand on: the scripted chat-completions model (``scripted_model.py``) run in the
gateway tests' network namespace on its own port with the same test certificate, so the session's
control plane (``sdk serve --gateway-ca``) trusts it; its script and records live in a temp folder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from _world import Pki, Upstream

from sdk import Sandbox, SecretCache, SecretStore, compatible_gateway

REPO = Path(__file__).resolve().parents[2]

#: The planted model key: it must reach the model and nothing the agent, events or results show.
MODEL_KEY = "sk-py-agent-planted-7a6b5c4d3e2f1a0b9c8d"


def typescript_tool_then_text_events() -> list[str]:
    """``TOOL_THEN_TEXT_EVENTS`` as the TypeScript tests define it (``test/support/model-server/script.ts``)."""
    source = (REPO / "test" / "support" / "model-server" / "script.ts").read_text()
    found = re.search(r"TOOL_THEN_TEXT_EVENTS[^=]*=\s*\[(.*?)\]", source, re.S)
    assert found is not None
    return re.findall(r"'([a-z_]+)'", found.group(1))


def text(value: str) -> dict[str, Any]:
    """A turn answering with text."""
    return {"type": "text", "text": value}


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A turn calling one tool."""
    return {"type": "tool-call", "name": name, "arguments": arguments}


class ScriptedModel:
    """The scripted model: ``origin``, ``script(...)`` and the ``requests()`` it received."""

    def __init__(self, pki: Pki, upstream: Upstream, folder: str, port: int = 8444) -> None:
        self._dir = Path(folder)
        (self._dir / "key").write_text(MODEL_KEY)
        self.script()
        script = str(Path(__file__).with_name("scripted_model.py"))
        self._process = subprocess.Popen(
            ["ip", "netns", "exec", upstream.ns, sys.executable, script,
             pki.cert_file, pki.key_file, pki.ns_address, str(port), folder],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self._process.stdout is not None
        if self._process.stdout.readline().strip() != "ready":
            self.stop()
            raise RuntimeError("the scripted model did not start")
        self.origin = f"https://{pki.ns_address}:{port}"

    def script(self, *turns: dict[str, Any]) -> None:
        """Replaces the script and forgets the requests so far."""
        (self._dir / "script.json").write_text(json.dumps(list(turns)))
        (self._dir / "requests.jsonl").write_text("")

    def requests(self) -> list[dict[str, Any]]:
        """The requests since the last ``script``: path, key_injected, tools, model."""
        lines = (self._dir / "requests.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines if line]

    def stop(self) -> None:
        """Ends the server."""
        if self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)
        if self._process.stdout is not None:
            self._process.stdout.close()


@contextmanager
def running_model(pki: Pki, upstream: Upstream, port: int = 8444) -> Iterator[ScriptedModel]:
    """A scripted model on ``port`` for the time of the block, its temp folder removed after."""
    with tempfile.TemporaryDirectory(prefix="sdk-python-model-") as folder:
        server = ScriptedModel(pki, upstream, folder, port=port)
        try:
            yield server
        finally:
            server.stop()


@contextmanager
def agent_sandbox(model: ScriptedModel) -> Iterator[Sandbox]:
    """A closed-egress ``sdk-agent`` sandbox whose route ``llm`` (the compatible preset, base path
    ``/v1``) reaches ``model`` with the planted key, from a local secret store in a temp folder."""
    with tempfile.TemporaryDirectory(prefix="sdk-python-agent-secrets-") as folder:
        store = SecretStore(file=str(Path(folder, "secrets.json")))
        store.create("model-key", f"Bearer {MODEL_KEY}")
        llm = compatible_gateway("model-key", upstream=model.origin, base_path="/v1", rate_per_minute=6000)
        with Sandbox.create(
            template="sdk-agent",
            allow_internet_access=False,
            gateways={"llm": llm},
            secret_cache=SecretCache(store=store),
        ) as made:
            yield made
