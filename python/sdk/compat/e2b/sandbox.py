"""The sync ``Sandbox`` of the E2B shim: E2B's names, arguments, defaults and exceptions on the native
:class:`sdk.Sandbox`, on the control plane at ``SDK_CONTROL_PLANE_URL``.

A shim handle has no ``agent`` and ``create`` refuses ``gateways``: ``sbx.native`` is the native handle
(its ``agent.run()`` fails with ``InvalidArgumentException`` before any call, the sandbox having no
gateways); create the sandbox with the native SDK to use the agent."""

from __future__ import annotations

import logging
from datetime import datetime
from types import TracebackType
from typing import Any, Callable, Mapping, TypeVar

from ..._http import DEFAULT_REQUEST_TIMEOUT, Op, Transport, drive
from ..._sandbox_lifecycle import Launched
from ...sandbox import Sandbox as NativeSandbox
from ._command_ops import gone_op
from ._options import TOKENS, Server, check_sandbox_id, connect_timeout, resolve_server
from ._network import SandboxNetworkOpts, SandboxNetworkUpdate, update_egress
from ._plane import create_op, egress_op, info_op, list_op, metrics_op, snapshots_op, timeout_op
from ._snapshot_plan import (
    ForkOutcome,
    delete_snapshot_op,
    fork_by_id_op,
    fork_handles,
    fork_of_op,
    listed_snapshots,
    plan_delete_snapshot,
    plan_fork,
    plan_list_snapshots,
    plan_snapshot,
    snapshot_by_id_op,
    snapshot_of_op,
)
from ._sandbox_plan import (
    ShimHandle,
    check_list,
    class_server,
    dual,
    envs_op,
    extend_lifetime_op,
    kill_by_id_op,
    kill_op,
    pause_by_id_op,
    pause_op,
    plan_create,
    timeout_ms,
    token_op,
)
from .commands import Commands
from .pty import Pty
from .exceptions import SandboxNotFoundException, translated
from .files import Filesystem
from .sandbox_metrics import SandboxMetrics, metrics_range, to_e2b_metrics
from .sandbox_info import (
    SandboxInfo,
    SandboxListOrder,
    SandboxPaginator,
    SandboxQuery,
    SnapshotInfo,
    SnapshotPaginator,
    live_items,
    native_states,
    to_e2b_info,
)

R = TypeVar("R")


def _on_plane(server: Server, op: Op[R]) -> R:
    """Drives a class-side control-plane operation on a transport of its own."""
    transport = Transport(server.request_timeout or DEFAULT_REQUEST_TIMEOUT)
    try:
        with translated():
            return drive(op, transport)
    finally:
        transport.close()


def _plane_call(api: dict[str, Any], feature: str, op: Callable[[str, str], Op[R]]) -> R:
    """Drives ``op(url, key)`` with the server and key of ``api``."""
    server, key = class_server(api, feature)
    return _on_plane(server, op(server.url, key))


def _drive(self: Sandbox, op: Op[R]) -> R:
    with translated():
        return drive(op, self._native._transport)


def _connect_by_id(
    cls: type[Sandbox], /, sandbox_id: str, timeout: int | None = None, *, access_token: str | None = None,
    **api: Any,
) -> Sandbox:
    """``Sandbox.connect(sandbox_id)``: a handle on a running or paused sandbox (resumed). The sandbox's
    access token comes from ``access_token``, else from this process if it created the sandbox, else from
    ``SDK_ACCESS_TOKEN`` (sandboxd takes the sandbox's own token, not the API key). A ``timeout`` past the
    lifetime left sets the sandbox to end ``timeout`` seconds from now (E2B's connect extends, never
    shortens).

    :raises SandboxNotFoundException: when it does not exist or has ended
    :raises AuthenticationException: without a token
    :raises InvalidArgumentException: for a ``timeout`` past 8 h (from now, before any call; from the
        sandbox's creation, once connected)
    """
    seconds = connect_timeout(timeout)
    server = resolve_server(**api)
    checked = check_sandbox_id(sandbox_id)
    token = _on_plane(server, token_op(server, checked, access_token))
    with translated():
        native = NativeSandbox.connect(
            checked, access_token=token, control_plane_url=server.url, request_timeout=server.request_timeout
        )
    TOKENS.remember(checked, token)  # as for a sandbox it created: the id is enough from now on
    sbx = cls(native)
    try:
        _drive(sbx, extend_lifetime_op(native._core, seconds))
    except BaseException:
        sbx.close()
        raise
    return sbx


