"""Snapshots and fork through the Python SDK (``sdk/snapshot.ts``, ``sbx.snapshot()``, ``sbx.fork()``,
``Sandbox.create(snapshot=...)``; TypeScript's ``test/integration/sandbox/snapshots.test.ts``), against
the session's control plane: a snapshot of the sandbox's isolation's kind (a namespace sandbox's holds its
files), a sandbox of its own started from it sees them, fork starts two, ``Snapshot.list``/``delete``
(and the async twins); the create body from a snapshot; bad arguments refused before any call. Every test
ends the sandboxes it created."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import ControlPlane
from sdk import (
    AsyncSandbox,
    AsyncSnapshot,
    InvalidArgumentException,
    Sandbox,
    SandboxPool,
    Snapshot,
)
from sdk._http import Transport
from sdk._sandbox_lifecycle import Launched
from sdk._sandbox_options import resolve_create_options
from sdk._secret_text import SecretText

SNAP = "snap_0123456789abcdef"


def kind_of(sbx: Sandbox) -> str:
    """The kind of snapshot a sandbox of this isolation gives."""
    return "memory" if sbx.get_info().isolation == "gvisor" else "filesystem"


def test_snapshot_then_create_from_it_list_and_delete(control_plane: ControlPlane) -> None:
    with Sandbox.create(template="sdk-base-caps", allow_internet_access=False, timeout=300) as original:
        original.commands.run("echo kept > /home/user/notes")
        snapshot = original.snapshot()
        assert isinstance(snapshot, Snapshot)
        assert (snapshot.sandbox_id, snapshot.kind, snapshot.template) == (
            original.sandbox_id, kind_of(original), "sdk-base-caps",
        )  # fmt: skip
        assert snapshot.isolation == original.get_info().isolation
        assert snapshot.id.startswith("snap_") and isinstance(snapshot.created_at, int) and snapshot.bytes >= 0
        # Its template, isolation and egress are the snapshot's: none is sent, SDK_ISOLATION does not apply.
        with Sandbox.create(snapshot=snapshot, timeout=300) as copy:
            assert copy.sandbox_id != original.sandbox_id and copy.access_token != original.access_token
            info = copy.get_info()
            assert (info.template, info.isolation, info.allow_internet_access) == (
                "sdk-base-caps", snapshot.isolation, False,
            )  # fmt: skip
            assert copy.commands.run("cat /home/user/notes").stdout == "kept\n"
        assert snapshot.id in [s.id for s in Snapshot.list()]
        assert [s.id for s in Snapshot.list(sandbox_id=original.sandbox_id)] == [snapshot.id]
        Snapshot.delete(snapshot.id)
        assert snapshot.id not in [s.id for s in Snapshot.list()]
        with pytest.raises(InvalidArgumentException):  # deleted: it starts nothing more
            Sandbox.create(snapshot=snapshot.id)
        with pytest.raises(InvalidArgumentException) as unknown:
            Snapshot.delete(snapshot.id)
        assert unknown.value.field == "snapshot"


def test_fork_starts_count_sandboxes_of_their_own(control_plane: ControlPlane) -> None:
    with Sandbox.create(timeout=300) as original:
        original.commands.run("echo forked > /home/user/mark")
        copies = original.fork(count=2)
        try:
            assert len(copies) == 2 and all(isinstance(copy, Sandbox) for copy in copies)
            assert len({original.sandbox_id, *(copy.sandbox_id for copy in copies)}) == 3
            for copy in copies:
                assert copy.commands.run("cat /home/user/mark").stdout == "forked\n"
        finally:
            for copy in copies:
                copy.kill()
                copy.close()
        # The fork's snapshot is the control plane's, listed with the sandbox's.
        for snapshot in Snapshot.list(sandbox_id=original.sandbox_id):
            Snapshot.delete(snapshot.id)


async def test_the_async_handle_snapshots_and_starts_from_it(control_plane: ControlPlane) -> None:
    async with await AsyncSandbox.create(timeout=300) as original:
        await original.commands.run("echo async > /home/user/notes")
        snapshot = await original.snapshot()
        assert isinstance(snapshot, AsyncSnapshot) and snapshot.sandbox_id == original.sandbox_id
        async with await AsyncSandbox.create(snapshot=snapshot, timeout=300) as copy:
            assert (await copy.commands.run("cat /home/user/notes")).stdout == "async\n"
        assert snapshot.id in [s.id for s in await AsyncSnapshot.list(sandbox_id=original.sandbox_id)]
        await AsyncSnapshot.delete(snapshot.id)
        assert snapshot.id not in [s.id for s in await AsyncSnapshot.list()]


def test_the_create_body_from_a_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    """From a snapshot, ``template`` and ``allow_internet_access`` are sent only when given, and
    ``SDK_ISOLATION`` is not read (``sdk/sandbox-lifecycle.ts``)."""
    monkeypatch.setenv("SDK_ISOLATION", "gvisor")
    common: dict[str, Any] = {
        "timeout": 60, "memory_mb": None, "cpus": None, "control_plane_url": None, "request_timeout": None,
    }  # fmt: skip
    body = resolve_create_options(template=None, allow_internet_access=None, snapshot=SNAP, **common).body()
    assert body == {"snapshot": SNAP, "timeoutMs": 60_000, "idlePolicy": {"maxIdleSeconds": 300, "autoResume": True}}
    facts = Snapshot(SNAP, "0123456789ab", 1, "filesystem", "namespace", "sdk-base", 0)
    given = resolve_create_options(template="sdk-base", allow_internet_access=False, snapshot=facts, **common)
    assert given.body()["template"] == "sdk-base" and given.body()["allowInternetAccess"] is False
    assert given.body()["snapshot"] == SNAP and "isolation" not in given.body()
    fresh = resolve_create_options(template=None, allow_internet_access=None, **common).body()
    assert (fresh["template"], fresh["allowInternetAccess"], fresh["isolation"]) == ("sdk-base", True, "gvisor")


def test_bad_snapshot_arguments_raise_before_any_call(no_traffic: None) -> None:
    launched = Launched("0123456789ab", SecretText("t"), "http://127.0.0.1:9", "http://127.0.0.1:9", 5.0)
    sbx = Sandbox(launched, Transport(5.0))
    for count in (0, 101, 1.5, "2", True):
        with pytest.raises(InvalidArgumentException) as bad_count:
            sbx.fork(count=count)  # type: ignore[arg-type]
        assert bad_count.value.field == "count" and bad_count.value.message.startswith("sbx.fork: ")
    sbx.close()
    cases: list[tuple[Any, str]] = [
        (lambda: Sandbox.create(snapshot="not-a-snapshot"), "snapshot"),
        (lambda: Sandbox.create(snapshot=1), "snapshot"),  # type: ignore[arg-type]
        (lambda: Snapshot.delete("snap_nope"), "id"),
        (lambda: Snapshot.list(sandbox_id="nope"), "sandbox_id"),
        (lambda: Snapshot.list(control_plane_url="ftp://x"), "control_plane_url"),
    ]
    for call, field in cases:
        with pytest.raises(InvalidArgumentException) as refused:
            call()
        assert refused.value.field == field
    pool = SandboxPool.__new__(SandboxPool)  # no slot warmed: only its kind is checked
    with pytest.raises(InvalidArgumentException, match="snapshot: is not accepted with pool"):
        Sandbox.create(snapshot=SNAP, pool=pool)


async def test_bad_async_snapshot_arguments_raise_before_any_call(no_traffic: None) -> None:
    with pytest.raises(InvalidArgumentException, match="Snapshot.delete: id"):
        await AsyncSnapshot.delete("snap_nope")
    with pytest.raises(InvalidArgumentException, match="Sandbox.create: snapshot"):
        await AsyncSandbox.create(snapshot="snap_nope")
