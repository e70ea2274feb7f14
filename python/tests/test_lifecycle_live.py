"""The lifecycle calls through the Python SDK against the session's control plane (as TypeScript's
``test/integration/sandbox/lifecycle-calls.test.ts``): metadata at create shown by ``Sandbox.get_info``
(with the token and with the operator key) and matched by ``Sandbox.list`` with its state, and
``sbx.set_timeout`` both ways and refused past 8 h from creation. The test ends the sandbox it created."""

from __future__ import annotations

import math
import os
import time

import pytest

from conftest import ControlPlane
from sdk import AsyncSandbox, InvalidArgumentException, Sandbox


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
