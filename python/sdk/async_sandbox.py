"""``AsyncSandbox``: the async handle on one isolated sandbox, the same operations as
:class:`sdk.sandbox.Sandbox` awaited (``httpx.AsyncClient``), and ``AsyncSandboxPool``, whose ``take``
opens one."""

from __future__ import annotations

from types import TracebackType
from datetime import datetime
from typing import Any, Mapping, Sequence
from ._http import AsyncTransport, Op, adrive
from ._hybrid import hybridmethod
from ._pool_core import AsyncSlotPool, ready_op
from ._sandbox_core import SandboxCore, fork_count
from ._sandbox_lifecycle import (
    Launched,
    connect_op,
    create_op,
    launched_from,
    list_sandboxes_op,
    sandbox_info_op,
    sandbox_metrics_op,
)
from ._lifecycle_options import (
    metrics_range,
    resolve_info_options,
    resolve_list_options,
    resolve_metrics_options,
    set_timeout_ms,
)
from ._sandbox_options import (
    DEFAULT_SANDBOX_TIMEOUT,
    CreateOptions,
    resolve_connect_options,
    resolve_create_options,
)
from ._sandbox_secrets import credential_core, gateway_core, start_op
from ._secret_ops import adrive_secrets
from ._home_persistence import adrive_home, restore_on_create_op
from ._sandbox_extras import AsyncSandboxExtras, home_of, keep_on_failure_of, reincarnating
from .s3_prefix import S3Prefix
from ._wire import Isolation, SandboxInfo, SandboxMetric, SandboxState
from .gateways import AsyncGateways
from .secret_cache import SecretCache
from .secret_gateway import SecretGateway, SecretSource
from .async_commands import AsyncCommands
from .async_files import AsyncFiles
from .sandbox_agent import AsyncSandboxAgent
from .egress import AsyncSandboxEgress
from .egress_policy import EgressPolicy
from .credential_rules import CredentialRule
from .credentials import AsyncSandboxCredentials
from .ports import AsyncSandboxPorts
from .async_pty import AsyncPty
from .errors import SandboxException
from .snapshot import AsyncSnapshot, SnapshotFacts


async def _connect_new(  # the class side of ``AsyncSandbox.connect``
    cls: type[AsyncSandbox],
    sandbox_id: str,
    *,
    access_token: str | None = None,
    control_plane_url: str | None = None,
    request_timeout: float | None = None,
) -> AsyncSandbox:
    """``await AsyncSandbox.connect(sandbox_id, access_token=...)``: a handle on an existing sandbox,
    resumed when suspended; the token comes from ``access_token`` or ``SDK_ACCESS_TOKEN``. On a
    handle, ``await sbx.connect()`` resumes its sandbox and returns the handle.

    :raises InvalidArgumentException: for a malformed argument, before any call
    :raises AuthenticationException: without a token, before any call (a token the sandbox refuses
        raises at the first call that acts on it)
    """
    o = resolve_connect_options(
        sandbox_id,
        access_token=access_token,
        control_plane_url=control_plane_url,
        request_timeout=request_timeout,
    )
    return await cls._open(connect_op(o), o.request_timeout)


async def _info_of(  # the class side of ``AsyncSandbox.get_info``
    cls: type[AsyncSandbox],
    sandbox_id: str,
    *,
    access_token: str | None = None,
    control_plane_url: str | None = None,
    request_timeout: float | None = None,
) -> SandboxInfo:
    """``await AsyncSandbox.get_info(sandbox_id)``: as ``Sandbox.get_info``, awaited (``access_token``,
    else the operator key). On a handle, ``await sbx.get_info()`` reads its own sandbox's facts.

    :raises InvalidArgumentException: for a malformed argument, before any call
    :raises AuthenticationException: when the control plane refuses the token or key
    """
    o = resolve_info_options(
        sandbox_id, access_token=access_token, control_plane_url=control_plane_url, request_timeout=request_timeout
    )
    transport = AsyncTransport(o.request_timeout)
    try:
        return await adrive(sandbox_info_op(o), transport)
    finally:
        await transport.aclose()


async def _info(self: AsyncSandbox) -> SandboxInfo:
    """``await sbx.get_info()``: the sandbox's facts now (also once it has ended: they come from the
    control plane's record)."""
    return await adrive(self._core.info_op(), self._transport)


