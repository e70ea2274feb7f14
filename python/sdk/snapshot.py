"""Snapshots of sandboxes (``sdk/snapshot.ts``): what ``sbx.snapshot()`` returns, what
``Sandbox.create(snapshot=...)`` starts from and what ``sbx.fork()`` takes on the way. A gVisor sandbox's
snapshot holds its processes, memory and files (``kind`` ``memory``); a namespace sandbox's its own files
(``filesystem``): its changes to its template, and its home. A snapshot never holds a gateway's value or a
token: a sandbox started from one has no gateways until its creator gives them
(``Sandbox.create(snapshot=..., gateways=...)``).

:class:`Snapshot` (sync ``list``/``delete``) and :class:`AsyncSnapshot` (the same, awaited) are the same
frozen facts; ``Sandbox.snapshot()`` gives the one, ``AsyncSandbox.snapshot()`` the other, and
``create(snapshot=...)`` of either handle takes both (or the id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from . import _control_plane as plane_calls
from ._check import Checker, matches
from ._http import AsyncTransport, Call, Op, Transport, adrive, drive
from ._rules import SNAPSHOT_ID, SNAPSHOT_ID_RULE
from ._option_checks import check_url
from ._rules import SANDBOX_ID
from ._snapshot_facts import SnapshotFacts as SnapshotFacts  # the facts, a leaf the option checks know
from ._wire import EmptyAnswer, SnapshotList

T = TypeVar("T")


def _list_call(control_plane_url: object, sandbox_id: object) -> Call[SnapshotList]:
    """``Snapshot.list``'s call, its arguments checked before any call."""
    check = Checker("Snapshot.list")
    url = check_url(check, "control_plane_url", control_plane_url)
    if sandbox_id is not None and not matches(SANDBOX_ID, sandbox_id):
        check.add(("sandbox_id",), "must be a sandbox id (12 hex characters)")
    check.done()
    plane = plane_calls.control_plane(plane_calls.control_plane_url(url))
    chosen = sandbox_id if isinstance(sandbox_id, str) else None
    return plane_calls.snapshots_call(plane, plane_calls.operator_key(), chosen)


def _delete_call(snapshot_id: object, control_plane_url: object) -> Call[EmptyAnswer]:
    """``Snapshot.delete``'s call, its arguments checked before any call."""
    check = Checker("Snapshot.delete")
    if not matches(SNAPSHOT_ID, snapshot_id):
        check.add(("id",), SNAPSHOT_ID_RULE)
    url = check_url(check, "control_plane_url", control_plane_url)
    check.done()
    plane = plane_calls.control_plane(plane_calls.control_plane_url(url))
    return plane_calls.delete_snapshot_call(plane, str(snapshot_id), plane_calls.operator_key())


def _one(call: Call[T]) -> Op[T]:
    """An operation of one call."""
    answer: T = yield call
    return answer


@dataclass(frozen=True)
class Snapshot(SnapshotFacts):
    """A snapshot a control plane keeps (sync).

    Example::

        snapshot = sbx.snapshot()
        copy = Sandbox.create(snapshot=snapshot, gateways={"llm": llm})
        for s in Snapshot.list():
            print(s.id, s.kind, s.bytes)
        Snapshot.delete(snapshot.id)
    """

    @staticmethod
    def list(*, control_plane_url: str | None = None, sandbox_id: str | None = None) -> _Snapshots:
        """Every snapshot of the control plane (or of one sandbox), oldest first; needs the operator key
        (``SDK_API_KEY``).

        :raises InvalidArgumentException: for a malformed argument, before any call
        :raises AuthenticationException: without a valid operator key
        """
        call = _list_call(control_plane_url, sandbox_id)
        transport = Transport()
        try:
            return [Snapshot._of(info) for info in drive(_one(call), transport).snapshots]
        finally:
            transport.close()

    @staticmethod
    def delete(id: str, *, control_plane_url: str | None = None) -> None:
        """Deletes a snapshot and its files; needs the operator key (``SDK_API_KEY``). Sandboxes started
        from it go on.

        :raises InvalidArgumentException: for a malformed id (before any call) or an unknown one
            (``field`` ``snapshot``)
        :raises AuthenticationException: without a valid operator key
        """
        call = _delete_call(id, control_plane_url)
        transport = Transport()
        try:
            drive(_one(call), transport)
        finally:
            transport.close()


@dataclass(frozen=True)
class AsyncSnapshot(SnapshotFacts):
    """A snapshot a control plane keeps: :class:`Snapshot`'s facts, with ``list`` and ``delete`` awaited
    (``await AsyncSnapshot.list()``); what ``AsyncSandbox.snapshot()`` returns."""

    @staticmethod
    async def list(
        *, control_plane_url: str | None = None, sandbox_id: str | None = None
    ) -> _AsyncSnapshots:
        """As :meth:`Snapshot.list`, awaited.

        :raises InvalidArgumentException: for a malformed argument, before any call
        """
        call = _list_call(control_plane_url, sandbox_id)
        transport = AsyncTransport()
        try:
            return [AsyncSnapshot._of(info) for info in (await adrive(_one(call), transport)).snapshots]
        finally:
            await transport.aclose()

    @staticmethod
    async def delete(id: str, *, control_plane_url: str | None = None) -> None:
        """As :meth:`Snapshot.delete`, awaited.

        :raises InvalidArgumentException: for a malformed or unknown id
        """
        call = _delete_call(id, control_plane_url)
        transport = AsyncTransport()
        try:
            await adrive(_one(call), transport)
        finally:
            await transport.aclose()


#: The answers of ``list`` (named here: inside the classes ``list`` is the method).
_Snapshots = list[Snapshot]
_AsyncSnapshots = list[AsyncSnapshot]
