"""The async ``AsyncSandbox`` of the E2B shim: the operations of :mod:`sdk.compat.e2b.sandbox`, awaited,
on the native :class:`sdk.AsyncSandbox`. No ``agent``; ``gateways`` refused; ``sbx.native`` is the
native handle."""

from __future__ import annotations

import logging
from datetime import datetime
from types import TracebackType
from typing import Any, Callable, Mapping, TypeVar

from ..._http import DEFAULT_REQUEST_TIMEOUT, AsyncTransport, Op, adrive
from ..._sandbox_lifecycle import Launched
from ...async_sandbox import AsyncSandbox as NativeAsyncSandbox
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
from .async_commands import AsyncCommands
from .async_pty import AsyncPty
from .async_files import AsyncFilesystem
from .exceptions import SandboxNotFoundException, translated
from .sandbox_metrics import SandboxMetrics, metrics_range, to_e2b_metrics
from .sandbox_info import (
    AsyncSandboxPaginator,
    AsyncSnapshotPaginator,
    SandboxInfo,
    SandboxListOrder,
    SandboxQuery,
    SnapshotInfo,
    live_items,
    native_states,
    to_e2b_info,
)

R = TypeVar("R")


async def _on_plane(server: Server, op: Op[R]) -> R:
    """Drives a class-side control-plane operation on a transport of its own."""
    transport = AsyncTransport(server.request_timeout or DEFAULT_REQUEST_TIMEOUT)
    try:
        with translated():
            return await adrive(op, transport)
    finally:
        await transport.aclose()


async def _plane_call(api: dict[str, Any], feature: str, op: Callable[[str, str], Op[R]]) -> R:
    """Drives ``op(url, key)`` with the server and key of ``api``."""
    server, key = class_server(api, feature)
    return await _on_plane(server, op(server.url, key))


async def _sandbox_gone(native: NativeAsyncSandbox) -> bool:
    """Whether the sandbox has ended: why a watch's stream broke (E2B's ``TimeoutException`` then)."""
    return await adrive(gone_op(native._core), native._transport)


async def _drive(self: AsyncSandbox, op: Op[R]) -> R:
    with translated():
        return await adrive(op, self._native._transport)


async def _connect_by_id(
    cls: type[AsyncSandbox], /, sandbox_id: str, timeout: int | None = None, *, access_token: str | None = None,
    **api: Any,
) -> AsyncSandbox:  # fmt: skip
    """``await AsyncSandbox.connect(sandbox_id)``: as the sync shim's (the token from ``access_token``,
    this process, or ``SDK_ACCESS_TOKEN``; a ``timeout`` past the lifetime left extends it)."""
    seconds = connect_timeout(timeout)
    server = resolve_server(**api)
    checked = check_sandbox_id(sandbox_id)
    token = await _on_plane(server, token_op(server, checked, access_token))
    with translated():
        native = await NativeAsyncSandbox.connect(
            checked, access_token=token, control_plane_url=server.url, request_timeout=server.request_timeout
        )
    TOKENS.remember(checked, token)  # as for a sandbox it created: the id is enough from now on
    sbx = cls(native)
    try:
        await _drive(sbx, extend_lifetime_op(native._core, seconds))
    except BaseException:
        await sbx.close()
        raise
    return sbx


async def _resume(self: AsyncSandbox, /, timeout: int | None = None, **api: Any) -> AsyncSandbox:
    """``await sbx.connect()``: resumes this sandbox when paused (a ``timeout`` past the lifetime left
    extends it); returns the handle."""
    seconds = connect_timeout(timeout)
    with translated():
        await self._native.connect()
    await _drive(self, extend_lifetime_op(self._native._core, seconds))
    return self