async def _metrics_of(  # the class side of ``AsyncSandbox.get_metrics``
    cls: type[AsyncSandbox],
    sandbox_id: str,
    *,
    access_token: str | None = None,
    start: datetime | int | None = None,
    end: datetime | int | None = None,
    control_plane_url: str | None = None,
    request_timeout: float | None = None,
) -> list[SandboxMetric]:
    """``await AsyncSandbox.get_metrics(sandbox_id)``: as ``Sandbox.get_metrics``, awaited
    (``access_token``, else the operator key). On a handle, ``await sbx.get_metrics()`` reads its own.

    :raises InvalidArgumentException: for a malformed argument, before any call
    :raises AuthenticationException: when the control plane refuses the token or key
    """
    o = resolve_metrics_options(
        sandbox_id,
        access_token=access_token,
        control_plane_url=control_plane_url,
        request_timeout=request_timeout,
        start=start,
        end=end,
    )
    transport = AsyncTransport(o.request_timeout)
    try:
        return await adrive(sandbox_metrics_op(o), transport)
    finally:
        await transport.aclose()


async def _metrics(
    self: AsyncSandbox, start: datetime | int | None = None, end: datetime | int | None = None
) -> list[SandboxMetric]:
    """``await sbx.get_metrics(start=None, end=None)``: as :meth:`sdk.sandbox.Sandbox.get_metrics` on a
    handle, awaited (an aware ``datetime`` or whole ms since the epoch; never resumes the sandbox).

    :raises InvalidArgumentException: (``field`` ``start`` or ``end``) for a malformed instant or a
        ``start`` after ``end``, before any call
    """
    checked = metrics_range(start, end)
    return await adrive(self._core.metrics_op(checked), self._transport)


