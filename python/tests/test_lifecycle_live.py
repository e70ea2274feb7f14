"""The lifecycle calls through the Python SDK against the session's control plane (as TypeScript's
``test/integration/sandbox/lifecycle-calls.test.ts``): metadata at create shown by ``Sandbox.get_info``
(with the token and with the operator key) and matched by ``Sandbox.list`` with its state, and
``sbx.set_timeout`` both ways and refused past 8 h from creation, and ``sbx.get_metrics`` seeing what
sandbox code does (CPU, memory, disk, network; the session's control plane samples every half second),
by id too, without resuming a paused sandbox. Each test ends the sandbox it created."""

from __future__ import annotations

import math
import os
import time
from datetime import datetime, timedelta, timezone
from typing import Callable

import pytest

from conftest import ControlPlane
from sdk import AsyncSandbox, InvalidArgumentException, Sandbox, SandboxMetric

MIB = 2**20


def _ms_floor() -> int:
    """Now in whole milliseconds, rounded down: the control plane's clock (``Date.now``) counts whole ms."""
    return math.floor(time.time() * 1000)


def _ms_ceil() -> int:
    """Now in whole milliseconds, rounded up."""
    return math.ceil(time.time() * 1000)


def test_metadata_list_set_timeout_and_get_info(control_plane: ControlPlane) -> None:
    tag = f"py-run-{os.getpid()}"
    before = math.floor(time.time() * 1000)  # the control plane's clock counts whole ms (Date.now)
    sbx = Sandbox.create(template="sdk-base", metadata={"suite": tag, "role": "web"})
    created = math.ceil(time.time() * 1000)
    try:
        info = Sandbox.get_info(sbx.sandbox_id, access_token=sbx.access_token)
        assert info.metadata == {"suite": tag, "role": "web"}
        assert before <= info.started_at <= created  # the control plane's clock, read during the create
        assert Sandbox.get_info(sbx.sandbox_id).metadata == info.metadata  # the operator key

        found = Sandbox.list(metadata={"suite": tag}, state=["running"])
        assert [s.sandbox_id for s in found] == [sbx.sandbox_id]
        assert Sandbox.list(metadata={"suite": tag, "role": "db"}) == []
        assert Sandbox.list(metadata={"suite": tag}, state=["ended"]) == []
        assert sbx.sandbox_id in {s.sandbox_id for s in Sandbox.list()}

        # The new end is the control plane's time of the call plus the timeout: bracketed by readings
        # of the same clock taken around the call, whatever the call took.
        called, longer, answered = _ms_floor(), sbx.set_timeout(2 * 3600), _ms_ceil()
        assert called + 2 * 3600 * 1000 <= longer.deadline_at <= answered + 2 * 3600 * 1000
        called, shorter, answered = _ms_floor(), sbx.set_timeout(600), _ms_ceil()
        assert called + 600 * 1000 <= shorter.deadline_at <= answered + 600 * 1000
        with pytest.raises(InvalidArgumentException, match="8 h") as past:
            sbx.set_timeout(8 * 3600)  # accepted here, past 8 h from creation for the control plane
        assert past.value.field == "timeoutMs"
        assert sbx.get_info().deadline_at == shorter.deadline_at
    finally:
        sbx.kill()
        sbx.close()
    ended = Sandbox.list(metadata={"suite": tag}, state=["ended"])
    assert [(s.sandbox_id, s.end_reason, s.metadata["role"]) for s in ended] == [(sbx.sandbox_id, "killed", "web")]


async def test_the_async_twins(control_plane: ControlPlane) -> None:
    tag = f"py-async-{os.getpid()}"
    async with await AsyncSandbox.create(template="sdk-base", metadata={"suite": tag}) as sbx:
        assert (await AsyncSandbox.get_info(sbx.sandbox_id)).metadata == {"suite": tag}
        assert [s.sandbox_id for s in await AsyncSandbox.list(metadata={"suite": tag})] == [sbx.sandbox_id]
        called = _ms_floor()
        answer = await sbx.set_timeout(300)
        assert called + 300 * 1000 <= answer.deadline_at <= _ms_ceil() + 300 * 1000
    assert [s.state for s in await AsyncSandbox.list(metadata={"suite": tag})] == ["ended"]


def _sample_showing(
    read: Callable[[], list[SandboxMetric]], shows: Callable[[SandboxMetric], bool], what: str
) -> SandboxMetric:
    """The latest sample ``read`` gives that ``shows`` accepts: the control plane's samples are the event
    waited for, read again until one shows it (the bound only ends a test whose sandbox never does)."""
    deadline = time.monotonic() + 90
    while True:
        samples = read()
        seen = [sample for sample in samples if shows(sample)]
        if seen:
            return seen[-1]
        if time.monotonic() > deadline:
            pytest.fail(f"no sample showed {what}; the last ones: {samples[-3:]}")
        time.sleep(0.25)


def test_get_metrics_sees_what_sandbox_code_does(control_plane: ControlPlane) -> None:
    sbx = Sandbox.create(template="sdk-base")
    try:
        before = _sample_showing(sbx.get_metrics, lambda sample: True, "anything (one is taken at create)")
        assert (before.cpu_count, before.mem_total_bytes) == (1, 512 * MIB)  # the template's limits
        assert before.disk_total_bytes > 0 and before.timestamp >= sbx.get_info().started_at
        burner = sbx.commands.run("while :; do :; done", background=True)
        try:
            sbx.commands.run("head -c 48M /dev/zero > /tmp/memory && head -c 40M /dev/urandom > /home/user/disk")
            sbx.files.write("/home/user/upload", bytes(2 * MIB))
            since = math.floor(time.time() * 1000)
            # Samples taken after all of it; the burner holds its CPU (a generous share: the machine may
            # be busy), /tmp is memory, the files are disk, the upload came in over the network.
            shown = _sample_showing(
                lambda: sbx.get_metrics(start=since),
                lambda s: s.cpu_used_pct >= 20
                and s.mem_used_bytes >= before.mem_used_bytes + 40 * MIB
                and s.disk_used_bytes >= before.disk_used_bytes + 36 * MIB
                and s.net_rx_bytes >= before.net_rx_bytes + 2 * MIB,
                "the burner, the tmpfs file, the disk file and the upload",
            )
            assert shown.timestamp >= since
        finally:
            burner.kill()
        # By id: with the operator key (the session's SDK_API_KEY) and with the sandbox's token.
        until = datetime.fromtimestamp(since / 1000, tz=timezone.utc)
        earlier = Sandbox.get_metrics(sbx.sandbox_id, end=until)
        assert earlier and all(sample.timestamp <= since for sample in earlier)
        assert [s.timestamp for s in earlier] == sorted(s.timestamp for s in earlier)  # oldest first
        assert Sandbox.get_metrics(sbx.sandbox_id, access_token=sbx.access_token, start=since)
        assert sbx.get_metrics(start=until + timedelta(hours=1)) == []
        with pytest.raises(InvalidArgumentException) as refused:
            sbx.get_metrics(start=10, end=5)
        assert refused.value.field == "start"
        # A suspended sandbox is read as it is: no new samples, and never resumed by the read.
        sbx.pause()
        paused = sbx.get_metrics()
        assert sbx.get_info().state == "suspended"
        assert sbx.get_metrics() == paused
    finally:
        sbx.kill()
    try:
        assert sbx.get_metrics()  # kept a while after the end, for its token too
    finally:
        sbx.close()