def _resume(self: Sandbox, /, timeout: int | None = None, **api: Any) -> Sandbox:
    """``sbx.connect()``: resumes this sandbox when paused (a ``timeout`` past the lifetime left extends
    it, as ``Sandbox.connect``'s); returns the handle."""
    seconds = connect_timeout(timeout)
    with translated():
        self._native.connect()
    _drive(self, extend_lifetime_op(self._native._core, seconds))
    return self


def _sandbox_gone(native: NativeSandbox) -> bool:
    """Whether the sandbox has ended: why a watch's stream broke (E2B's ``TimeoutException`` then)."""
    return drive(gone_op(native._core), native._transport)


def _kill_by_id(cls: type[Sandbox], /, sandbox_id: str, **api: Any) -> bool:
    """``Sandbox.kill(sandbox_id)`` with the API key: True when killed, False when not found."""
    try:
        checked = check_sandbox_id(sandbox_id)
    except SandboxNotFoundException:  # no id this control plane makes: E2B's answer for an unknown id
        resolve_server(**api)
        return False
    return _plane_call(api, "Sandbox.kill", lambda url, key: kill_by_id_op(url, key, checked))


def _kill(self: Sandbox, /, **api: Any) -> bool:
    """Kills the sandbox: True when killed, False when it had already ended."""
    return _drive(self, kill_op(self._native._core))


def _info_by_id(cls: type[Sandbox], /, sandbox_id: str, **api: Any) -> SandboxInfo:
    """``Sandbox.get_info(sandbox_id)`` with the API key."""
    checked = check_sandbox_id(sandbox_id)
    return to_e2b_info(_plane_call(api, "Sandbox.get_info", lambda url, key: info_op(url, key, checked)))


def _info(self: Sandbox, /, **api: Any) -> SandboxInfo:
    """The sandbox's facts with E2B's names."""
    return to_e2b_info(_drive(self, self._native._core.info_op()))


def _set_timeout_by_id(cls: type[Sandbox], /, sandbox_id: str, timeout: int, **api: Any) -> None:
    """``Sandbox.set_timeout(sandbox_id, timeout)`` with the API key (see :func:`_set_timeout`)."""
    checked = check_sandbox_id(sandbox_id)
    ms = timeout_ms(timeout)
    _plane_call(api, "Sandbox.set_timeout", lambda url, key: timeout_op(url, key, checked, ms))


def _set_timeout(self: Sandbox, /, timeout: int, **api: Any) -> None:
    """``sbx.set_timeout(timeout)``: the sandbox ends ``timeout`` seconds from now, sooner or later than
    before (the native ``sbx.set_timeout``, ``POST /v1/sandboxes/:id/timeout``); a paused sandbox stays
    paused, its lifetime counting on. E2B caps a sandbox's life at 24 h (Pro); here it is 8 h from its
    creation, running plus suspended.

    Example::

        sbx.set_timeout(30)  # ends 30 s from now

    :raises InvalidArgumentException: for a ``timeout`` that is not 0.001 s to 8 h (before any call), or
        that reaches past 8 h from the sandbox's creation (nothing changed; ``field`` ``timeoutMs``)
    :raises SandboxNotFoundException: once the sandbox has ended
    """
    resolve_server(**api)
    ms = timeout_ms(timeout)
    _drive(self, self._native._core.set_timeout_op(ms))


def _metrics_by_id(
    cls: type[Sandbox], /, sandbox_id: str, start: datetime | None = None, end: datetime | None = None, **api: Any
) -> list[SandboxMetrics]:
    """``Sandbox.get_metrics(sandbox_id, start, end)`` with the API key (see :func:`_metrics`)."""
    checked = check_sandbox_id(sandbox_id)
    wanted = metrics_range("Sandbox.get_metrics", start, end)
    samples = _plane_call(api, "Sandbox.get_metrics", lambda url, key: metrics_op(url, key, checked, wanted))
    return [to_e2b_metrics(sample) for sample in samples]


def _metrics(
    self: Sandbox, /, start: datetime | None = None, end: datetime | None = None, **api: Any
) -> list[SandboxMetrics]:
    """``sbx.get_metrics(start, end)``: the sandbox's samples (CPU, memory and disk, E2B's
    ``SandboxMetrics``) the control plane took while it ran (every 5 s by default; none while paused;
    coarser further back in a long life), oldest first; those taken at or after ``start`` and at or
    before ``end`` when given (datetimes; a naive one is local time, as in E2B). The native
    ``sbx.get_metrics()`` (``GET /v1/sandboxes/:id/metrics``), which never resumes the sandbox;
    ``sbx.native.get_metrics()`` adds network bytes.

    Example::

        metrics = sbx.get_metrics()
        print(metrics[-1].cpu_used_pct, metrics[-1].mem_used)

    :raises InvalidArgumentException: for a ``start`` or ``end`` that is no datetime, or a ``start``
        after ``end``, before any call
    """
    resolve_server(**api)
    wanted = metrics_range("get_metrics", start, end)
    return [to_e2b_metrics(sample) for sample in _drive(self, self._native._core.metrics_op(wanted))]