class AsyncSandbox(AsyncSandboxExtras):
    """A sandbox handle (async). Build one with :meth:`create` or :meth:`connect`; ``async with`` kills
    the sandbox at exit.

    Example::

        async with await AsyncSandbox.create(template="sdk-base") as sbx:
            print((await sbx.commands.run("echo hello")).stdout)
            await sbx.pause()
            await sbx.connect()  # resumed, memory kept

    Once the handle knows its sandbox ended, every call that acts on it raises ``SandboxException``
    (code ``sandbox_ended``) before any traffic.
    """

    def __init__(
        self, launched: Launched, transport: AsyncTransport, creating: CreateOptions | None = None
    ) -> None:
        """Not for callers: use :meth:`create` or :meth:`connect`."""
        self._core = SandboxCore(launched)
        self._transport = transport
        self._gateway_core = gateway_core(self._core, creating)
        #: The options this handle created its sandbox with (creating handles only).
        self._creating = creating
        #: The gateway routes by name (:class:`~sdk.gateways.GatewayStatus`); empty without gateways.
        self.gateways = AsyncGateways(self._gateway_core, transport)
        #: Commands in the sandbox (a suspended sandbox with auto-resume is resumed where a call reaches it).
        self.commands = AsyncCommands(self._core, transport)
        #: Files in the sandbox, read and written as its user (resumed as commands are).
        self.files = AsyncFiles(self._core, transport)
        #: The egress policy: ``policy`` (last known, no call) and ``update(policy)``.
        self.egress = AsyncSandboxEgress(self._core, transport)
        self._credential_core = credential_core(self._core, creating, self._gateway_core.cache)
        #: The credential broker: ``status`` (last read, no call) and ``refresh()``; the rules on the
        #: creating handle only.
        self.credentials = AsyncSandboxCredentials(self._credential_core, transport)
        #: Preview URLs of the sandbox's loopback ports (issue 28): ``url(port)`` and ``token(port)`` (no
        #: call), ``expose(port, public=...)`` and ``public_ports()``.
        self.ports = AsyncSandboxPorts(self._core, transport)
        #: Terminals in the sandbox (issue 28): ``create(on_data=...)`` and ``connect(pid, on_data=...)``.
        self.pty = AsyncPty(self._core, transport)
        #: The agent (``sbx.agent.run``/``stream``/``prepare``); touching it makes no call.
        self.agent = AsyncSandboxAgent(self._gateway_core, transport)

    @property
    def sandbox_id(self) -> str:
        """The sandbox id."""
        return self._core.sandbox_id

    @property
    def access_token(self) -> str:
        """The sandbox access token: give it to another process so it can :meth:`connect`. Never in
        ``repr`` or an exception message."""
        return self._core.access_token

    def get_host(self, port: int) -> str:
        """The preview URL of ``port``, as :meth:`ports.url <sdk.ports.AsyncSandboxPorts.url>`: a URL on the
        control plane that reaches the sandbox's ``127.0.0.1:<port>`` (HTTP, server-sent events,
        WebSockets), its token in the query. Makes no call.

        :raises InvalidArgumentException: a port out of 1-65535 (``field`` ``port``)
        :raises AuthenticationException: on a handle whose access token the control plane refused
        """
        return self.ports.url(port)

    def __repr__(self) -> str:
        return f"AsyncSandbox(sandbox_id={self.sandbox_id!r})"

    @classmethod
    async def create(
        cls,
        *,
        template: str | None = None,
        allow_internet_access: bool | None = None,
        isolation: Isolation | None = None,
        timeout: float = DEFAULT_SANDBOX_TIMEOUT,
        memory_mb: int | None = None,
        cpus: float | None = None,
        control_plane_url: str | None = None,
        request_timeout: float | None = None,
        gateways: Mapping[str, SecretGateway] | None = None,
        secrets: Mapping[str, SecretSource] | None = None,
        secret_cache: SecretCache | None = None,
        keep_on_failure: bool = False,
        persist: S3Prefix | None = None,
        execution_role_arn: str | None = None,
        pool: AsyncSandboxPool | None = None,
        snapshot: str | SnapshotFacts | None = None,
        egress: EgressPolicy | Mapping[str, Any] | None = None,
        credentials: Sequence[CredentialRule | Mapping[str, Any]] | None = None,
        metadata: Mapping[str, str] | None = None,
        webhook_url: str | None = None,
    ) -> AsyncSandbox:
        """Creates a sandbox; the options of :meth:`sdk.sandbox.Sandbox.create`, checked before any call.
        With ``pool`` (an ``AsyncSandboxPool``) the sandbox is ``await pool.take()``'s; with ``snapshot``
        (an id, a ``Snapshot`` or an ``AsyncSnapshot``) it starts from that snapshot.

        :raises InvalidArgumentException: for a malformed option, or (without ``isolation``) an
            ``SDK_ISOLATION`` other than ``namespace`` or ``gvisor``, before any call
        :raises AuthenticationException: without a valid operator key (``SDK_API_KEY``)
        :raises SecretNotFoundException: for a missing secret of ``gateways``, ``credentials`` or
            ``secrets`` (the new sandbox is ended unless ``keep_on_failure``)
        :raises SandboxException: when the sandbox cannot be launched, or its daemon refuses the gateway
            configuration (``failure_class``; ended unless ``keep_on_failure``)
        """
        o = resolve_create_options(
            template=template,
            allow_internet_access=allow_internet_access,
            isolation=isolation,
            timeout=timeout,
            memory_mb=memory_mb,
            cpus=cpus,
            control_plane_url=control_plane_url,
            request_timeout=request_timeout,
            gateways=gateways,
            secrets=secrets,
            secret_cache=secret_cache,
            keep_on_failure=keep_on_failure,
            persist=persist,
            execution_role_arn=execution_role_arn,
            pool=pool,
            snapshot=snapshot,
            egress=egress,
            credentials=credentials,
            metadata=metadata,
            webhook_url=webhook_url,
            pool_kind=AsyncSandboxPool,
        )
        if pool is not None:
            return await pool.take()
        return await cls._open(create_op(o), o.request_timeout, o)

    async def _resume(self) -> AsyncSandbox:
        await adrive(self._core.resume_op(), self._transport)
        return self

    #: ``AsyncSandbox.connect(sandbox_id, ...)`` connects a new handle; ``sbx.connect()`` resumes this one.
    connect = hybridmethod(_connect_new, _resume)

    @classmethod
    async def _open(
        cls, op: Op[Launched], request_timeout: float, creating: CreateOptions | None = None
    ) -> AsyncSandbox:
        transport = AsyncTransport(request_timeout)
        try:
            sbx = cls(await adrive(op, transport), transport, creating)
            restoring = restore_on_create_op(sbx._core, home_of(creating), keep_on_failure_of(creating))
            await adrive_home(restoring, transport, sbx._core)
            gateways = sbx._gateway_core
            await adrive_secrets(start_op(gateways, sbx._credential_core, creating), transport, gateways.cache)
        except BaseException:
            await transport.aclose()
            raise
        return sbx

    async def reincarnate(self) -> AsyncSandbox:
        """As :meth:`sdk.sandbox.Sandbox.reincarnate`, awaited."""
        creating = reincarnating(self._creating)
        return await AsyncSandbox._open(create_op(creating), creating.request_timeout, creating)

    #: ``AsyncSandbox.get_info(sandbox_id, ...)`` reads any sandbox's facts; ``sbx.get_info()`` this one's.
    get_info = hybridmethod(_info_of, _info)

    #: ``AsyncSandbox.get_metrics(sandbox_id, ...)`` reads any sandbox's samples; ``sbx.get_metrics()`` this
    #: one's.
    get_metrics = hybridmethod(_metrics_of, _metrics)

    async def set_timeout(self, timeout: float) -> SandboxInfo:
        """As :meth:`sdk.sandbox.Sandbox.set_timeout`, awaited: the sandbox ends ``timeout`` seconds from
        now (never past 8 h from its creation).

        :raises InvalidArgumentException: for a bad ``timeout`` (before any call), or past 8 h from the
            sandbox's creation (the control plane's refusal)
        :raises SandboxException: (code ``sandbox_ended``) once the handle knows its sandbox ended
        """
        timeout_ms = set_timeout_ms(timeout)
        return await adrive(self._core.set_timeout_op(timeout_ms), self._transport)

    async def pause(self) -> None:
        """Suspends the sandbox with its memory kept."""
        await adrive(self._core.pause_op(), self._transport)

    async def snapshot(self) -> AsyncSnapshot:
        """As :meth:`sdk.sandbox.Sandbox.snapshot`, awaited: an ``AsyncSnapshot`` (``list`` and
        ``delete`` awaited).

        :raises SandboxException: ``no_space`` past the control plane's cap of snapshots,
            ``sandbox_ended``...
        """
        return AsyncSnapshot._of(await adrive(self._core.snapshot_op(), self._transport))

    async def fork(self, *, count: int = 1) -> list[AsyncSandbox]:
        """As :meth:`sdk.sandbox.Sandbox.fork`, awaited: ``count`` (1 to 100) new handles, all or none.

        :raises InvalidArgumentException: for a bad ``count``, before any call
        """
        forked = await adrive(self._core.fork_op(fork_count(count)), self._transport)
        plane_url, timeout = self._core.launched.plane_url, self._transport.request_timeout
        return [
            type(self)(launched_from(created, plane_url, timeout), AsyncTransport(timeout))
            for created in forked.sandboxes
        ]

    async def kill(self) -> None:
        """Ends the sandbox and removes every resource.

        :raises SandboxException: (code ``sandbox_ended``) when the sandbox has already ended
        """
        await adrive(self._core.kill_op(), self._transport)

    async def close(self) -> None:
        """Stops following background commands and terminals, stops the directory watches and closes this
        handle's connections; the sandbox goes on running (``async with`` kills it instead)."""
        await self.commands.stop_following()
        await self.pty.stop_following()
        await self.files.stop_watching()
        await self._transport.aclose()

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            if self._core.end_reason is None:
                await self.kill()
        except SandboxException as refused:
            if refused.code != "sandbox_ended":
                raise
        finally:
            await self.close()

    @classmethod
    async def list(
        cls,
        *,
        metadata: Mapping[str, str] | None = None,
        state: Sequence[SandboxState] | None = None,
        control_plane_url: str | None = None,
        request_timeout: float | None = None,
    ) -> _Infos:
        """As :meth:`sdk.sandbox.Sandbox.list`, awaited: the control plane's sandboxes (ended ones too),
        filtered by ``state`` and ``metadata``; needs the operator key (``SDK_API_KEY``).

        :raises InvalidArgumentException: for a malformed argument, before any call
        :raises AuthenticationException: without a valid operator key
        """
        o = resolve_list_options(
            metadata=metadata, state=state, control_plane_url=control_plane_url, request_timeout=request_timeout
        )
        transport = AsyncTransport(o.request_timeout)
        try:
            return await adrive(list_sandboxes_op(o), transport)
        finally:
            await transport.aclose()


#: The answer of ``AsyncSandbox.list`` (named here: inside the class ``list`` is the method).
_Infos = list[SandboxInfo]


class AsyncSandboxPool(AsyncSlotPool):
    """A pool of hot sandboxes (async): the same as :class:`sdk.sandbox.SandboxPool`, awaited. Make it
    inside a running event loop (its slots are launched by tasks of that loop). Also importable from
    ``sdk.sandbox_pool``; it lives beside the handle it hands out, over the slots of ``sdk._pool_core``.

    Example::

        async with AsyncSandboxPool(PoolConfig(2, "sdk-base")) as pool:
            sbx = await pool.take()
    """

    async def take(
        self,
        *,
        gateways: Mapping[str, SecretGateway] | None = None,
        secret_cache: SecretCache | None = None,
        keep_on_failure: bool = False,
    ) -> AsyncSandbox:
        """Hands over a hot slot (or a new sandbox when none is ready) and opens ``gateways`` on it; as
        :meth:`sdk.sandbox.SandboxPool.take`."""
        slot, creating = await self._take_slot(gateways, secret_cache, keep_on_failure)
        return await AsyncSandbox._open(ready_op(slot), creating.request_timeout, creating)

    async def __aenter__(self) -> AsyncSandboxPool:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()
