"""What the sync and the async shim ``Sandbox`` share: ``create``'s E2B arguments checked and turned
into native create options before any call, the sandbox-wide ``envs`` as an operation, the class-side
calls' server, ``list``'s and ``set_timeout``'s checks, the operations of ``kill``, ``pause``,
``set_timeout`` and ``connect`` (on the class by sandbox id and on a handle) that the sync shim drives and
the async one awaits, ``get_host`` on the preview URLs, the methods E2B has that this control plane
cannot honour, and ``dual`` (a method that works on the class with a sandbox id and on a handle)."""

from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime
from types import MethodType
from typing import (
    Any,
    Callable,
    Concatenate,
    Final,
    Generic,
    NoReturn,
    ParamSpec,
    Protocol,
    TypeVar,
    cast,
    overload,
)

from ... import errors as native_errors
from ..._http import Op
from ..._sandbox_core import SandboxCore
from ..._check import Checker
from ..._sandbox_metadata import check_metadata
from ..._lifecycle_options import set_timeout_ms
from ..._sandbox_options import CreateOptions, resolve_create_options
from ..._wire import SecretsState
from . import _plane as plane
from ._options import (
    DEFAULT_SANDBOX_TIMEOUT,
    E2B_DEFAULT_TEMPLATE,
    TOKENS,
    Server,
    check_envs,
    is_snapshot_id,
    native_template,
    resolve_server,
    sandbox_envs,
)
from ._network import NO_TRAFFIC_TOKEN, create_egress
from .exceptions import AuthenticationException, InvalidArgumentException, NotSupportedException, translated
from .sandbox_info import SandboxQuery, to_e2b_info

O = TypeVar("O")
PC = ParamSpec("PC")
PI = ParamSpec("PI")
RC = TypeVar("RC")
RI = TypeVar("RI")


class dual(Generic[O, PC, RC, PI, RI]):
    """``on_class`` when looked up on the class (E2B's ``Sandbox.kill(sandbox_id)``), ``on_instance`` on
    a handle (``sbx.kill()``)."""

    def __init__(
        self, on_class: Callable[Concatenate[type[O], PC], RC], on_instance: Callable[Concatenate[O, PI], RI]
    ) -> None:
        self._on_class = on_class
        self._on_instance = on_instance
        self.__doc__ = on_instance.__doc__

    @overload
    def __get__(self, obj: None, owner: type[O]) -> Callable[PC, RC]: ...

    @overload
    def __get__(self, obj: O, owner: type[O] | None = None) -> Callable[PI, RI]: ...

    def __get__(self, obj: O | None, owner: type[O] | None = None) -> Callable[..., Any]:
        if obj is None:
            return cast(Callable[PC, RC], MethodType(self._on_class, owner))
        return cast(Callable[PI, RI], MethodType(self._on_instance, obj))


#: Why ``create`` refuses ``gateways``, and what to use instead.
_NATIVE_FOR_GATEWAYS: Final = (
    "gateways is not accepted by the E2B shim; create the sandbox with the native SDK "
    "(sdk.Sandbox.create(gateways=...)) to use gateways and the agent"
)
#: ``create``'s E2B options this control plane cannot honour, and why.
_UNSUPPORTED_AT_CREATE: Final = {
    "mcp": "the MCP gateway is E2B's",
    "iam": "workload identity is E2B's",
    "lifecycle": "a sandbox here is always ended at its timeout and resumed on use",
    "volume_mounts": "volumes are E2B's",
}


@dataclass(frozen=True)
class CreatePlan:
    """A sandbox to create: the native options, the key to create it with, its sandbox-wide envs, and
    its ``E2B_TEMPLATE_ID`` (the template's name, or the snapshot id it starts from)."""

    options: CreateOptions
    api_key: str = field(repr=False)
    envs: dict[str, str] = field(repr=False)
    template_id: str = ""