def _update_network_by_id(
    cls: type[Sandbox], /, sandbox_id: str, network: SandboxNetworkUpdate, **api: Any
) -> None:
    """``Sandbox.update_network(sandbox_id, network)`` with the API key (see :func:`_update_network`)."""
    checked = check_sandbox_id(sandbox_id)
    policy = update_egress("Sandbox.update_network", network)
    _plane_call(api, "Sandbox.update_network", lambda url, key: egress_op(url, key, checked, policy))


def _update_network(self: Sandbox, /, network: SandboxNetworkUpdate, **api: Any) -> None:
    """``sbx.update_network(network)``: replaces the sandbox's egress rules (``sbx.native.egress.update``),
    E2B's ``network`` mapped as at create: ``deny_out=[ALL_TRAFFIC]`` with ``allow_out`` is an allowlist,
    another ``deny_out`` is denied, ``allow_out`` wins over ``deny_out``, ``allow_internet_access=False``
    is ``deny_out=[ALL_TRAFFIC]``; what is left out is cleared (``{}`` opens it all), as in E2B.

    :raises InvalidArgumentException: for a malformed option or entry, before any call
    :raises NotSupportedException: for ``rules`` or ``egress_proxy``, before any call
    """
    resolve_server(**api)
    policy = update_egress("update_network", network)
    with translated():
        self._native.egress.update(policy)


def _pause_by_id(cls: type[Sandbox], /, sandbox_id: str, **api: Any) -> bool:
    """``Sandbox.pause(sandbox_id)``: True when paused, False when it was paused already."""
    checked = check_sandbox_id(sandbox_id)
    return _plane_call(api, "Sandbox.pause", lambda url, key: pause_by_id_op(url, key, checked))


def _pause(self: Sandbox, /, **api: Any) -> bool:
    """Pauses (suspends) the sandbox with its memory: True when paused, False when it was already."""
    return _drive(self, pause_op(self._native._core))


def _snapshot_by_id(
    cls: type[Sandbox], /, sandbox_id: str, name: str | None = None, *, keep_memory: bool | None = None, mode: str | None = None, **api: Any
) -> SnapshotInfo:
    """``Sandbox.create_snapshot(sandbox_id)`` with the API key (see :func:`_snapshot`)."""
    memory = plan_snapshot(name, keep_memory, mode)
    checked = check_sandbox_id(sandbox_id)
    return _plane_call(api, "create_snapshot", lambda url, key: snapshot_by_id_op(url, key, checked, memory))


def _snapshot(self: Sandbox, /, name: str | None = None, *, keep_memory: bool | None = None, mode: str | None = None, **api: Any) -> SnapshotInfo:
    """``sbx.create_snapshot()``: a snapshot of the sandbox, which goes on running; its ``snapshot_id``
    starts new sandboxes (``Sandbox.create(snapshot_id)``). E2B's snapshots keep memory and processes:
    only a gVisor sandbox's does here, so a namespace sandbox raises ``NotSupportedException`` unless
    ``keep_memory=False`` (an extension: its files only).

    :raises NotSupportedException: for ``name`` (snapshots here have no names), or a namespace sandbox
        without ``keep_memory=False``, before the snapshot
    """
    memory = plan_snapshot(name, keep_memory, mode)
    resolve_server(**api)
    return _drive(self, snapshot_of_op(self._native._core, memory))


def _list_snapshots_of_all(
    cls: type[Sandbox], /, sandbox_id: str | None = None, limit: int | None = None, next_token: str | None = None,
    name: str | None = None, **api: Any,
) -> SnapshotPaginator:  # fmt: skip
    """``Sandbox.list_snapshots(sandbox_id=None)``: the control plane's snapshots (of ``sandbox_id`` when
    given, whose id is ``name`` when given), oldest first, in pages of ``limit`` (100 by default)."""
    plan_list_snapshots(sandbox_id, name, api)
    return SnapshotPaginator(
        lambda: listed_snapshots(_plane_call(api, "list_snapshots", snapshots_op), sandbox_id, name),
        limit,
        next_token,
    )