async def _kill_by_id(cls: type[AsyncSandbox], /, sandbox_id: str, **api: Any) -> bool:
    """``await AsyncSandbox.kill(sandbox_id)``: True when killed, False when not found."""
    try:
        checked = check_sandbox_id(sandbox_id)
    except SandboxNotFoundException:  # no id this control plane makes: E2B's answer for an unknown id
        resolve_server(**api)
        return False
    return await _plane_call(api, "AsyncSandbox.kill", lambda url, key: kill_by_id_op(url, key, checked))


async def _kill(self: AsyncSandbox, /, **api: Any) -> bool:
    """Kills the sandbox: True when killed, False when it had already ended."""
    return await _drive(self, kill_op(self._native._core))


async def _info_by_id(cls: type[AsyncSandbox], /, sandbox_id: str, **api: Any) -> SandboxInfo:
    """``await AsyncSandbox.get_info(sandbox_id)`` with the API key."""
    checked = check_sandbox_id(sandbox_id)
    info = await _plane_call(api, "AsyncSandbox.get_info", lambda url, key: info_op(url, key, checked))
    return to_e2b_info(info)


async def _info(self: AsyncSandbox, /, **api: Any) -> SandboxInfo:
    """The sandbox's facts with E2B's names."""
    return to_e2b_info(await _drive(self, self._native._core.info_op()))


async def _set_timeout_by_id(cls: type[AsyncSandbox], /, sandbox_id: str, timeout: int, **api: Any) -> None:
    """``await AsyncSandbox.set_timeout(sandbox_id, timeout)`` with the API key, as the sync shim's."""
    checked = check_sandbox_id(sandbox_id)
    ms = timeout_ms(timeout)
    await _plane_call(api, "AsyncSandbox.set_timeout", lambda url, key: timeout_op(url, key, checked, ms))


async def _set_timeout(self: AsyncSandbox, /, timeout: int, **api: Any) -> None:
    """``await sbx.set_timeout(timeout)``: the sync shim's ``set_timeout``, awaited (ends ``timeout``
    seconds from now, never past 8 h from the sandbox's creation)."""
    resolve_server(**api)
    ms = timeout_ms(timeout)
    await _drive(self, self._native._core.set_timeout_op(ms))


async def _metrics_by_id(
    cls: type[AsyncSandbox], /, sandbox_id: str, start: datetime | None = None, end: datetime | None = None,
    **api: Any,
) -> list[SandboxMetrics]:  # fmt: skip
    """``await AsyncSandbox.get_metrics(sandbox_id, start, end)`` with the API key, as the sync shim's."""
    checked = check_sandbox_id(sandbox_id)
    wanted = metrics_range("AsyncSandbox.get_metrics", start, end)
    samples = await _plane_call(
        api, "AsyncSandbox.get_metrics", lambda url, key: metrics_op(url, key, checked, wanted)
    )
    return [to_e2b_metrics(sample) for sample in samples]


async def _metrics(
    self: AsyncSandbox, /, start: datetime | None = None, end: datetime | None = None, **api: Any
) -> list[SandboxMetrics]:
    """``await sbx.get_metrics(start, end)``: the sync shim's ``get_metrics``, awaited (E2B's
    ``SandboxMetrics``, oldest first; never resumes the sandbox)."""
    resolve_server(**api)
    wanted = metrics_range("get_metrics", start, end)
    return [to_e2b_metrics(sample) for sample in await _drive(self, self._native._core.metrics_op(wanted))]


async def _update_network_by_id(
    cls: type[AsyncSandbox], /, sandbox_id: str, network: SandboxNetworkUpdate, **api: Any
) -> None:
    """``await AsyncSandbox.update_network(sandbox_id, network)`` with the API key, as the sync shim's."""
    checked = check_sandbox_id(sandbox_id)
    policy = update_egress("AsyncSandbox.update_network", network)
    await _plane_call(api, "AsyncSandbox.update_network", lambda url, key: egress_op(url, key, checked, policy))


async def _update_network(self: AsyncSandbox, /, network: SandboxNetworkUpdate, **api: Any) -> None:
    """``await sbx.update_network(network)``: the sync shim's ``update_network``, awaited."""
    resolve_server(**api)
    policy = update_egress("update_network", network)
    with translated():
        await self._native.egress.update(policy)


