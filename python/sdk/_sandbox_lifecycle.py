"""The sandbox lifecycle API (``sdk/sandbox-lifecycle.ts``; E2B's ``SandboxApi``): the control-plane
operations on sandboxes that need no handle (create, connect, read one sandbox's facts or metrics, list
them, end a launched sandbox), written once as generators of calls (``sdk._http.Op``) that
:func:`~sdk._http.drive` or :func:`~sdk._http.adrive` run. They take options checked by
``sdk._sandbox_options`` and ``sdk._lifecycle_options`` and return plain data: a :class:`Launched` record (what a handle is then built
on), ``SandboxInfo``, metrics samples.

This layer knows nothing of the handles: ``sdk.sandbox`` and ``sdk.async_sandbox`` import it, never the
other way (``python/README.md``, "Layers"; ``tests/test_import_graph.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import _control_plane as plane_calls
from ._http import Op
from ._lifecycle_options import InfoOptions, ListOptions, MetricsOptions
from ._sandbox_options import ConnectOptions, CreateOptions
from ._secret_text import SecretText
from ._wire import CreatedSandbox, SandboxInfo, SandboxMetric, SandboxMetrics
from .egress_policy import EgressPolicy


@dataclass(frozen=True)
class Launched:
    """A sandbox the control plane launched or connected: what a handle is built on. Its token and its
    preview key are :class:`~sdk._secret_text.SecretText`: no repr, ``vars()`` dump or pickle of a handle
    shows them."""

    sandbox_id: str
    token: SecretText = field(repr=False)
    daemon_url: str
    plane_url: str
    request_timeout: float
    #: The sequence number of its state when launched or connected: ``sbx.events()`` starts there.
    seq: int = 0
    #: Its egress policy as the control plane answered it (None only for a handle made without an answer).
    egress: EgressPolicy | None = None
    #: Its preview URL pattern, ``{port}`` for the port (None only for a handle made without an answer).
    preview_url: str | None = None
    #: What its port tokens derive from (``sbx.ports``); None when connect did not admit the token.
    preview_key: SecretText | None = field(default=None, repr=False)

    @property
    def access_token(self) -> str:
        """The sandbox access token (only ever sent as a bearer header)."""
        return self.token.reveal()


def launched_from(created: CreatedSandbox, plane_url: str, request_timeout: float) -> Launched:
    """A sandbox the control plane created (or started from a snapshot for ``fork``), as a handle is
    built on."""
    token = SecretText(created.access_token)
    return Launched(
        created.sandbox_id, token, created.daemon_url, plane_url, request_timeout, created.seq,
        EgressPolicy._of(created.egress), created.preview_url, SecretText(created.preview_key),
    )  # fmt: skip


def create_op(options: CreateOptions) -> Op[Launched]:
    """``Sandbox.create``: ``POST /v1/sandboxes`` with the operator key (``SDK_API_KEY``)."""
    url = plane_calls.control_plane_url(options.control_plane_url)
    created = yield plane_calls.create_call(plane_calls.control_plane(url), options.body())
    return launched_from(created, url, options.request_timeout)


def connect_op(options: ConnectOptions) -> Op[Launched]:
    """``Sandbox.connect``: resumes the sandbox when suspended and learns where its daemon is. A token
    the sandbox refuses does not fail here (SPEC "Authentication" 1): the first call that acts raises."""
    url = plane_calls.control_plane_url(options.control_plane_url)
    peer = plane_calls.control_plane(url)
    connected = yield plane_calls.connect_call(peer, options.sandbox_id, options.access_token)
    key = None if connected.preview_key is None else SecretText(connected.preview_key)
    return Launched(
        options.sandbox_id, SecretText(options.access_token), connected.daemon_url, url,
        options.request_timeout, connected.seq, EgressPolicy._of(connected.egress), connected.preview_url, key,
    )


def sandbox_info_op(options: InfoOptions) -> Op[SandboxInfo]:
    """``Sandbox.get_info``: one sandbox's facts without a handle (also once it ended), with its token,
    else the operator key (``SDK_API_KEY``)."""
    peer = plane_calls.control_plane(plane_calls.control_plane_url(options.control_plane_url))
    token = options.access_token if options.access_token is not None else plane_calls.operator_key()
    info: SandboxInfo = yield plane_calls.info_call(peer, options.sandbox_id, token)
    return info


def list_sandboxes_op(options: ListOptions) -> Op[list[SandboxInfo]]:
    """``Sandbox.list``: the control plane's sandboxes (ended ones too), filtered, with the operator key."""
    peer = plane_calls.control_plane(plane_calls.control_plane_url(options.control_plane_url))
    call = plane_calls.list_call(peer, plane_calls.operator_key(), options.states, options.metadata)
    infos: list[SandboxInfo] = yield call
    return infos


def sandbox_metrics_op(options: MetricsOptions) -> Op[list[SandboxMetric]]:
    """``Sandbox.get_metrics``: one sandbox's metrics samples without a handle (also a while after it
    ended), with its token, else the operator key (``SDK_API_KEY``); oldest first."""
    peer = plane_calls.control_plane(plane_calls.control_plane_url(options.control_plane_url))
    token = options.access_token if options.access_token is not None else plane_calls.operator_key()
    call = plane_calls.metrics_call(peer, options.sandbox_id, token, options.range.start, options.range.end)
    answer: SandboxMetrics = yield call
    return answer.metrics


def end_launched_op(launched: Launched) -> Op[SandboxInfo]:
    """Ends a launched sandbox no handle was opened on (a pool's slot), with its token."""
    plane = plane_calls.control_plane(launched.plane_url)
    info: SandboxInfo = yield plane_calls.kill_call(plane, launched.sandbox_id, launched.access_token)
    return info