def _list_snapshots(
    self: Sandbox, /, limit: int | None = None, next_token: str | None = None, name: str | None = None, **api: Any
) -> SnapshotPaginator:
    """``sbx.list_snapshots()``: this sandbox's snapshots, as ``Sandbox.list_snapshots(sandbox_id)``."""
    return _list_snapshots_of_all(type(self), self.sandbox_id, limit, next_token, name, **api)


def _fork_by_id(
    cls: type[Sandbox], /, sandbox_id: str, timeout: int | None = None, count: int | None = None,
    logger: logging.Logger | None = None, *, keep_memory: bool | None = None, mode: str | None = None, **api: Any,
) -> list[Sandbox | Exception]:  # fmt: skip
    """``Sandbox.fork(sandbox_id, timeout, count)`` with the API key (see :func:`_fork`)."""
    server = resolve_server(**api)
    plan = plan_fork(server, timeout, count, keep_memory, {}, "fork", mode)
    checked = check_sandbox_id(sandbox_id)
    return _handles(cls, _on_plane(server, fork_by_id_op(plan, server.url, checked)), plan.envs)


def _fork(
    self: Sandbox, /, timeout: int | None = None, count: int | None = None, *, keep_memory: bool | None = None, mode: str | None = None, **api: Any
) -> list[Sandbox | Exception]:
    """``sbx.fork(timeout, count)``: one snapshot of the sandbox (which goes on), and ``count`` new
    sandboxes started from it (1 by default, at most 100), each living ``timeout`` seconds (300 by
    default), with E2B's default variables and this handle's create ``envs``. Each succeeds or fails on
    its own: the list holds a handle or the exception of each, as E2B's. As ``create_snapshot``, a
    namespace sandbox raises ``NotSupportedException`` unless ``keep_memory=False`` (files only).

    :raises InvalidArgumentException: for a bad ``count`` or ``timeout``, before any call
    :raises NotSupportedException: for a namespace sandbox without ``keep_memory=False``
    """
    server = resolve_server(**api)
    plan = plan_fork(server, timeout, count, keep_memory, self._create_envs, "fork", mode)
    return _handles(type(self), _drive(self, fork_of_op(plan, self._native._core)), plan.envs)


def _handles(
    cls: type[Sandbox], outcomes: list[ForkOutcome], envs: Mapping[str, str]
) -> list[Sandbox | Exception]:
    """A handle for each sandbox a fork started, on a transport of its own; the exception of each that did
    not start."""

    def open_handle(launched: Launched) -> Sandbox:
        return cls(NativeSandbox(launched, Transport(launched.request_timeout)))

    return fork_handles(outcomes, envs, open_handle)


def _delete_snapshot(snapshot_id: str, **api: Any) -> bool:
    """``Sandbox.delete_snapshot(snapshot_id)`` (also on a handle) with the API key: True when deleted,
    False when there was no such snapshot. Sandboxes started from it go on."""
    checked = plan_delete_snapshot(snapshot_id, api)
    if checked is None:  # no id this control plane makes: no such snapshot
        return False
    return _plane_call(api, "delete_snapshot", lambda url, key: delete_snapshot_op(url, key, checked))