async def _pause_by_id(cls: type[AsyncSandbox], /, sandbox_id: str, **api: Any) -> bool:
    """``await AsyncSandbox.pause(sandbox_id)``: True when paused, False when it was already."""
    checked = check_sandbox_id(sandbox_id)
    return await _plane_call(api, "AsyncSandbox.pause", lambda url, key: pause_by_id_op(url, key, checked))


async def _pause(self: AsyncSandbox, /, **api: Any) -> bool:
    """Pauses (suspends) the sandbox with its memory: True when paused, False when it was already."""
    return await _drive(self, pause_op(self._native._core))


async def _snapshot_by_id(
    cls: type[AsyncSandbox], /, sandbox_id: str, name: str | None = None, *, keep_memory: bool | None = None, mode: str | None = None,
    **api: Any,
) -> SnapshotInfo:  # fmt: skip
    """``await AsyncSandbox.create_snapshot(sandbox_id)`` with the API key, as the sync shim's."""
    memory = plan_snapshot(name, keep_memory, mode)
    checked = check_sandbox_id(sandbox_id)
    return await _plane_call(api, "create_snapshot", lambda url, key: snapshot_by_id_op(url, key, checked, memory))


async def _snapshot(
    self: AsyncSandbox, /, name: str | None = None, *, keep_memory: bool | None = None, mode: str | None = None, **api: Any
) -> SnapshotInfo:
    """``await sbx.create_snapshot()``: as the sync shim's (a namespace sandbox needs
    ``keep_memory=False``)."""
    memory = plan_snapshot(name, keep_memory, mode)
    resolve_server(**api)
    return await _drive(self, snapshot_of_op(self._native._core, memory))


def _list_snapshots_of_all(
    cls: type[AsyncSandbox], /, sandbox_id: str | None = None, limit: int | None = None,
    next_token: str | None = None, name: str | None = None, **api: Any,
) -> AsyncSnapshotPaginator:  # fmt: skip
    """``AsyncSandbox.list_snapshots(sandbox_id=None)``: as the sync shim's (``await next_items()``)."""
    plan_list_snapshots(sandbox_id, name, api)

    async def read() -> list[SnapshotInfo]:
        return listed_snapshots(await _plane_call(api, "list_snapshots", snapshots_op), sandbox_id, name)

    return AsyncSnapshotPaginator(read, limit, next_token)


def _list_snapshots(
    self: AsyncSandbox, /, limit: int | None = None, next_token: str | None = None, name: str | None = None,
    **api: Any,
) -> AsyncSnapshotPaginator:  # fmt: skip
    """``sbx.list_snapshots()``: this sandbox's snapshots."""
    return _list_snapshots_of_all(type(self), self.sandbox_id, limit, next_token, name, **api)


async def _fork_by_id(
    cls: type[AsyncSandbox], /, sandbox_id: str, timeout: int | None = None, count: int | None = None,
    logger: logging.Logger | None = None, *, keep_memory: bool | None = None, mode: str | None = None, **api: Any,
) -> list[AsyncSandbox | Exception]:  # fmt: skip
    """``await AsyncSandbox.fork(sandbox_id, timeout, count)`` with the API key, as the sync shim's."""
    server = resolve_server(**api)
    plan = plan_fork(server, timeout, count, keep_memory, {}, "fork", mode)
    checked = check_sandbox_id(sandbox_id)
    return _handles(cls, await _on_plane(server, fork_by_id_op(plan, server.url, checked)), plan.envs)


async def _fork(
    self: AsyncSandbox, /, timeout: int | None = None, count: int | None = None, *, keep_memory: bool | None = None, mode: str | None = None,
    **api: Any,
) -> list[AsyncSandbox | Exception]:  # fmt: skip
    """``await sbx.fork(timeout, count)``: as the sync shim's ``fork``."""
    server = resolve_server(**api)
    plan = plan_fork(server, timeout, count, keep_memory, self._create_envs, "fork", mode)
    outcomes = await _drive(self, fork_of_op(plan, self._native._core))
    return _handles(type(self), outcomes, plan.envs)


