"""E2B's snapshots and fork (``create_snapshot``, ``list_snapshots``, ``delete_snapshot``, ``fork``, and
``Sandbox.create(snapshot_id)`` in ``_sandbox_plan``) on the control plane's snapshots: the arguments
checked before any call, the operations (``sdk._http.Op``) the sync shim drives and the async one
awaits, and E2B's results of their answers (a fork's handles included). What is left in ``sandbox.py``
and ``async_sandbox.py`` is the driving: sync there, awaited here.

E2B's snapshots keep the sandbox's memory: its running processes go on in a sandbox started from one. Here
only a gVisor sandbox's snapshot does (``kind`` ``memory``); a namespace sandbox's holds its files
(``filesystem``). So ``create_snapshot`` and ``fork`` refuse a namespace sandbox with
``NotSupportedException`` unless the caller asks for the files only with ``keep_memory=False`` (an
extension, named after E2B's ``pause(keep_memory=False)``), which works on both (a gVisor sandbox's
snapshot keeps its memory all the same).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Final, Mapping, TypeVar, Union

from ... import errors as native_errors
from ..._control_plane import control_plane_url
from ..._http import Op
from ..._sandbox_core import SandboxCore
from ..._sandbox_lifecycle import Launched, launched_from
from ..._sandbox_options import CreateOptions, resolve_create_options
from ..._wire import SandboxInfo as NativeSandboxInfo
from ..._wire import SnapshotInfo as NativeSnapshotInfo
from . import _plane as plane
from ._options import DEFAULT_SANDBOX_TIMEOUT, TOKENS, Server, is_snapshot_id
from ._sandbox_plan import ShimHandle, class_server, envs_op
from .exceptions import (
    AuthenticationException,
    InvalidArgumentException,
    NotSupportedException,
    SandboxException,
    from_native,
    translated,
)
from .sandbox_info import SnapshotInfo, to_e2b_info

#: Why a snapshot with memory is refused on a namespace sandbox, and what to do instead.
MEMORY_NEEDS_GVISOR: Final = (
    "E2B's snapshots keep the sandbox's memory and running processes, which only a gVisor sandbox's "
    "snapshot holds (create it with SDK_ISOLATION=gvisor); this is a namespace sandbox, whose snapshot "
    "holds its files only: pass keep_memory=False for that"
)

#: The most sandboxes one ``fork`` starts (the native ``sbx.fork``'s limit).
MAX_FORKS: Final = 100

#: Where a forked sandbox's snapshot id goes until the snapshot is taken (the options are checked first).
_PENDING_SNAPSHOT: Final = "snap_0000000000000000"

#: What ``fork`` gives for each sandbox asked for: its handle's footing, or why it did not start.
ForkOutcome = Union[Launched, SandboxException, AuthenticationException]

#: A shim handle, sync or async: what a fork's sandboxes are given back as.
H = TypeVar("H", bound=ShimHandle[Any, Any, Any, Any])


def check_keep_memory(keep_memory: object, feature: str, mode: object = None) -> bool:
    """``keep_memory`` (the shim's extension: a bool) or ``mode`` (``"full"`` or ``"filesystem"``, the
    same choice), which must agree when both are given; the memory is kept by default, as E2B's."""
    if keep_memory is not None and not isinstance(keep_memory, bool):
        raise InvalidArgumentException(f"{feature}: keep_memory: must be a bool")
    if mode is not None and mode not in ("full", "filesystem"):
        raise InvalidArgumentException(f"{feature}: mode: must be 'full' or 'filesystem'")
    from_mode = None if mode is None else mode == "full"
    if keep_memory is not None and from_mode is not None and keep_memory != from_mode:
        raise InvalidArgumentException(f"{feature}: keep_memory and mode disagree")
    if keep_memory is not None:
        return keep_memory
    return True if from_mode is None else from_mode


def check_snapshot_name(name: object, feature: str) -> None:
    """E2B's ``name`` of ``create_snapshot``: snapshots here have no names.

    :raises NotSupportedException: for a name
    """
    if name is not None:
        raise NotSupportedException(
            f"{feature}(name=...)", "snapshots here have no names; use the snapshot_id it returns"
        )


def plan_snapshot(name: object, keep_memory: object, mode: object) -> bool:
    """``create_snapshot``'s own arguments, checked before any call: ``name`` (refused), then
    ``keep_memory`` / ``mode``.

    :returns: whether the snapshot must keep the memory
    :raises NotSupportedException: for a name
    :raises InvalidArgumentException: for a malformed ``keep_memory`` or ``mode``
    """
    check_snapshot_name(name, "create_snapshot")
    return check_keep_memory(keep_memory, "create_snapshot", mode)