class Sandbox(ShimHandle[NativeSandbox, Filesystem, Commands, Pty]):
    """An E2B sandbox handle (sync) on the native SDK.

    Example::

        from sdk.compat.e2b import Sandbox

        with Sandbox.create() as sbx:
            print(sbx.commands.run("echo hello").stdout)
            sbx.files.write("notes.txt", "hi")  # /home/user/notes.txt
    """

    def __init__(self, native: NativeSandbox) -> None:
        """Not for callers: use :meth:`create` or :meth:`connect`."""
        commands = Commands(native)
        files = Filesystem(native.files, lambda: _sandbox_gone(native))
        super().__init__(native, files, commands, Pty(native, commands))

    @classmethod
    def create(
        cls,
        template: str | None = None,
        timeout: int | None = None,
        metadata: Mapping[str, str] | None = None,
        envs: Mapping[str, str] | None = None,
        secure: bool = True,
        allow_internet_access: bool = True,
        mcp: object = None,
        network: SandboxNetworkOpts | None = None,
        iam: object = None,
        lifecycle: object = None,
        volume_mounts: object = None,
        logger: logging.Logger | None = None,
        *,
        gateways: object = None,
        **api: Any,
    ) -> Sandbox:
        """Creates a sandbox from ``template`` (E2B's ``base``, the default, is ``sdk-base``; a snapshot id,
        ``create_snapshot().snapshot_id``, starts it from that snapshot; any other name passes unchanged)
        for ``timeout`` seconds (default 300). ``envs`` are in the environment of
        every command. ``network`` is E2B's egress rules, as the egress policy: ``deny_out=[ALL_TRAFFIC]``
        with ``allow_out`` is an allowlist, another ``deny_out`` is denied less what ``allow_out`` covers;
        with ``allow_internet_access=False`` (closed egress here) it may not leave anything reachable.
        ``api_key`` (else ``SDK_API_KEY``) and ``request_timeout`` are honoured; ``domain`` and E2B's
        other hosted-service options are refused.

        ``metadata`` is E2B's custom metadata, the native ``metadata``: shown by ``get_info`` and
        ``Sandbox.list`` and matched by ``SandboxQuery(metadata=...)`` (at most 64 entries, keys 1 to 128
        characters, values at most 1024, no control characters; never a secret).

        :raises InvalidArgumentException: for a malformed argument (``metadata`` included), or
            ``gateways`` (create the sandbox with the native SDK for gateways and the agent), before any call
        :raises NotSupportedException: for ``mcp``, ``iam``, ``lifecycle``,
            ``volume_mounts``, ``domain``, the ``network`` options only E2B's cloud has
            (``network.mask_request_host``...), before any call
        :raises AuthenticationException: without an API key
        """
        plan = plan_create(
            template=template, timeout=timeout, metadata=metadata, envs=envs, secure=secure,
            allow_internet_access=allow_internet_access, mcp=mcp, network=network, iam=iam,
            lifecycle=lifecycle, volume_mounts=volume_mounts, gateways=gateways, api=api,
        )  # fmt: skip
        with translated():
            op = create_op(plan.options, plan.api_key)
            native = NativeSandbox._open(op, plan.options.request_timeout, plan.options)
        TOKENS.remember(native.sandbox_id, native.access_token)
        sbx = cls(native)
        sbx._create_envs = dict(plan.envs)
        try:  # E2B's default variables, and create's envs
            with translated():
                drive(envs_op(native._core, plan.template_id, plan.envs), native._transport)
        except BaseException:
            sbx.kill()
            raise
        return sbx

    connect = dual(_connect_by_id, _resume)
    kill = dual(_kill_by_id, _kill)
    get_info = dual(_info_by_id, _info)
    pause = dual(_pause_by_id, _pause)
    #: E2B's deprecated name of ``pause`` (its docs and tests still use it).
    beta_pause = dual(_pause_by_id, _pause)
    set_timeout = dual(_set_timeout_by_id, _set_timeout)
    get_metrics = dual(_metrics_by_id, _metrics)
    create_snapshot = dual(_snapshot_by_id, _snapshot)
    list_snapshots = dual(_list_snapshots_of_all, _list_snapshots)
    fork = dual(_fork_by_id, _fork)
    update_network = dual(_update_network_by_id, _update_network)
    delete_snapshot = staticmethod(_delete_snapshot)

    @staticmethod
    def list(
        query: SandboxQuery | None = None,
        limit: int | None = None,
        next_token: str | None = None,
        order: SandboxListOrder | None = None,
        **api: Any,
    ) -> SandboxPaginator:
        """The running and paused sandboxes of the control plane, with the API key: those whose metadata
        holds every entry of ``query.metadata``, in one of ``query.state``, started at or after
        ``query.started_after``, of ``query.template``; newest first (``order="asc"``: oldest first), in
        pages of ``limit`` (100 by default, as E2B) read by ``next_items()``.

        Example::

            paginator = Sandbox.list(query=SandboxQuery(metadata={"user_id": "123"}))
            while paginator.has_next:
                print(paginator.next_items())

        :raises InvalidArgumentException: for a malformed query, order or page, before any call
        """
        check_list(query, order, api, "Sandbox.list")
        states, metadata = native_states(query), None if query is None else query.metadata

        def read() -> list[SandboxInfo]:
            listed = _plane_call(api, "Sandbox.list", lambda url, key: list_op(url, key, states, metadata))
            return live_items(listed, query, order)

        return SandboxPaginator(read, limit, next_token)

    def is_running(self, request_timeout: float | None = None) -> bool:
        """True while the sandbox runs (False when paused or ended)."""
        with translated():
            return self._native.get_info().state == "running"

    def close(self) -> None:
        """Closes this handle's connections (the sandbox goes on; ``with`` kills it). Not in E2B."""
        self._native.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            self.kill()
        finally:
            self.close()
