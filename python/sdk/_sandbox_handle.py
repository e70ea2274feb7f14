"""``Sandbox``: the sync handle on one isolated sandbox (``sdk/sandbox.ts``), imported from ``sdk.sandbox``
(or ``sdk``). Built on the lifecycle layer (``sdk._sandbox_options``, ``sdk._lifecycle_options``,
``sdk._sandbox_lifecycle``, ``sdk._pool_core``), which imports nothing of this module.

``Sandbox.create(pool=...)`` takes the sync pool by its slots' class, ``SlotPool`` (of ``sdk._pool_core``),
whose ``take`` gives a ``Sandbox``: ``SandboxPool`` (``sdk.sandbox_pool``) is that class with its ``take``,
and imports this module, so this one cannot import it."""

from __future__ import annotations

from types import TracebackType
from datetime import datetime
from typing import Any, Mapping, Sequence

from ._http import Op, Transport, drive
from ._hybrid import hybridmethod
from ._pool_core import SlotPool
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
from ._secret_ops import drive_secrets
from ._home_persistence import drive_home, restore_on_create_op
from ._sandbox_extras import SandboxExtras, home_of, keep_on_failure_of, reincarnating
from .s3_prefix import S3Prefix
from ._wire import Isolation, SandboxInfo, SandboxMetric, SandboxState
from .gateways import Gateways
from .secret_cache import SecretCache
from .secret_gateway import SecretGateway, SecretSource
from .commands import Commands
from .files import Files
from .sandbox_agent import SandboxAgent
from .egress import SandboxEgress
from .egress_policy import EgressPolicy
from .credential_rules import CredentialRule
from .credentials import SandboxCredentials
from .ports import SandboxPorts
from .pty import Pty
from .errors import SandboxException
from .snapshot import Snapshot, SnapshotFacts


def _connect_new(  # the class side of ``Sandbox.connect``
    cls: type[Sandbox],
    sandbox_id: str,
    *,
    access_token: str | None = None,
    control_plane_url: str | None = None,
    request_timeout: float | None = None,
) -> Sandbox:
    """``Sandbox.connect(sandbox_id, access_token=...)``: a handle on an existing sandbox, resumed when
    suspended; the token comes from ``access_token`` or ``SDK_ACCESS_TOKEN``. On a handle,
    ``sbx.connect()`` resumes its sandbox and returns the handle.

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
    return cls._open(connect_op(o), o.request_timeout)


def _info_of(  # the class side of ``Sandbox.get_info``
    cls: type[Sandbox],
    sandbox_id: str,
    *,
    access_token: str | None = None,
    control_plane_url: str | None = None,
    request_timeout: float | None = None,
) -> SandboxInfo:
    """``Sandbox.get_info(sandbox_id)``: one sandbox's facts without a handle (also once it has ended),
    with ``access_token`` when given, else the operator key (``SDK_API_KEY``). On a handle,
    ``sbx.get_info()`` reads its own sandbox's facts with its token.

    :raises InvalidArgumentException: for a malformed argument, before any call
    :raises AuthenticationException: when the control plane refuses the token or key
    :raises SandboxException: ``sandbox_not_found`` for an id the control plane does not know
    """
    o = resolve_info_options(
        sandbox_id, access_token=access_token, control_plane_url=control_plane_url, request_timeout=request_timeout
    )
    transport = Transport(o.request_timeout)
    try:
        return drive(sandbox_info_op(o), transport)
    finally:
        transport.close()


def _info(self: Sandbox) -> SandboxInfo:
    """``sbx.get_info()``: the sandbox's facts now (also once it has ended: they come from the control
    plane's record)."""
    return drive(self._core.info_op(), self._transport)