def snapshot_by_id_op(url: str, api_key: str, sandbox_id: str, keep_memory: bool) -> Op[SnapshotInfo]:
    """``Sandbox.create_snapshot(sandbox_id)``: the snapshot taken with the API key, as E2B's
    ``SnapshotInfo`` (see :func:`snapshot_op`)."""
    info, take = plane.info_op(url, api_key, sandbox_id), plane.snapshot_op(url, api_key, sandbox_id)
    return _as_e2b(snapshot_op(info, take, keep_memory, "create_snapshot"))


def snapshot_of_op(core: SandboxCore, keep_memory: bool) -> Op[SnapshotInfo]:
    """``sbx.create_snapshot()``: the snapshot taken with the sandbox's token, as E2B's ``SnapshotInfo``
    (see :func:`snapshot_op`)."""
    return _as_e2b(snapshot_op(core.info_op(), core.snapshot_op(), keep_memory, "create_snapshot"))


def _as_e2b(taking: Op[NativeSnapshotInfo]) -> Op[SnapshotInfo]:
    """``taking``, answered as E2B's ``SnapshotInfo``."""
    taken = yield from taking
    return to_e2b_snapshot(taken)


def snapshot_op(
    info: Op[NativeSandboxInfo], take: Op[NativeSnapshotInfo], keep_memory: bool, feature: str
) -> Op[NativeSnapshotInfo]:
    """Takes the snapshot (``take``); with ``keep_memory`` only of a gVisor sandbox, whose isolation is
    read first (``info``).

    :raises NotSupportedException: for a namespace sandbox with ``keep_memory``, before the snapshot
    :raises SandboxNotFoundException: when the sandbox has ended
    """
    if keep_memory:
        facts = yield from info
        to_e2b_info(facts)  # an ended sandbox is SandboxNotFoundException, as in E2B
        if facts.isolation != "gvisor":
            raise NotSupportedException(feature, MEMORY_NEEDS_GVISOR)
    taken: NativeSnapshotInfo = yield from take
    return taken


def to_e2b_snapshot(info: NativeSnapshotInfo) -> SnapshotInfo:
    """E2B's view of a snapshot: its id (snapshots here have no names)."""
    return SnapshotInfo(info.snapshot_id)


