"""E2B's ``SandboxInfo`` from the control plane's facts, E2B's ``SnapshotInfo``, and the paginators of
``Sandbox.list`` and ``AsyncSandbox.list`` (``SandboxPaginator``...) and of ``list_snapshots``
(``SnapshotPaginator``...)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Awaitable, Callable, Generic, Literal, TypeVar

from ..._wire import SandboxInfo as NativeSandboxInfo
from ..._wire import SandboxState as NativeSandboxState
from ._network import SandboxNetworkInfo, network_info
from ._options import native_template
from .exceptions import InvalidArgumentException, SandboxException, SandboxNotFoundException

class SandboxState(str, Enum):
    """E2B's sandbox states (a suspended sandbox here is E2B's ``paused``). A ``str`` enum as E2B's, so
    ``info.state == SandboxState.PAUSED`` and ``info.state == "paused"`` both hold."""

    PAUSED = "paused"
    RUNNING = "running"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class SandboxInfo:
    """A sandbox's facts with E2B's names. What this control plane does not record is ``None``
    (``cpu_count``, ``memory_mb``, ``envd_version``, ``lifecycle``) or empty (``volume_mounts``);
    ``network`` is E2B's view of the egress policy."""

    sandbox_id: str
    #: The template's name (the control plane has no separate template ids).
    template_id: str
    name: str | None
    state: SandboxState
    #: When the sandbox ends at the latest (its timeout: create's, or the latest ``set_timeout``).
    end_at: datetime
    #: When the sandbox was created (its lifetime, running plus suspended, counts from here).
    started_at: datetime
    allow_internet_access: bool | None = None
    #: The metadata given at create (``Sandbox.create(metadata=...)``); empty when none was.
    metadata: dict[str, str] = field(default_factory=dict)
    cpu_count: int | None = None
    memory_mb: int | None = None
    envd_version: str | None = None
    sandbox_domain: str | None = None
    #: E2B's egress rules from the egress policy: an allowlist is ``{"allow_out": allow, "deny_out":
    #: [ALL_TRAFFIC]}``, closed egress ``{"deny_out": [ALL_TRAFFIC]}``, open egress with denied entries
    #: ``{"deny_out": deny}``; None when everything is reachable.
    network: SandboxNetworkInfo | None = None
    #: E2B's lifecycle options (refused at create here) and volumes: never set.
    lifecycle: dict[str, object] | None = None
    volume_mounts: list[dict[str, str]] = field(default_factory=list)


def to_e2b_info(info: NativeSandboxInfo) -> SandboxInfo:
    """The E2B view of a live sandbox's facts.

    :raises SandboxNotFoundException: when it has ended (E2B knows no ended sandboxes)
    """
    if info.state == "ended":
        raise SandboxNotFoundException(
            f"sandbox {info.sandbox_id} has ended ({info.end_reason or 'ended'})", "sandbox_ended"
        )
    return SandboxInfo(
        sandbox_id=info.sandbox_id,
        template_id=info.template,
        name=info.template,
        state=SandboxState.PAUSED if info.state == "suspended" else SandboxState.RUNNING,
        end_at=_utc(info.deadline_at),
        started_at=_utc(info.started_at),
        allow_internet_access=info.allow_internet_access,
        metadata=dict(info.metadata),
        network=network_info(info.egress),
    )


