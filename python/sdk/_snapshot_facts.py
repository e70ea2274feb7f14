"""The facts of a snapshot (``sdk/snapshot.ts``'s ``Snapshot`` fields): a plain frozen record, what
``Sandbox.create(snapshot=...)``'s option check recognises and what :class:`sdk.snapshot.Snapshot` and
:class:`sdk.snapshot.AsyncSnapshot` add their calls to. A leaf: it imports only the wire models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from ._wire import Isolation, SnapshotInfo, SnapshotKind

S = TypeVar("S", bound="SnapshotFacts")


@dataclass(frozen=True)
class SnapshotFacts:
    """A snapshot a control plane keeps (the fields of :class:`~sdk.snapshot.Snapshot` and
    :class:`~sdk.snapshot.AsyncSnapshot`)."""

    #: ``snap_`` and 16 hex digits.
    id: str
    #: The sandbox it was taken of.
    sandbox_id: str
    #: When it was taken, milliseconds since the epoch.
    created_at: int
    #: ``memory`` (gVisor: processes, memory, files) or ``filesystem`` (namespaces: files only).
    kind: SnapshotKind
    isolation: Isolation
    template: str
    #: What it takes in the control plane's state folder.
    bytes: int

    @classmethod
    def _of(cls: type[S], info: SnapshotInfo) -> S:
        """From the control plane's answer."""
        return cls(
            info.snapshot_id, info.sandbox_id, int(info.created_at), info.kind, info.isolation, info.template,
            info.bytes,
        )  # fmt: skip