def plan_create(
    *,
    template: object,
    timeout: object,
    metadata: object,
    envs: object,
    secure: object,
    allow_internet_access: object,
    mcp: object,
    network: object,
    iam: object,
    lifecycle: object,
    volume_mounts: object,
    gateways: object,
    api: dict[str, Any],
) -> CreatePlan:
    """Checks every argument of E2B's ``Sandbox.create`` before any call; ``network`` becomes the egress
    policy (``_network.create_egress``).

    ``metadata`` is the native ``metadata`` (checked with its rules: at most 64 entries, keys 1 to 128
    characters, values at most 1024, no control characters).

    :raises InvalidArgumentException: for a malformed argument (``metadata`` included) or ``gateways``
    :raises NotSupportedException: for a feature this control plane cannot honour
    :raises AuthenticationException: without an API key
    """
    server = resolve_server(**api)
    if gateways is not None:
        raise InvalidArgumentException(_NATIVE_FOR_GATEWAYS)
    given = {"mcp": mcp, "iam": iam, "lifecycle": lifecycle, "volume_mounts": volume_mounts}
    for name, value in given.items():
        if value is not None:
            raise NotSupportedException(name, _UNSUPPORTED_AT_CREATE[name])
    if not isinstance(secure, bool):
        raise InvalidArgumentException("secure: must be a bool")
    checked_envs = check_envs(envs)
    # E2B's network rules as the egress policy (``_network``); refused by name where they cannot be honoured.
    egress = None if network is None else create_egress("Sandbox.create", network, allow_internet_access)
    # E2B's snapshots are templates: Sandbox.create(snapshot_id) starts from the snapshot, its template and
    # isolation the snapshot's; allow_internet_access is sent, as E2B sends it.
    snapshot = template if is_snapshot_id(template) else None
    with translated():
        options = resolve_create_options(
            template=None if snapshot else native_template(template, closed_egress=allow_internet_access is False),
            allow_internet_access=allow_internet_access,
            timeout=DEFAULT_SANDBOX_TIMEOUT if timeout is None else timeout,
            memory_mb=None,
            cpus=None,
            control_plane_url=server.url,
            request_timeout=server.request_timeout,
            snapshot=snapshot,
            egress=egress,
            metadata=metadata,
        )
    template_id = str(snapshot) if snapshot else options.template
    return CreatePlan(options, server.key("Sandbox.create"), checked_envs, template_id)


def class_server(api: dict[str, Any], feature: str) -> tuple[Server, str]:
    """The server and key of a class-side call (``Sandbox.kill(sandbox_id)``, ``Sandbox.list()``)."""
    server = resolve_server(**api)
    return server, server.key(feature)


def check_list(query: SandboxQuery | None, order: object, api: dict[str, Any], feature: str) -> None:
    """``Sandbox.list``'s query, order, options and key, checked before any call.

    :raises InvalidArgumentException: for metadata past the native rules, a state other than E2B's, a
        ``started_after`` that is no datetime or a malformed template
    """
    if query is not None and query.metadata is not None:
        check = Checker("SandboxQuery")
        check_metadata(check, ("metadata",), query.metadata)
        with translated():
            check.done()
    if query is not None and query.started_after is not None and not isinstance(query.started_after, datetime):
        raise InvalidArgumentException("SandboxQuery.started_after: must be a datetime")
    if query is not None and query.state is not None:
        if not isinstance(query.state, (list, tuple)) or any(
            state not in ("running", "paused") for state in query.state
        ):
            raise InvalidArgumentException("SandboxQuery.state: must be a list of SandboxState")
    if query is not None and query.template is not None:
        native_template(query.template)
    if order is not None and order not in ("asc", "desc"):
        raise InvalidArgumentException(f'{feature}: order: must be "asc" or "desc"')
    class_server(api, feature)


def envs_op(core: SandboxCore, template: str, envs: dict[str, str]) -> Op[SecretsState]:
    """The sandbox-wide variables of a sandbox the shim created, E2B's defaults (``E2B_SANDBOX``...) and
    create's ``envs``: sandboxd adds them to every command (a command's own win)."""
    return core.daemon_op(core.put_secrets_call(sandbox_envs(core.sandbox_id, template, envs)))


def _gone(error: native_errors.SdkException) -> bool:
    """The sandbox is not there (any more): E2B answers False or ``SandboxNotFoundException`` then."""
    return error.code in ("sandbox_not_found", "sandbox_ended")