def _utc(ms: float) -> datetime:
    """Milliseconds since the epoch as an aware UTC datetime (as E2B's API dates parse)."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


#: E2B's page size of ``Sandbox.list``.
DEFAULT_LIST_LIMIT = 100

#: E2B's order of ``Sandbox.list``, by start: oldest first (``asc``) or newest first (``desc``).
SandboxListOrder = Literal["asc", "desc"]


@dataclass
class SandboxQuery:
    """E2B's ``Sandbox.list`` filter, its fields in E2B's order, combined with AND: ``metadata`` (every
    entry held; the native ``Sandbox.list(metadata=...)``), ``state`` (``SandboxState``, by default both),
    ``started_after`` (created at or after it; a naive datetime is local time, as E2B reads it) and
    ``template`` (a template name; E2B's ``base`` is ``sdk-base`` and ``sdk-base-caps``)."""

    metadata: dict[str, str] | None = None
    state: list[SandboxState] | None = None
    started_after: datetime | None = None
    template: str | None = None


@dataclass(frozen=True)
class SnapshotInfo:
    """E2B's answer of ``create_snapshot`` and item of ``list_snapshots``: ``snapshot_id`` is what
    ``Sandbox.create(snapshot_id)`` starts a sandbox from. Snapshots here have no names, so ``names`` is
    empty."""

    snapshot_id: str
    names: list[str] = field(default_factory=list)


Item = TypeVar("Item")


class _Pages(Generic[Item]):
    """Where ``Sandbox.list`` (or ``list_snapshots``, ``feature``) is in its pages: the control plane
    answers with every item at once, so each page is a slice of ``limit`` (E2B's 100 when None) of the
    listing read for it, from ``next_token`` (as the TypeScript shim's ``SandboxPaginator``)."""

    def __init__(self, limit: object, next_token: object, feature: str = "Sandbox.list") -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidArgumentException(f"{feature}: limit: must be a whole number, 1 or more")
        if next_token is not None and (not isinstance(next_token, str) or not next_token.isdigit()):
            raise InvalidArgumentException(f"{feature}: next_token: must be a token a page gave")
        self._limit: int = DEFAULT_LIST_LIMIT if limit is None else limit
        self._next_token: str | None = next_token
        self._has_next = True

    @property
    def has_next(self) -> bool:
        """True while there may be more sandboxes to read."""
        return self._has_next

    @property
    def next_token(self) -> str | None:
        """Where the next page starts (None after the last)."""
        return self._next_token

    def _check(self) -> None:
        """:raises SandboxException: once every page has been read (as E2B does)"""
        if not self._has_next:
            raise SandboxException("No more items to fetch")

    def _page(self, items: list[Item]) -> list[Item]:
        start = int(self._next_token or "0")
        end = start + self._limit
        self._has_next = end < len(items)
        self._next_token = str(end) if self._has_next else None
        return items[start:end]


class SandboxPaginator(_Pages[SandboxInfo]):
    """``Sandbox.list()``'s answer: ``next_items()`` reads the next page (``limit`` sandboxes, 100 by
    default) while ``has_next``; ``next_token`` is where the next page starts."""

    def __init__(self, read: Callable[[], list[SandboxInfo]], limit: object, next_token: object) -> None:
        super().__init__(limit, next_token)
        self._read = read

    def next_items(self) -> list[SandboxInfo]:
        """The next page of sandboxes.

        :raises SandboxException: once every page has been read
        """
        self._check()
        return self._page(self._read())


class AsyncSandboxPaginator(_Pages[SandboxInfo]):
    """``AsyncSandbox.list()``'s answer: ``await next_items()`` reads the next page (``limit``
    sandboxes, 100 by default) while ``has_next``; ``next_token`` is where the next page starts."""

    def __init__(
        self, read: Callable[[], Awaitable[list[SandboxInfo]]], limit: object, next_token: object
    ) -> None:
        super().__init__(limit, next_token)
        self._read = read

    async def next_items(self) -> list[SandboxInfo]:
        """The next page of live sandboxes.

        :raises SandboxException: once every page has been read
        """
        self._check()
        return self._page(await self._read())


class SnapshotPaginator(_Pages[SnapshotInfo]):
    """``list_snapshots()``'s answer: ``next_items()`` reads the next page (``limit`` snapshots, 100 by
    default, oldest first) while ``has_next``; ``next_token`` is where the next page starts."""

    def __init__(self, read: Callable[[], list[SnapshotInfo]], limit: object, next_token: object) -> None:
        super().__init__(limit, next_token, "list_snapshots")
        self._read = read

    def next_items(self) -> list[SnapshotInfo]:
        """The next page of snapshots.

        :raises SandboxException: once every page has been read
        """
        self._check()
        return self._page(self._read())


class AsyncSnapshotPaginator(_Pages[SnapshotInfo]):
    """``AsyncSandbox.list_snapshots()``'s answer: ``await next_items()`` reads the next page."""

    def __init__(
        self, read: Callable[[], Awaitable[list[SnapshotInfo]]], limit: object, next_token: object
    ) -> None:
        super().__init__(limit, next_token, "list_snapshots")
        self._read = read

    async def next_items(self) -> list[SnapshotInfo]:
        """The next page of snapshots.

        :raises SandboxException: once every page has been read
        """
        self._check()
        return self._page(await self._read())


#: E2B's states as the native ones: a paused sandbox here is a suspended one.
_NATIVE_STATES: dict[str, NativeSandboxState] = {"running": "running", "paused": "suspended"}


def native_states(query: SandboxQuery | None) -> tuple[NativeSandboxState, ...]:
    """The native states ``Sandbox.list`` asks the control plane for: ``query.state``'s (checked), by
    default E2B's running and paused ones (never an ended one)."""
    wanted = query.state if query is not None and query.state else ("running", "paused")
    return tuple(_NATIVE_STATES[str(SandboxState(state))] for state in wanted)


def live_items(
    listed: list[NativeSandboxInfo], query: SandboxQuery | None, order: SandboxListOrder | None = None
) -> list[SandboxInfo]:
    """The live sandboxes of a listing (the control plane filtered the state and metadata), filtered by
    ``query.started_after`` and ``query.template`` (E2B's ``base`` matches both templates made from its
    image, ``sdk-base`` and ``sdk-base-caps``), by start: newest first (E2B's default) or oldest first for
    ``order="asc"`` (a stable sort keeps the control plane's order of those started in the same
    millisecond)."""
    items = [to_e2b_info(info) for info in listed if info.state != "ended"]
    if query is not None and query.state:  # an empty list is E2B's default too
        wanted = {SandboxState(state) for state in query.state}
        items = [item for item in items if item.state in wanted]
    if query is not None and query.started_after is not None:
        after = query.started_after.astimezone()  # a naive datetime is local time, as E2B sends it
        items = [item for item in items if item.started_at >= after]
    if query is not None and query.template is not None:
        templates = {native_template(query.template), native_template(query.template, closed_egress=True)}
        items = [item for item in items if item.template_id in templates]
    items.sort(key=lambda item: item.started_at)
    return items if order == "asc" else items[::-1]
