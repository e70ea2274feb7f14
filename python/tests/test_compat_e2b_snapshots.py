"""E2B's snapshots and fork in the E2B shim (E2B's Python SDK: ``sbx.create_snapshot(name=None)`` and
``Sandbox.create_snapshot(sandbox_id)`` giving a ``SnapshotInfo(snapshot_id, names)``,
``Sandbox.create(snapshot_id)``, ``list_snapshots`` paginators, ``Sandbox.delete_snapshot(snapshot_id)``
giving True/False, ``fork(timeout, count)`` giving a handle or an exception per sandbox) mapped onto the
control plane's snapshots: refusals and mappings before any call, then programs after E2B's own tests
against the session's control plane (a namespace sandbox needs the shim's ``keep_memory=False``). Every
test ends the sandboxes it created."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import ControlPlane
from sdk.compat.e2b import (
    AsyncSandbox,
    InvalidArgumentException,
    NotSupportedException,
    Sandbox,
    SandboxNotFoundException,
    SnapshotInfo,
)
from sdk.compat.e2b._sandbox_plan import plan_create

from _e2b_fixtures import sbx  # noqa: F401  (a fixture)

SNAP = "snap_0123456789abcdef"
KEY: dict[str, Any] = {"api_key": "key"}


def memory_kept(sandbox: Sandbox) -> bool:
    """Whether the sandbox's snapshots keep memory (a gVisor sandbox), as E2B's do."""
    return sandbox.native.get_info().isolation == "gvisor"


def test_refusals_and_mappings_before_any_call(no_traffic: None) -> None:
    with pytest.raises(NotSupportedException, match=r"^create_snapshot\(name=...\) is not supported"):
        Sandbox.create_snapshot("0123456789ab", name="mine", **KEY)
    for count in (0, -1, 101, True, "2"):
        with pytest.raises(InvalidArgumentException, match="count must be at"):
            Sandbox.fork("0123456789ab", count=count, **KEY)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentException, match="keep_memory: must be a bool"):
        Sandbox.create_snapshot("0123456789ab", keep_memory="no", **KEY)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentException, match="timeout"):
        Sandbox.fork("0123456789ab", timeout=0, **KEY)
    for call in (Sandbox.create_snapshot, Sandbox.fork):
        with pytest.raises(SandboxNotFoundException, match="not-an-id not found"):
            call("not-an-id", **KEY)
    assert Sandbox.delete_snapshot("not-a-snapshot", **KEY) is False  # no id this control plane makes
    with pytest.raises(InvalidArgumentException, match="snapshot_id"):
        Sandbox.delete_snapshot(3, **KEY)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentException, match="list_snapshots: limit"):
        Sandbox.list_snapshots(limit=0, **KEY)
    # E2B's Sandbox.create(snapshot_id): the snapshot's template, isolation and limits; egress as E2B sends it.
    plan = plan_create(
        template=SNAP, timeout=None, metadata=None, envs=None, secure=True, allow_internet_access=True,
        mcp=None, network=None, iam=None, lifecycle=None, volume_mounts=None, gateways=None, api=dict(KEY),
    )  # fmt: skip
    body = plan.options.body()
    assert (body["snapshot"], body["allowInternetAccess"], body["timeoutMs"]) == (SNAP, True, 300_000)
    assert "template" not in body and "isolation" not in body and plan.template_id == SNAP


async def test_async_refusals_before_any_call(no_traffic: None) -> None:
    with pytest.raises(NotSupportedException, match=r"^create_snapshot\(name=...\)"):
        await AsyncSandbox.create_snapshot("0123456789ab", name="mine", **KEY)
    with pytest.raises(InvalidArgumentException, match="count must be at least 1"):
        await AsyncSandbox.fork("0123456789ab", count=0, **KEY)
    assert await AsyncSandbox.delete_snapshot("nope", **KEY) is False


def test_snapshot_create_from_it_list_fork_delete(sbx: Sandbox) -> None:  # noqa: F811
    sbx.files.write("state.txt", "state before snapshot")
    if not memory_kept(sbx):  # E2B's snapshots keep memory: a namespace sandbox's holds its files only
        for refused in (sbx.create_snapshot, sbx.fork):
            with pytest.raises(NotSupportedException, match="keep_memory=False"):
                refused()
    snapshot = sbx.create_snapshot(keep_memory=False)
    assert isinstance(snapshot, SnapshotInfo) and snapshot.snapshot_id.startswith("snap_")
    assert snapshot.names == []
    try:
        with Sandbox.create(snapshot.snapshot_id) as copy:
            assert copy.files.read("state.txt") == "state before snapshot"
            seen = copy.commands.run("echo $E2B_SANDBOX_ID $E2B_TEMPLATE_ID $GREETING").stdout.split()
            assert seen[:2] == [copy.sandbox_id, snapshot.snapshot_id]  # its own id; the snapshot as its template
        assert snapshot.snapshot_id in [s.snapshot_id for s in Sandbox.list_snapshots().next_items()]
        assert [s.snapshot_id for s in sbx.list_snapshots().next_items()] == [snapshot.snapshot_id]
        assert Sandbox.list_snapshots(name=snapshot.snapshot_id).next_items() == [snapshot]
        assert Sandbox.list_snapshots(name="no-such-name").next_items() == []
    finally:
        assert Sandbox.delete_snapshot(snapshot.snapshot_id) is True
    assert Sandbox.delete_snapshot(snapshot.snapshot_id) is False

    forks = sbx.fork(count=2, timeout=60, keep_memory=False)
    copies = [fork for fork in forks if isinstance(fork, Sandbox)]
    try:
        assert len(copies) == 2 and len({sbx.sandbox_id, *(c.sandbox_id for c in copies)}) == 3
        for copy in copies:
            assert copy.files.read("state.txt") == "state before snapshot"
            seen = copy.commands.run("echo $E2B_SANDBOX_ID $GREETING").stdout.split()
            assert seen == [copy.sandbox_id, "from", "create"]  # its own id, the forked sandbox's envs
            assert copy.get_info().end_at < sbx.get_info().end_at  # timeout=60
        assert sbx.list_snapshots().next_items() == []  # the fork leaves no snapshot behind
    finally:
        for copy in copies:
            copy.kill()
            copy.close()


async def test_async_snapshot_and_fork(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=120) as original:
        await original.files.write("/home/user/async.txt", "async state")
        snapshot = await original.create_snapshot(keep_memory=False)
        try:
            pages = AsyncSandbox.list_snapshots(sandbox_id=original.sandbox_id)
            assert [s.snapshot_id for s in await pages.next_items()] == [snapshot.snapshot_id]
            (fork,) = await AsyncSandbox.fork(original.sandbox_id, keep_memory=False)
            assert isinstance(fork, AsyncSandbox)
            async with fork:
                assert await fork.files.read("/home/user/async.txt") == "async state"
        finally:
            assert await AsyncSandbox.delete_snapshot(snapshot.snapshot_id) is True


def test_mode_is_the_same_choice_as_keep_memory() -> None:
    """``mode`` ("full" or "filesystem") is keep_memory by the name the project's issue gives it."""
    from sdk.compat.e2b._snapshot_plan import check_keep_memory

    assert check_keep_memory(None, "create_snapshot") is True
    assert check_keep_memory(None, "create_snapshot", "filesystem") is False
    assert check_keep_memory(None, "create_snapshot", "full") is True
    assert check_keep_memory(False, "create_snapshot", "filesystem") is False
    for keep, mode in ((True, "filesystem"), (None, "partial"), ("yes", None)):
        try:
            check_keep_memory(keep, "create_snapshot", mode)
        except InvalidArgumentException:
            continue
        raise AssertionError(f"{keep!r}, {mode!r} accepted")
