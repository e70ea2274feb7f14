"""sandboxd's own feed (``sbx.daemon_events()``, TypeScript's ``sbx.events$``) and the operator's
inspection feed (``Sandbox.inspect()``, TypeScript's ``Sandbox.inspect$``), sync and async, against the
session's control plane with one sandbox for the module (a gateway route and an environment secret whose
values must appear in no record): records in sequence, cursors, resumption after a connection a proxy
cuts, checks before any call, and the operator key's refusal."""

from __future__ import annotations

import tempfile
from itertools import islice
from pathlib import Path
from typing import Iterator

import pytest

from _cut_proxy import CutProxy
from conftest import ControlPlane
from sdk import (
    AsyncSandbox,
    AuthenticationException,
    DaemonCall,
    DaemonEvent,
    DaemonProcess,
    InspectionRecord,
    InvalidArgumentException,
    Sandbox,
    SecretCache,
    SecretGateway,
    SecretStore,
)
from sdk._daemon import daemon

GATEWAY_KEY = "sk-py-inspect-planted-0f1e2d3c4b5a69788796"
ENV_SECRET = "py-env-planted-a1b2c3d4e5f60718293a"


@pytest.fixture(scope="module")
def sbx(control_plane: ControlPlane) -> Iterator[Sandbox]:
    with tempfile.TemporaryDirectory(prefix="sdk-python-inspect-") as folder:
        store = SecretStore(file=str(Path(folder, "secrets.json")))
        store.create("llm-key", GATEWAY_KEY)
        store.create("env-secret", ENV_SECRET)
        gateway = SecretGateway("https://upstream.example", headers={"x-api-key": "llm-key"},
                                allow=[("GET", "/v1/*")])  # fmt: skip
        with Sandbox.create(gateways={"llm": gateway}, secrets={"PLANTED": "env-secret"},
                            secret_cache=SecretCache(store=store)) as made:  # fmt: skip
            url = made.gateways["llm"].url
            made.commands.run(f"curl -s -m 3 {url}/v1/models >/dev/null; echo $PLANTED >/dev/null; true")
            yield made


def no_secret(*records: DaemonEvent | InspectionRecord) -> None:
    for record in records:
        dump = record.model_dump_json() + repr(record)
        assert GATEWAY_KEY not in dump and ENV_SECRET not in dump


def read_until_command(feed: Iterator[DaemonEvent], marker: str) -> list[DaemonEvent]:
    """Records until the end of the command whose line holds ``marker``."""
    seen: list[DaemonEvent] = []
    pid = None
    for event in feed:
        seen.append(event)
        if isinstance(event, DaemonProcess) and event.event == "start" and marker in (event.command or ""):
            pid = event.pid
        if isinstance(event, DaemonProcess) and event.event == "end" and event.pid == pid:
            return seen
    raise AssertionError("the feed ended")


def test_daemon_events_in_sequence_never_output_and_from_a_cursor(sbx: Sandbox) -> None:
    sbx.commands.run("printf 'never-in-%s' records")
    feed = sbx.daemon_events()
    try:
        seen = read_until_command(feed, "never-in-")
    finally:
        feed.close()  # type: ignore[attr-defined]
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))  # from the oldest, none repeated
    assert any(isinstance(e, DaemonCall) and e.endpoint == "POST /v1/processes" for e in seen)
    assert {"call", "process", "route"} <= {e.type for e in seen}
    assert any(e.type == "gateway_request" for e in seen)  # the module's curl through its route
    assert all("never-in-records" not in e.model_dump_json() for e in seen)
    no_secret(*seen)
    later = sbx.daemon_events(after=3)
    try:
        assert [e.seq for e in islice(later, 3)] == [4, 5, 6]
    finally:
        later.close()  # type: ignore[attr-defined]
    with pytest.raises(InvalidArgumentException) as refused:
        sbx.daemon_events(after=-1)
    assert refused.value.context["field"] == "after"


def test_daemon_events_resume_after_a_broken_connection(sbx: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = CutProxy(sbx._core.launched.daemon_url, b"/v1/events")
    try:
        monkeypatch.setattr(sbx._core, "_daemon", daemon(proxy.url))  # the feed reads through the proxy
        feed = sbx.daemon_events()
        try:
            first = next(feed)
            sbx.commands.run("echo after-the-cut")
            seen = [first] + read_until_command(feed, "after-the-cut")
        finally:
            feed.close()  # type: ignore[attr-defined]
        assert [e.seq for e in seen] == list(range(1, len(seen) + 1))  # nothing missed or repeated
        assert proxy.streams == 2  # the cut one and the one opened after it
        no_secret(*seen)
    finally:
        proxy.close()


def test_inspection_feed_with_cursors_resumed_after_a_cut(sbx: Sandbox, control_plane: ControlPlane) -> None:
    proxy = CutProxy(control_plane.url, b"/v1/inspect")
    mine = sbx.sandbox_id
    try:
        feed = Sandbox.inspect(control_plane_url=proxy.url)
        try:
            seen = [next(feed)]
            sbx.pause()
            sbx.connect()
            for record in feed:
                seen.append(record)
                if record.actor_id == mine and record.event.type == "connect":
                    break
        finally:
            feed.close()  # type: ignore[attr-defined]
        assert proxy.streams == 2
        cursors = [r.cursor for r in seen]
        assert cursors == sorted(set(cursors))
        paused = next(r for r in seen if r.actor_id == mine and r.state == "suspended")
        assert paused.kind == "sandbox" and not paused.replayed
        no_secret(*seen)
        again = Sandbox.inspect(after=paused.cursor)  # back after a cursor: what happened since
        try:
            after = []
            for record in again:
                after.append(record)
                if record.actor_id == mine and record.event.type == "connect":
                    break
        finally:
            again.close()  # type: ignore[attr-defined]
        assert all(r.cursor > paused.cursor for r in after)
        assert "pause" not in [r.event.type for r in after if r.actor_id == mine]
        assert after[-1].state == "running"
    finally:
        proxy.close()


def test_inspection_needs_the_operator_key(sbx: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidArgumentException) as refused:
        Sandbox.inspect(after=1.5)  # type: ignore[arg-type]
    assert refused.value.context["field"] == "after"
    monkeypatch.delenv("SDK_API_KEY")
    with pytest.raises(AuthenticationException):
        next(Sandbox.inspect())
    monkeypatch.setenv("SDK_API_KEY", sbx.access_token)  # a sandbox token is not the operator key
    with pytest.raises(AuthenticationException) as wrong:
        next(Sandbox.inspect())
    assert sbx.access_token not in str(wrong.value)


async def test_async_feeds(sbx: Sandbox, control_plane: ControlPlane) -> None:
    other = await AsyncSandbox.connect(sbx.sandbox_id, access_token=sbx.access_token)
    try:
        events = other.daemon_events(after=1)
        got = [await anext(events) for _ in range(2)]
        await events.aclose()  # type: ignore[attr-defined]
        assert [e.seq for e in got] == [2, 3]
        records = AsyncSandbox.inspect()
        first = await anext(records)
        await records.aclose()  # type: ignore[attr-defined]
        assert isinstance(first, InspectionRecord) and first.cursor > 0
        no_secret(*got, first)
    finally:
        await other.close()