def _metrics_of(  # the class side of ``Sandbox.get_metrics``
    cls: type[Sandbox],
    sandbox_id: str,
    *,
    access_token: str | None = None,
    start: datetime | int | None = None,
    end: datetime | int | None = None,
    control_plane_url: str | None = None,
    request_timeout: float | None = None,
) -> list[SandboxMetric]:
    """``Sandbox.get_metrics(sandbox_id)``: a sandbox's metrics samples without a handle (see
    ``sbx.get_metrics``), with ``access_token`` when given, else the operator key (``SDK_API_KEY``).

    Example::

        latest = Sandbox.get_metrics(sandbox_id, start=datetime.now(timezone.utc) - timedelta(minutes=1))

    :raises InvalidArgumentException: for a malformed argument (``start`` after ``end`` included), before
        any call
    :raises AuthenticationException: when the control plane refuses the token or key
    :raises SandboxException: ``sandbox_not_found`` for an id the control plane does not know (or whose
        samples it no longer keeps)
    """
    o = resolve_metrics_options(
        sandbox_id,
        access_token=access_token,
        control_plane_url=control_plane_url,
        request_timeout=request_timeout,
        start=start,
        end=end,
    )
    transport = Transport(o.request_timeout)
    try:
        return drive(sandbox_metrics_op(o), transport)
    finally:
        transport.close()


def _metrics(
    self: Sandbox, start: datetime | int | None = None, end: datetime | int | None = None
) -> list[SandboxMetric]:
    """``sbx.get_metrics(start=None, end=None)``: the samples of the sandbox's CPU, memory, disk and
    network the control plane took while it ran (every 5 s by default, ``sdk serve
    --metrics-interval-ms``; none while suspended; coarser further back in a long life), oldest first,
    those taken at or after ``start`` and at or before ``end`` when given: an aware ``datetime`` or whole
    milliseconds since the epoch (a naive datetime is refused). ``GET /v1/sandboxes/:id/metrics`` with the
    sandbox's token; never resumes the sandbox, and answers a while after it ended.

    Example::

        samples = sbx.get_metrics(start=datetime.now(timezone.utc) - timedelta(minutes=1))
        if samples:
            print(samples[-1].cpu_used_pct, samples[-1].mem_used_bytes)

    :raises InvalidArgumentException: (``field`` ``start`` or ``end``) for a malformed instant or a
        ``start`` after ``end``, before any call
    """
    checked = metrics_range(start, end)
    return drive(self._core.metrics_op(checked), self._transport)