def check_list_snapshots(sandbox_id: object, name: object, feature: str) -> None:
    """``list_snapshots``' filters: None or strings."""
    for what, value in (("sandbox_id", sandbox_id), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise InvalidArgumentException(f"{feature}: {what}: must be a string")


def plan_list_snapshots(sandbox_id: object, name: object, api: dict[str, Any]) -> None:
    """``list_snapshots``' arguments, checked before any call: the filters, then the server and key.

    :raises InvalidArgumentException: for a filter that is not a string
    :raises AuthenticationException: without an API key
    """
    check_list_snapshots(sandbox_id, name, "list_snapshots")
    class_server(api, "list_snapshots")


def listed_snapshots(listed: list[NativeSnapshotInfo], sandbox_id: object, name: object) -> list[SnapshotInfo]:
    """The snapshots of a listing (oldest first) taken of ``sandbox_id``, and whose id is ``name`` (E2B
    filters by name or id; snapshots here have ids only)."""
    return [
        to_e2b_snapshot(info)
        for info in listed
        if (sandbox_id is None or info.sandbox_id == sandbox_id) and (name is None or info.snapshot_id == name)
    ]


def check_snapshot_id(snapshot_id: object) -> str | None:
    """``delete_snapshot``'s id: not a string is ``InvalidArgumentException``; a string that is no id this
    control plane makes names no snapshot (None: E2B's ``False``)."""
    if not isinstance(snapshot_id, str) or snapshot_id == "":
        raise InvalidArgumentException("delete_snapshot: snapshot_id: must be a snapshot id (a non-empty string)")
    return snapshot_id if is_snapshot_id(snapshot_id) else None


def plan_delete_snapshot(snapshot_id: object, api: dict[str, Any]) -> str | None:
    """``delete_snapshot``'s arguments, checked before any call: the id to delete, or None for one this
    control plane never makes (no such snapshot: E2B's ``False``, no call made), whose server and key are
    checked all the same.

    :raises InvalidArgumentException: for an id that is not a non-empty string
    :raises AuthenticationException: without an API key, for an id that names no snapshot
    """
    checked = check_snapshot_id(snapshot_id)
    if checked is None:  # no id this control plane makes: no such snapshot
        class_server(api, "delete_snapshot")
    return checked


def delete_snapshot_op(url: str, api_key: str, snapshot_id: str) -> Op[bool]:
    """``delete_snapshot``: True when deleted, False when there was no such snapshot (as E2B)."""
    try:
        yield from plane.delete_snapshot_op(url, api_key, snapshot_id)
    except native_errors.InvalidArgumentException as error:
        if error.field == "snapshot":
            return False
        raise
    return True


@dataclass(frozen=True)
class ForkPlan:
    """A fork to make: how many sandboxes, whether the snapshot must keep memory, what each is created
    with (the snapshot's id set once taken), the key, and the sandbox-wide ``envs`` each gets."""

    count: int
    keep_memory: bool
    options: CreateOptions
    api_key: str = field(repr=False)
    envs: Mapping[str, str] = field(repr=False, default_factory=dict)


def plan_fork(
    server: Server, timeout: object, count: object, keep_memory: object, envs: Mapping[str, str], feature: str,
    mode: object = None,
) -> ForkPlan:
    """Checks ``fork``'s arguments before any call: ``count`` (E2B's 1 by default, at most 100),
    ``timeout`` (each new sandbox's lifetime, E2B's 300 s by default), ``keep_memory``, and the key.

    :raises InvalidArgumentException: for a malformed argument
    :raises AuthenticationException: without an API key
    """
    number = 1 if count is None else count
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise InvalidArgumentException(f"{feature}: count must be at least 1")
    if number > MAX_FORKS:
        raise InvalidArgumentException(f"{feature}: count must be at most {MAX_FORKS}")
    memory = check_keep_memory(keep_memory, feature, mode)
    with translated():
        options = resolve_create_options(
            template=None,
            allow_internet_access=None,  # as the sandbox forked had it
            timeout=DEFAULT_SANDBOX_TIMEOUT if timeout is None else timeout,
            memory_mb=None,
            cpus=None,
            control_plane_url=server.url,
            request_timeout=server.request_timeout,
            snapshot=_PENDING_SNAPSHOT,
        )
    return ForkPlan(number, memory, options, server.key(feature), dict(envs))


def fork_op(plan: ForkPlan, info: Op[NativeSandboxInfo], take: Op[NativeSnapshotInfo]) -> Op[list[ForkOutcome]]:
    """E2B's ``fork``: one snapshot (``take``), then ``plan.count`` sandboxes created from it, each with
    E2B's default variables (its own id) and the forked sandbox's ``envs``; each succeeds or fails on its
    own (a failure is its E2B exception in the list, as E2B answers). The snapshot is deleted at the end:
    E2B's fork leaves none behind.

    :raises NotSupportedException: for a namespace sandbox with ``keep_memory``
    """
    taken = yield from snapshot_op(info, take, plan.keep_memory, "fork")
    options = dataclasses.replace(plan.options, snapshot=taken.snapshot_id)
    url = control_plane_url(options.control_plane_url)
    outcomes: list[ForkOutcome] = []
    for _ in range(plan.count):
        outcomes.append((yield from _start_copy(options, plan, url)))
    try:  # its sandboxes are started and hold their files: the snapshot is no longer needed
        yield from plane.delete_snapshot_op(url, plan.api_key, taken.snapshot_id)
    except native_errors.SdkException:
        pass
    return outcomes


def fork_by_id_op(plan: ForkPlan, url: str, sandbox_id: str) -> Op[list[ForkOutcome]]:
    """``Sandbox.fork(sandbox_id)``: :func:`fork_op`, the sandbox read and snapshot with the plan's key."""
    info, take = plane.info_op(url, plan.api_key, sandbox_id), plane.snapshot_op(url, plan.api_key, sandbox_id)
    return fork_op(plan, info, take)


def fork_of_op(plan: ForkPlan, core: SandboxCore) -> Op[list[ForkOutcome]]:
    """``sbx.fork()``: :func:`fork_op`, the sandbox read and snapshot with its token."""
    return fork_op(plan, core.info_op(), core.snapshot_op())


def fork_handles(
    outcomes: list[ForkOutcome], envs: Mapping[str, str], open_handle: Callable[[Launched], H]
) -> list[H | Exception]:
    """E2B's answer of a fork: a handle (``open_handle``, the sync or async shim's) for each sandbox it
    started, holding the forked sandbox's ``envs`` for its own forks; the exception of each that did not
    start."""
    handles: list[H | Exception] = []
    for outcome in outcomes:
        if isinstance(outcome, Launched):
            sbx = open_handle(outcome)
            sbx._create_envs = dict(envs)
            handles.append(sbx)
        else:
            handles.append(outcome)
    return handles


def _start_copy(options: CreateOptions, plan: ForkPlan, url: str) -> Op[ForkOutcome]:
    """One sandbox of a fork, with its variables; ended again when they cannot be set."""
    try:
        created = yield plane.create_call(options, plan.api_key)
    except native_errors.SdkException as error:
        return from_native(error)
    launched = launched_from(created, url, options.request_timeout)
    core = SandboxCore(launched)
    try:
        yield from envs_op(core, created.template, dict(plan.envs))
    except native_errors.SdkException as error:
        try:
            yield from core.kill_op()
        except native_errors.SdkException:
            pass
        return from_native(error)
    TOKENS.remember(launched.sandbox_id, launched.access_token)
    return launched
