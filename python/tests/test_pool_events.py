"""Pools (``SandboxPool``, ``AsyncSandboxPool``: a hot slot taken, a second take launching, the warm-up's
``prepare`` seen in sandboxd's own records, untaken slots ended by ``close``), ``reincarnate``, and the
state feeds (``sbx.events()`` resuming after a connection a proxy cuts, ``Sandbox.events()``), against
the session's control plane. Every test ends the sandboxes it created."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable, Iterator

import httpx
import pytest

from _cut_proxy import CutProxy
from conftest import ControlPlane
from sdk import (
    AsyncSandbox,
    AsyncSandboxPool,
    InvalidArgumentException,
    PoolConfig,
    Sandbox,
    SandboxPool,
    SecretCache,
    SecretGateway,
    SecretStore,
    agent_pool_warmup,
)


def wait_until(ready: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def daemon_calls(sbx: Sandbox, seconds: float = 10) -> list[str]:
    """The endpoints of sandboxd's ``call`` records so far (its own event stream, read for a while)."""
    daemon = sbx._core.launched.daemon_url
    found: list[str] = []
    try:
        with httpx.stream("GET", f"{daemon}/v1/events?after=0", timeout=httpx.Timeout(seconds, read=1.0),
                          headers={"authorization": f"Bearer {sbx.access_token}"}, trust_env=False) as answer:
            for line in answer.iter_lines():
                event = json.loads(line) if line else {}
                if event.get("type") == "call":
                    found.append(str(event.get("endpoint")))
    except httpx.ReadTimeout:
        pass  # nothing more for now
    return found


def test_pool_hands_a_warm_slot_then_launches_and_close_ends_the_rest(control_plane: ControlPlane) -> None:
    before = control_plane.live_ids()
    config = PoolConfig(1, "sdk-base-caps", allow_internet_access=False, warmup=agent_pool_warmup("runtime_a"))
    taken: list[Sandbox] = []
    with SandboxPool(config) as pool:
        wait_until(lambda: pool.ready == 1)
        slot_ids = control_plane.live_ids() - before
        assert len(slot_ids) == 1
        first = pool.take()
        taken.append(first)
        assert {first.sandbox_id} == slot_ids  # the hot slot, launched before take
        assert pool.ready == 0
        second = pool.take()  # no slot ready: launched now
        taken.append(second)
        assert second.sandbox_id not in slot_ids
        assert first.commands.run("echo warm").stdout == "warm\n"
        assert "POST /v1/agent/prepare" in daemon_calls(first)
        assert "POST /v1/agent/prepare" not in daemon_calls(second)
        wait_until(lambda: pool.ready == 1)  # refilled after the takes
    # close ended the slot not taken; the taken ones live on until their handles kill them.
    assert control_plane.live_ids() - before == {s.sandbox_id for s in taken}
    for sbx in taken:
        with sbx:
            pass
    assert control_plane.live_ids() == before


async def test_async_pool(control_plane: ControlPlane) -> None:
    before = control_plane.live_ids()
    async with AsyncSandboxPool(PoolConfig(1, "sdk-base")) as pool:
        async with await pool.take() as sbx:
            assert (await sbx.commands.run("echo pooled")).stdout == "pooled\n"
    assert control_plane.live_ids() == before


def test_take_checks_its_options_before_any_call(control_plane: ControlPlane) -> None:
    with pytest.raises(InvalidArgumentException):
        SandboxPool("not a config")  # type: ignore[arg-type]
    before = control_plane.live_ids()
    with SandboxPool(PoolConfig(1, "sdk-base")) as pool:
        with pytest.raises(InvalidArgumentException) as refused:
            pool.take(keep_on_failure="yes")  # type: ignore[arg-type]
        assert refused.value.context["field"] == "keep_on_failure"
    assert control_plane.live_ids() == before


@pytest.fixture
def cache(tmp_path: Path) -> SecretCache:
    store = SecretStore(file=str(tmp_path / "secrets.json"))
    store.create("llm-key", "sk-py-reincarnate-0123456789")
    return SecretCache(store=store)


def test_reincarnate(control_plane: ControlPlane, cache: SecretCache) -> None:
    gateway = SecretGateway("https://upstream.example", headers={"x-api-key": "llm-key"}, allow=[("GET", "/v1/*")])
    with Sandbox.create(gateways={"llm": gateway}, secret_cache=cache) as sbx:
        sbx.kill()
        with sbx.reincarnate() as again:
            assert again.sandbox_id != sbx.sandbox_id
            assert again.gateways["llm"].port > 0
            assert again.commands.run("echo again").stdout == "again\n"
    with Sandbox.create() as plain:
        with pytest.raises(InvalidArgumentException):
            plain.reincarnate()  # created without gateways
        connected_handle = Sandbox.connect(plain.sandbox_id, access_token=plain.access_token)
        try:
            with pytest.raises(InvalidArgumentException):
                connected_handle.reincarnate()
        finally:
            connected_handle.close()


@pytest.fixture
def proxy(control_plane: ControlPlane) -> Iterator[CutProxy]:
    made = CutProxy(control_plane.url, b"/events")
    yield made
    made.close()


def test_events_resume_after_a_broken_connection(proxy: CutProxy) -> None:
    with Sandbox.create(control_plane_url=proxy.url) as sbx:
        feed = sbx.events()
        first = next(feed)
        assert (first.sandbox_id, first.state) == (sbx.sandbox_id, "running")
        sbx.pause()
        sbx.connect()
        sbx.kill()
        rest = list(feed)  # ends after ``ended``
    assert [e.state for e in rest] == ["suspended", "running", "ended"]
    assert rest[-1].end_reason == "killed"
    seqs = [first.seq] + [e.seq for e in rest]
    assert seqs == sorted(set(seqs))  # nothing repeated
    assert proxy.streams == 2  # the cut one and the one opened after it


def test_events_of_every_sandbox(control_plane: ControlPlane) -> None:
    with Sandbox.create() as sbx:
        sbx.kill()
    for event in Sandbox.events():
        if event.sandbox_id == sbx.sandbox_id and event.state == "ended":
            break


async def test_async_events(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create() as sbx:
        states = []
        feed = sbx.events()
        await sbx.kill()
        async for event in feed:
            states.append(event.state)
    assert states == ["running", "ended"]