def token_op(server: Server, sandbox_id: str, explicit: object) -> Op[str]:
    """The access token ``connect(sandbox_id)`` presents (``TOKENS.token_for``). Without one, a sandbox
    that is gone is ``SandboxNotFoundException``, as in E2B, whoever asks (the key can tell).

    :raises AuthenticationException: without a token, for a sandbox that is there
    """
    try:
        return TOKENS.token_for(sandbox_id, explicit)
    except AuthenticationException:
        if server.api_key is not None:
            to_e2b_info((yield from plane.info_op(server.url, server.api_key, sandbox_id)))
        raise


def extend_lifetime_op(core: SandboxCore, seconds: int | None) -> Op[None]:
    """``connect(timeout=...)``, once connected: E2B's connect only ever lengthens a running sandbox's
    lifetime, so a ``timeout`` the sandbox already outlives changes nothing; a longer one sets it to end
    ``timeout`` seconds from now (the native ``set_timeout``; past 8 h from the sandbox's creation the
    control plane refuses it, ``InvalidArgumentException``)."""
    if seconds is None:
        return
    ends = to_e2b_info((yield from core.info_op())).end_at.timestamp()
    if time.time() + seconds > ends:
        yield from core.set_timeout_op(seconds * 1000)


def timeout_ms(timeout: object) -> int:
    """``set_timeout``'s ``timeout``, seconds (E2B's unit), as the native wire's milliseconds: 0.001 s to
    8 h, checked before any call (the native ``sbx.set_timeout``'s check).

    :raises InvalidArgumentException: (``field`` ``timeout``) for anything else
    """
    with translated():
        return set_timeout_ms(timeout)


def kill_by_id_op(url: str, api_key: str, sandbox_id: str) -> Op[bool]:
    """``Sandbox.kill(sandbox_id)`` with the API key: True when killed, False when not found."""
    try:
        yield from plane.kill_op(url, api_key, sandbox_id)
    except native_errors.SdkException as error:
        if _gone(error):
            return False
        raise
    TOKENS.forget(sandbox_id)
    return True


def kill_op(core: SandboxCore) -> Op[bool]:
    """``sbx.kill()``: True when killed, False when it had already ended."""
    try:
        yield from core.kill_op()
    except native_errors.SdkException as error:
        if _gone(error):
            return False
        raise
    finally:
        TOKENS.forget(core.sandbox_id)
    return True


def pause_by_id_op(url: str, api_key: str, sandbox_id: str) -> Op[bool]:
    """``Sandbox.pause(sandbox_id)``: True when paused, False when it was paused already."""
    if to_e2b_info((yield from plane.info_op(url, api_key, sandbox_id))).state == "paused":
        return False
    yield from plane.pause_op(url, api_key, sandbox_id)
    return True


def pause_op(core: SandboxCore) -> Op[bool]:
    """``sbx.pause()``: True when paused, False when it was already."""
    if to_e2b_info((yield from core.info_op())).state == "paused":
        return False
    yield from core.pause_op()
    return True


def _refuse(feature: str, why: str) -> Callable[..., NoReturn]:
    def refused(*args: object, **kwargs: object) -> NoReturn:
        raise NotSupportedException(feature, why)

    refused.__doc__ = f"Not supported by the E2B shim: {why} (raises NotSupportedException)."
    return refused


class Unsupported:
    """E2B's sandbox methods this control plane cannot honour: each raises
    ``NotSupportedException`` naming itself, on the class and on a handle, before any call."""

    download_url = staticmethod(_refuse("download_url", "signed file URLs are E2B's hosted service"))
    upload_url = staticmethod(_refuse("upload_url", "signed file URLs are E2B's hosted service"))
    get_mcp_url = staticmethod(_refuse("get_mcp_url", "the MCP gateway is E2B's"))
    get_mcp_token = staticmethod(_refuse("get_mcp_token", "the MCP gateway is E2B's"))

    @property
    def git(self) -> NoReturn:
        """Not supported: run git through ``commands.run``."""
        raise NotSupportedException("git", "run git through commands.run")


class _Ports(Protocol):
    def url(self, port: int) -> str: ...


class _Native(Protocol):
    @property
    def sandbox_id(self) -> str: ...

    @property
    def ports(self) -> _Ports: ...


def host_of(url: str) -> str:
    """E2B's host of a preview URL: the URL without its scheme, its query (the token) and the slash
    after the port (``netloc`` and path; ``:80`` left out, as a URL parser leaves out http's port)."""
    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.removesuffix(":80")
    return netloc + parts.path.removesuffix("/")