class Sandbox(SandboxExtras):
    """A sandbox handle (sync). Build one with :meth:`create` or :meth:`connect`; ``with`` kills the
    sandbox at exit.

    Example::

        with Sandbox.create(template="sdk-base-caps", allow_internet_access=False) as sbx:
            print(sbx.commands.run("echo hello").stdout)
            sbx.pause()
            sbx.connect()  # resumed, memory kept

    Once the handle knows its sandbox ended (after :meth:`kill`, or an answer saying so), every call that
    acts on it raises ``SandboxException`` (code ``sandbox_ended``) before any traffic.
    """

    def __init__(
        self, launched: Launched, transport: Transport, creating: CreateOptions | None = None
    ) -> None:
        """Not for callers: use :meth:`create` or :meth:`connect`."""
        self._core = SandboxCore(launched)
        self._transport = transport
        self._gateway_core = gateway_core(self._core, creating)
        #: The options this handle created its sandbox with (creating handles only).
        self._creating = creating
        #: The gateway routes by name (:class:`~sdk.gateways.GatewayStatus`); empty without gateways.
        self.gateways = Gateways(self._gateway_core, transport)
        #: Commands in the sandbox (a suspended sandbox with auto-resume is resumed where a call reaches it).
        self.commands = Commands(self._core, transport)
        #: Files in the sandbox, read and written as its user (resumed as commands are).
        self.files = Files(self._core, transport)
        #: The egress policy: ``policy`` (last known, no call) and ``update(policy)``.
        self.egress = SandboxEgress(self._core, transport)
        self._credential_core = credential_core(self._core, creating, self._gateway_core.cache)
        #: The credential broker: ``status`` (last read, no call) and ``refresh()``; the rules on the
        #: creating handle only.
        self.credentials = SandboxCredentials(self._credential_core, transport)
        #: Preview URLs of the sandbox's loopback ports (issue 28): ``url(port)`` and ``token(port)`` (no
        #: call), ``expose(port, public=...)`` and ``public_ports()``.
        self.ports = SandboxPorts(self._core, transport)
        #: Terminals in the sandbox (issue 28): ``create(on_data=...)`` and ``connect(pid, on_data=...)``.
        self.pty = Pty(self._core, transport)
        #: The agent (``sbx.agent.run``/``stream``/``prepare``); touching it makes no call.
        self.agent = SandboxAgent(self._gateway_core, transport)

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
        """The preview URL of ``port``, as :meth:`ports.url <sdk.ports.SandboxPorts.url>`: a URL on the
        control plane that reaches the sandbox's ``127.0.0.1:<port>`` (HTTP, server-sent events,
        WebSockets), its token in the query. Makes no call.

        :raises InvalidArgumentException: a port out of 1-65535 (``field`` ``port``)
        :raises AuthenticationException: on a handle whose access token the control plane refused
        """
        return self.ports.url(port)

    def __repr__(self) -> str:
        return f"Sandbox(sandbox_id={self.sandbox_id!r})"

    @classmethod
    def create(
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
        pool: SlotPool[Sandbox] | None = None,
        snapshot: str | SnapshotFacts | None = None,
        egress: EgressPolicy | Mapping[str, Any] | None = None,
        credentials: Sequence[CredentialRule | Mapping[str, Any]] | None = None,
        metadata: Mapping[str, str] | None = None,
        webhook_url: str | None = None,
    ) -> Sandbox:
        """Creates a sandbox. Every argument is checked first, so a malformed one raises
        ``InvalidArgumentException`` (``field`` names it) before any call.

        :param template: image name or ARN (``sdk-base``, the default, ``sdk-base-caps``, ``sdk-agent``);
            from a ``snapshot``, the snapshot's unless given (a different one is refused)
        :param allow_internet_access: False for closed egress (default True; from a ``snapshot``, as the
            snapshot's sandbox had it unless given)
        :param egress: where the sandbox's code may connect: an ``EgressPolicy`` (``open``, ``closed`` or
            ``allowlist``, with ``allow`` and ``deny`` domains, ``*.`` wildcards and IPv4 CIDRs) or a
            mapping of its options (``{"mode": "allowlist", "allow": ["pypi.org"]}``); sent normalised.
            Without it ``allow_internet_access`` decides (open or closed); with
            ``allow_internet_access=False`` only mode ``closed`` is accepted. From a ``snapshot``, the
            snapshot's sandbox's unless given; refused with ``pool``. ``sbx.egress.update`` changes it later
        :param isolation: the boundary between the sandbox's code and the host: ``namespace`` (the host's
            kernel behind namespaces, cgroups and a seccomp filter) or ``gvisor`` (gVisor's kernel in
            between); by default ``SDK_ISOLATION``, else the control plane's default
        :param timeout: lifetime in seconds, running plus suspended (default 3600, at most 8 h)
        :param memory_mb: memory of sandbox code, MiB (32-16384); by default the template's
        :param cpus: CPU time in CPUs (0.05-64); by default the template's
        :param control_plane_url: else ``SDK_CONTROL_PLANE_URL``, else ``http://127.0.0.1:4780``
        :param request_timeout: deadline of one call, seconds (default 120)
        :param gateways: route name to ``SecretGateway`` (at most 8), opened before this returns:
            secrets read just before the configuration is sent; ``sbx.gateways[name].url`` in the sandbox
        :param secrets: environment variable name to secret name or ``SecretRef`` (at most 64): the
            values are in the environment of every command (readable by any sandbox code)
        :param credentials: the credential broker's rules (at most 32, one per host): each a
            ``CredentialRule(host, headers)`` or a mapping ``{"host": ..., "headers": {name: secret}}``.
            Each header's secret (a name or a ``SecretRef``), read with ``secret_cache`` at create, is added
            to every HTTPS request sandbox code sends that exact host through the sandbox's proxy
            (``HTTPS_PROXY``, set for every command, with a CA of the sandbox's own that its toolchains
            trust): sandbox code uses the credential and cannot read it. Sent after ``gateways``, before
            ``secrets``; refused with ``pool``. ``sbx.credentials.refresh()`` re-reads the secrets
        :param secret_cache: where gateway secrets, credentials and ``secrets`` are read (default: the
            local store)
        :param keep_on_failure: keep the launched sandbox when opening its gateways, credentials or
            secrets fails
        :param persist: where the home directory is restored from now and saved by
            :meth:`checkpoint_files` (``S3Prefix``); needs ``execution_role_arn``
        :param execution_role_arn: the role (assumed with the caller's credentials) that reaches ``persist``
        :param pool: take the sandbox from this ``SandboxPool`` (``pool.take()``, a hot slot): the other
            options are the pool's; ``gateways`` (open them with ``pool.take``), ``secrets``,
            ``credentials``, ``persist``, ``snapshot`` and ``egress`` are refused with it
        :param snapshot: start from this snapshot (``sbx.snapshot()``, or its id): its template,
            isolation and limits (``SDK_ISOLATION`` does not apply), and with a memory snapshot its
            running processes; a snapshot holds no gateway, so give ``gateways`` here
        :param metadata: a string map (at most 64 entries; keys 1-128 characters, values at most 1024, no
            control characters) shown by ``get_info`` and :meth:`list` and matched by
            ``Sandbox.list(metadata=...)``; readable by whoever may read the sandbox's facts, so never a
            secret. Ignored with ``pool`` (the pool's slot is taken as it is), as in TypeScript
        :param webhook_url: where this sandbox's lifecycle events (created, paused, resumed, ended, failed)
            are POSTed, signed with the control plane's webhook secret (``sdk.verify_webhook_signature``),
            besides the control plane's own destinations: an http or https URL of at most 2048 characters,
            without user name, password or fragment; never shown by ``get_info`` or :meth:`list`. Sent only
            when given; ignored with ``pool``, as in TypeScript
        :raises InvalidArgumentException: for a malformed option, or (without ``isolation``) an
            ``SDK_ISOLATION`` other than ``namespace`` or ``gvisor``, before any call
        :raises SecretNotFoundException: for a missing secret; the new sandbox is then ended unless
            ``keep_on_failure``
        :raises SandboxException: when the daemon refuses the configuration (``failure_class`` says why;
            the sandbox is ended unless ``keep_on_failure``)
        :raises AuthenticationException: without a valid operator key (``SDK_API_KEY``)
        :raises SandboxException: when the sandbox cannot be launched
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
            pool_kind=SlotPool,
            pool_name="SandboxPool",
        )
        if pool is not None:
            return pool.take()
        return cls._open(create_op(o), o.request_timeout, o)

    def _resume(self) -> Sandbox:
        drive(self._core.resume_op(), self._transport)
        return self

    #: ``Sandbox.connect(sandbox_id, ...)`` connects a new handle; ``sbx.connect()`` resumes this one.
    connect = hybridmethod(_connect_new, _resume)

    @classmethod
    def _open(
        cls, op: Op[Launched], request_timeout: float, creating: CreateOptions | None = None
    ) -> Sandbox:
        transport = Transport(request_timeout)
        try:
            sbx = cls(drive(op, transport), transport, creating)
            restoring = restore_on_create_op(sbx._core, home_of(creating), keep_on_failure_of(creating))
            drive_home(restoring, transport, sbx._core)
            gateways = sbx._gateway_core
            drive_secrets(start_op(gateways, sbx._credential_core, creating), transport, gateways.cache)
        except BaseException:
            transport.close()
            raise
        return sbx

    def reincarnate(self) -> Sandbox:
        """A new sandbox created with this handle's options and gateways (secrets read again), for a
        sandbox that ended or must be replaced.

        :raises InvalidArgumentException: on a connected handle or one created without gateways, before
            any call
        """
        creating = reincarnating(self._creating)
        return Sandbox._open(create_op(creating), creating.request_timeout, creating)

    #: ``Sandbox.get_info(sandbox_id, ...)`` reads any sandbox's facts; ``sbx.get_info()`` this one's.
    get_info = hybridmethod(_info_of, _info)

    #: ``Sandbox.get_metrics(sandbox_id, ...)`` reads any sandbox's samples; ``sbx.get_metrics()`` this one's.
    get_metrics = hybridmethod(_metrics_of, _metrics)

    def set_timeout(self, timeout: float) -> SandboxInfo:
        """Sets the sandbox to end ``timeout`` seconds from now, sooner or later than before, never past
        8 h from its creation (running plus suspended); a suspended sandbox stays suspended.
        ``POST /v1/sandboxes/:id/timeout`` with the sandbox's token; returns its facts (``deadline_at``).

        :raises InvalidArgumentException: for a ``timeout`` that is not a number of seconds from 0.001 to
            8 h (``field`` ``timeout``, before any call), or past 8 h from the sandbox's creation (the
            control plane's refusal, ``field`` ``timeoutMs``; nothing changed)
        :raises SandboxException: (code ``sandbox_ended``) once the handle knows its sandbox ended, before
            any call
        """
        timeout_ms = set_timeout_ms(timeout)
        return drive(self._core.set_timeout_op(timeout_ms), self._transport)

    def pause(self) -> None:
        """Suspends the sandbox with its memory kept."""
        drive(self._core.pause_op(), self._transport)

    def snapshot(self) -> Snapshot:
        """Takes a snapshot of the sandbox, which goes on running: with gVisor its processes, memory and
        files (``kind`` ``memory``), with namespaces its files (``filesystem``). A suspended sandbox is
        resumed first, as by any call. ``Sandbox.create(snapshot=...)`` starts a new sandbox from it.

        :raises SandboxException: ``no_space`` past the control plane's cap of snapshots,
            ``sandbox_ended``...
        """
        return Snapshot._of(drive(self._core.snapshot_op(), self._transport))

    def fork(self, *, count: int = 1) -> list[Sandbox]:
        """Takes a snapshot and starts ``count`` sandboxes from it at once (1 to 100), each with its own
        id, token, network and clocks, none with gateways (give them with
        ``Sandbox.create(snapshot=..., gateways=...)`` instead). All of them or none. Needs the operator
        key (``SDK_API_KEY``), as ``create``.

        :raises InvalidArgumentException: for a bad ``count``, before any call
        """
        forked = drive(self._core.fork_op(fork_count(count)), self._transport)
        plane_url, timeout = self._core.launched.plane_url, self._transport.request_timeout
        return [
            type(self)(launched_from(created, plane_url, timeout), Transport(timeout))
            for created in forked.sandboxes
        ]

    def kill(self) -> None:
        """Ends the sandbox and removes every resource.

        :raises SandboxException: (code ``sandbox_ended``) when the sandbox has already ended
        """
        drive(self._core.kill_op(), self._transport)

    def close(self) -> None:
        """Stops this handle's directory watches and closes its connections; the sandbox goes on running
        (``with`` kills it instead)."""
        self.files.stop_watching()
        self._transport.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            if self._core.end_reason is None:
                self.kill()
        except SandboxException as refused:
            if refused.code != "sandbox_ended":
                raise
        finally:
            self.close()

    @classmethod
    def list(
        cls,
        *,
        metadata: Mapping[str, str] | None = None,
        state: Sequence[SandboxState] | None = None,
        control_plane_url: str | None = None,
        request_timeout: float | None = None,
    ) -> _Infos:
        """The control plane's sandboxes, ended ones included (live ones first): those in one of
        ``state`` (``running``, ``suspended``, ``ended``) when given, whose metadata holds every entry of
        ``metadata`` when given. Needs the operator key (``SDK_API_KEY``).

        Example::

            mine = Sandbox.list(metadata={"owner": "ci"}, state=["running", "suspended"])

        :raises InvalidArgumentException: for a malformed argument, before any call
        :raises AuthenticationException: without a valid operator key
        """
        o = resolve_list_options(
            metadata=metadata, state=state, control_plane_url=control_plane_url, request_timeout=request_timeout
        )
        transport = Transport(o.request_timeout)
        try:
            return drive(list_sandboxes_op(o), transport)
        finally:
            transport.close()


#: The answer of ``Sandbox.list`` (named here: inside the class ``list`` is the method).
_Infos = list[SandboxInfo]