def _handles(
    cls: type[AsyncSandbox], outcomes: list[ForkOutcome], envs: Mapping[str, str]
) -> list[AsyncSandbox | Exception]:
    """A handle for each sandbox a fork started, on a transport of its own; the exception of each that did
    not start."""

    def open_handle(launched: Launched) -> AsyncSandbox:
        return cls(NativeAsyncSandbox(launched, AsyncTransport(launched.request_timeout)))

    return fork_handles(outcomes, envs, open_handle)


async def _delete_snapshot(snapshot_id: str, **api: Any) -> bool:
    """``await AsyncSandbox.delete_snapshot(snapshot_id)``: True when deleted, False when there was no
    such snapshot."""
    checked = plan_delete_snapshot(snapshot_id, api)
    if checked is None:  # no id this control plane makes: no such snapshot
        return False
    return await _plane_call(api, "delete_snapshot", lambda url, key: delete_snapshot_op(url, key, checked))


class AsyncSandbox(ShimHandle[NativeAsyncSandbox, AsyncFilesystem, AsyncCommands, AsyncPty]):
    """An E2B sandbox handle (async) on the native SDK.

    Example::

        from sdk.compat.e2b import AsyncSandbox

        sbx = await AsyncSandbox.create()
        print((await sbx.commands.run("echo hello")).stdout)
        await sbx.kill()
    """

    def __init__(self, native: NativeAsyncSandbox) -> None:
        """Not for callers: use :meth:`create` or :meth:`connect`."""
        commands = AsyncCommands(native)
        files = AsyncFilesystem(native.files, lambda: _sandbox_gone(native))
        super().__init__(native, files, commands, AsyncPty(native, commands))

    @classmethod
    async def create(
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
    ) -> AsyncSandbox:
        """Creates a sandbox: the arguments of :meth:`sdk.compat.e2b.Sandbox.create`, awaited."""
        plan = plan_create(
            template=template, timeout=timeout, metadata=metadata, envs=envs, secure=secure,
            allow_internet_access=allow_internet_access, mcp=mcp, network=network, iam=iam,
            lifecycle=lifecycle, volume_mounts=volume_mounts, gateways=gateways, api=api,
        )  # fmt: skip
        op = create_op(plan.options, plan.api_key)
        with translated():
            native = await NativeAsyncSandbox._open(op, plan.options.request_timeout, plan.options)
        TOKENS.remember(native.sandbox_id, native.access_token)
        sbx = cls(native)
        sbx._create_envs = dict(plan.envs)
        try:  # E2B's default variables, and create's envs
            with translated():
                await adrive(envs_op(native._core, plan.template_id, plan.envs), native._transport)
        except BaseException:
            await sbx.kill()
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
    ) -> AsyncSandboxPaginator:
        """The running and paused sandboxes (``await paginator.next_items()``), as the sync shim's
        ``Sandbox.list`` (by metadata, state, start and template)."""
        check_list(query, order, api, "AsyncSandbox.list")
        states, metadata = native_states(query), None if query is None else query.metadata

        async def read() -> list[SandboxInfo]:
            listed = await _plane_call(
                api, "AsyncSandbox.list", lambda url, key: list_op(url, key, states, metadata)
            )
            return live_items(listed, query, order)

        return AsyncSandboxPaginator(read, limit, next_token)

    async def is_running(self, request_timeout: float | None = None) -> bool:
        """True while the sandbox runs (False when paused or ended)."""
        with translated():
            return (await self._native.get_info()).state == "running"

    async def close(self) -> None:
        """Closes this handle's connections (the sandbox goes on; ``async with`` kills it). Not in E2B."""
        await self._native.close()

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            await self.kill()
        finally:
            await self.close()