N = TypeVar("N", bound=_Native)
F = TypeVar("F")
C = TypeVar("C")
P = TypeVar("P")


class ShimHandle(Unsupported, Generic[N, F, C, P]):
    """What the sync and the async shim handle hold: the native handle (``N``), and E2B's ``files``
    (``F``), ``commands`` (``C``) and ``pty`` (``P``) over it."""

    #: E2B's default template (created as ``sdk-base``) and sandbox lifetime, seconds.
    default_template = E2B_DEFAULT_TEMPLATE
    default_sandbox_timeout = DEFAULT_SANDBOX_TIMEOUT

    def __init__(self, native: N, files: F, commands: C, pty: P) -> None:
        self._native = native
        self._files = files
        self._commands = commands
        self._pty = pty
        #: The sandbox-wide ``envs`` it was created with, when this handle created it (a fork's sandboxes
        #: get them too).
        self._create_envs: dict[str, str] = {}

    @property
    def native(self) -> N:
        """The native handle of this sandbox (:class:`sdk.Sandbox`, or :class:`sdk.AsyncSandbox` for
        ``AsyncSandbox``); its ``agent.run()`` fails with ``InvalidArgumentException`` before any call:
        the sandbox has no gateways."""
        return self._native

    @property
    def sandbox_id(self) -> str:
        """The sandbox id."""
        return self._native.sandbox_id

    @property
    def sandbox_domain(self) -> None:
        """None: sandboxes here have no hosted domain (``get_host`` gives a port's host and path)."""
        return None

    def get_host(self, port: int) -> str:
        """Where ``port`` of the sandbox (its ``127.0.0.1:<port>``) is reached from outside, E2B's
        ``get_host``: the port's preview URL (``sbx.native.ports.url``) without its scheme, its token and
        the slash after the port. Without a preview domain that is ``<control plane host:port>/v1/
        sandboxes/<id>/ports/<port>``; with ``sdk serve --preview-domain <domain>`` it is E2B's shape,
        ``<port>-<id>.<domain>`` (with the control plane's port unless 80). Makes no call. What differs
        from E2B's ``3000-<id>.e2b.app``:

        - the control plane serves plain HTTP: ``f"http://{sbx.get_host(3000)}"``, not ``https://`` (as
          E2B's own tests do in its debug mode);
        - it may hold a path: append yours after a slash, ``f"http://{host}/api"`` (the bare host is
          answered with a 308 to itself with a slash, which ``requests`` follows, ``httpx`` only with
          ``follow_redirects=True``);
        - a port is private until ``sbx.native.ports.expose(port, public=True)``, where E2B's are public
          by default: a request without the port's token, ``sbx.native.ports.token(port)`` in the
          ``x-sdk-preview-token`` header, is refused (401); a browser opens ``sbx.native.ports.url(port)``,
          whose token becomes a cookie. There is no ``traffic_access_token`` (below).

        Example::

            sbx.commands.run("python3 -m http.server 3000", background=True)
            sbx.native.ports.expose(3000, public=True)  # E2B's public URL; else send the token
            httpx.get(f"http://{sbx.get_host(3000)}/")

        :raises InvalidArgumentException: a port out of 1-65535, before anything else
        """
        with translated():
            return host_of(self._native.ports.url(port))

    @property
    def traffic_access_token(self) -> NoReturn:
        """E2B's token for a sandbox whose public traffic is restricted (``network={"allow_public_traffic":
        False}``, refused here), sent in the ``e2b-traffic-access-token`` header. Not offered: preview
        tokens here are per port. A port's token is ``sbx.native.ports.token(port)``, sent in
        ``x-sdk-preview-token``.

        :raises NotSupportedException: always
        """
        raise NotSupportedException("traffic_access_token", NO_TRAFFIC_TOKEN)

    @property
    def files(self) -> F:
        """The sandbox's files (relative paths resolve against ``/home/user``)."""
        return self._files

    @property
    def commands(self) -> C:
        """Commands in the sandbox."""
        return self._commands

    @property
    def pty(self) -> P:
        """Terminals in the sandbox (E2B's ``sbx.pty``, on the native terminals)."""
        return self._pty

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sandbox_id={self.sandbox_id!r})"
