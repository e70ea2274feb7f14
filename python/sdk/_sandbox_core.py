"""What the sync and the async sandbox handle share: the handle's state (id, token, where its control
plane and daemon are, why it ended) and every operation on it, written once as generators of calls
(``sdk._http.Op``) that :func:`~sdk._http.drive` or :func:`~sdk._http.adrive` run. A handle's core is
built on a :class:`~sdk._sandbox_lifecycle.Launched` record, which the lifecycle layer
(``sdk._sandbox_lifecycle``) returns.

Mirrors ``sdk/sandbox.ts``: an ended sandbox refuses every call that acts on it before any traffic; an
answer or a refusal that says it ended is remembered. Daemon calls go straight to the daemon URL (the
control plane's proxy to sandboxd, which resumes a suspended sandbox with auto-resume on the way and
refuses an ended one with ``sandbox_ended``); the handle hears each of them through its daemon peer's
hooks (:class:`KnownEnd`), so no call precedes a daemon call.
"""

from __future__ import annotations

from typing import Any, TypeVar

from . import _control_plane as plane_calls
from . import _daemon as daemon_calls
from ._http import Call, Op
from ._sandbox_lifecycle import Launched
from ._lifecycle_options import MetricsRange
from ._wire import (
    CredentialState,
    EgressPolicyWire,
    EmptyAnswer,
    ForkedSandboxes,
    GatewayState,
    PidAnswer,
    PreviewPortInfo,
    PreviewPorts,
    ProcessEvent,
    ProcessInfo,
    SandboxInfo,
    SandboxMetric,
    SandboxMetrics,
    SecretsState,
    SnapshotInfo,
    VersionAnswer,
)
from ._check import Checker, check_int, whole
from .egress_policy import EgressPolicy
from .errors import InvalidArgumentException, SandboxException, SdkException

T = TypeVar("T")


def fork_count(count: object) -> int:
    """``sbx.fork(count=...)``: 1 to 100 sandboxes, checked before any call (``forkRequestSchema``)."""
    check = Checker("sbx.fork")
    check_int(check, ("count",), count, 1, 100)
    check.done()
    return whole(count)


class KnownEnd:
    """What a handle knows of its sandbox's end, and the hooks of its daemon peer
    (``sdk._http.PeerHooks``, as TypeScript's ``beforeCall`` and ``onRefusal``): once the sandbox is known
    to have ended, every call is refused before any traffic; a ``sandbox_ended`` refusal is remembered.
    Apart from the core, so that the peer refers to no handle (a handle's attributes hold no cycle)."""

    def __init__(self, sandbox_id: str) -> None:
        self._sandbox_id = sandbox_id
        #: Why the sandbox ended, once the handle has learnt it.
        self.reason: str | None = None

    def __repr__(self) -> str:
        return f"KnownEnd(reason={self.reason!r})"

    def learn(self, reason: str) -> None:
        """The sandbox ended for ``reason`` (the first reason learnt is kept)."""
        if self.reason is None:
            self.reason = reason

    def before_call(self) -> None:
        """Runs before every call, making none: refuses it (``sandbox_ended``) once the sandbox ended."""
        if self.reason is not None:
            message = f"sandbox {self._sandbox_id} has ended ({self.reason})"
            raise SandboxException(message, "sandbox_ended")

    def on_refusal(self, error: SdkException) -> None:
        """Hears every refusal of a call: a ``sandbox_ended`` one is remembered, so the next call is
        refused before any traffic."""
        if isinstance(error, SandboxException) and error.code == "sandbox_ended":
            self.learn("ended")


class SandboxCore:
    """One sandbox handle's state and operations, for ``Sandbox`` and ``AsyncSandbox``."""

    def __init__(self, launched: Launched) -> None:
        self.sandbox_id = launched.sandbox_id
        self._token = launched.token
        self.request_timeout = launched.request_timeout
        self.launched = launched
        self._plane = plane_calls.control_plane(launched.plane_url)
        self._end = KnownEnd(launched.sandbox_id)
        #: sandboxd through the control plane's proxy; every call to it is heard by ``_end``.
        self._daemon = daemon_calls.daemon(launched.daemon_url, hooks=self._end)
        #: The sandbox's egress policy as last answered (create, connect, any facts, an update).
        self.egress: EgressPolicy | None = launched.egress

    @property
    def access_token(self) -> str:
        """The sandbox access token (only ever sent as a bearer header)."""
        return self._token.reveal()

    def __repr__(self) -> str:
        return f"SandboxCore(sandbox_id={self.sandbox_id!r})"

    @property
    def end_reason(self) -> str | None:
        """Why the sandbox ended, once this handle has learnt it."""
        return self._end.reason

    # --- the control plane ----------------------------------------------------------------------

    def learn(self, info: SandboxInfo) -> SandboxInfo:
        """Remembers that the sandbox ended when ``info`` says so, and its egress policy."""
        if info.state == "ended":
            self._end.learn(info.end_reason or "ended")
        self.egress = EgressPolicy._of(info.egress)
        return info

    def acting(self, call: Call[SandboxInfo]) -> Op[SandboxInfo]:
        """A call that acts on the sandbox: refused before any traffic once the sandbox ended."""
        info: SandboxInfo = yield from self.guarded(call)
        return self.learn(info)

    def guarded(self, call: Call[T]) -> Op[T]:
        """A call on the sandbox refused before any traffic once it ended; a refusal that says it ended is
        remembered."""
        self._end.before_call()
        try:
            answer: T = yield call
        except SdkException as error:
            self._end.on_refusal(error)
            raise
        return answer

    def refuse_when_ended(self) -> None:
        """Refuses (``sandbox_ended``) before any traffic once the handle knows its sandbox ended."""
        self._end.before_call()

    def on_refusal(self, error: SdkException) -> None:
        """Hears a refusal of a call that did not go through the transport (the home archive's): a
        ``sandbox_ended`` one is remembered."""
        self._end.on_refusal(error)

    def info_op(self) -> Op[SandboxInfo]:
        """The sandbox's facts now (also once it ended: from the control plane's record)."""
        info: SandboxInfo = yield plane_calls.info_call(self._plane, self.sandbox_id, self.access_token)
        return self.learn(info)

    def metrics_op(self, wanted: MetricsRange) -> Op[list[SandboxMetric]]:
        """The sandbox's metrics samples in ``wanted`` (checked by the caller), oldest first: a read of the
        control plane's history with the token, never resuming the sandbox, answered also a while after it
        ended (so not refused once the handle knows it ended)."""
        call = plane_calls.metrics_call(self._plane, self.sandbox_id, self.access_token, wanted.start, wanted.end)
        answer: SandboxMetrics = yield call
        return answer.metrics

    def pause_op(self) -> Op[SandboxInfo]:
        """Suspends the sandbox, memory kept."""
        return self.acting(plane_calls.pause_call(self._plane, self.sandbox_id, self.access_token))

    def set_timeout_op(self, timeout_ms: int) -> Op[SandboxInfo]:
        """Sets the sandbox to end ``timeout_ms`` from now (checked by the caller; the control plane
        refuses past 8 h from its creation)."""
        call = plane_calls.timeout_call(self._plane, self.sandbox_id, self.access_token, timeout_ms)
        return self.acting(call)

    def resume_op(self) -> Op[SandboxInfo]:
        """Resumes a suspended sandbox (a running one stays as it is)."""
        return self.acting(plane_calls.connect_call(self._plane, self.sandbox_id, self.access_token))

    def kill_op(self) -> Op[SandboxInfo]:
        """Ends the sandbox."""
        return self.acting(plane_calls.kill_call(self._plane, self.sandbox_id, self.access_token))

    def snapshot_op(self) -> Op[SnapshotInfo]:
        """Takes a snapshot of the sandbox (resumed first when suspended, as any call); it goes on."""
        return self.guarded(plane_calls.snapshot_call(self._plane, self.sandbox_id, self.access_token))

    def fork_op(self, count: int) -> Op[ForkedSandboxes]:
        """A snapshot, and ``count`` sandboxes started from it at once (the operator key, as create)."""
        key = plane_calls.operator_key()
        return self.guarded(plane_calls.fork_call(self._plane, self.sandbox_id, key, count))

    def egress_op(self, policy: EgressPolicy) -> Op[EgressPolicy]:
        """Replaces the sandbox's egress policy (resumed first when suspended, as any call); the policy the
        control plane answers is remembered and returned."""
        call = plane_calls.egress_call(self._plane, self.sandbox_id, self.access_token, policy._wire().wire())
        answer: EgressPolicyWire = yield from self.guarded(call)
        self.egress = EgressPolicy._of(answer)
        return self.egress

    def expose_op(self, port: int, public: bool) -> Op[PreviewPortInfo]:
        """Makes a port public or private again (``port`` and ``public`` checked by the caller)."""
        call = plane_calls.expose_port_call(self._plane, self.sandbox_id, self.access_token, port, public)
        return self.guarded(call)

    def public_ports_op(self) -> Op[PreviewPorts]:
        """The ports made public."""
        return self.guarded(plane_calls.public_ports_call(self._plane, self.sandbox_id, self.access_token))

    # --- the daemon -----------------------------------------------------------------------------

    def daemon_op(self, call: Call[T]) -> Op[T]:
        """A daemon call as an operation: nothing precedes it (a suspended sandbox with auto-resume is
        resumed by the control plane where the call reaches it); refused before any traffic once the
        handle knows its sandbox ended, and a ``sandbox_ended`` refusal is remembered (the daemon peer's
        hooks, :class:`KnownEnd`, hear every daemon call, streams too)."""
        answer: T = yield call
        return answer

    def run_stream_call(self, start: dict[str, Any]) -> Call[ProcessEvent]:
        """Starts a command and follows it in one call (the answer is its event stream)."""
        return daemon_calls.run_stream_call(self._daemon, self.access_token, start)

    def events_call(self, pid: int, after: int = 0) -> Call[ProcessEvent]:
        """A command's events from its start (sandboxd keeps the last 8 MiB of output), or after ``after``."""
        return daemon_calls.events_call(self._daemon, self.access_token, pid, after)

    def start_op(self, start: dict[str, Any]) -> Op[PidAnswer]:
        """Starts a command in the background."""
        return self.daemon_op(daemon_calls.start_call(self._daemon, self.access_token, start))

    def stdin_op(self, pid: int, data: str | bytes) -> Op[object]:
        """Writes to a command's stdin (text as UTF-8)."""
        if not isinstance(data, (str, bytes)):
            raise InvalidArgumentException("send_stdin: data: must be str or bytes", "data")
        raw = data.encode() if isinstance(data, str) else data
        return self.daemon_op(daemon_calls.stdin_call(self._daemon, self.access_token, pid, raw))

    def close_stdin_op(self, pid: int) -> Op[EmptyAnswer]:
        """Closes a command's stdin."""
        return self.daemon_op(daemon_calls.close_stdin_call(self._daemon, self.access_token, pid))

    def resize_op(self, pid: int, cols: int, rows: int) -> Op[EmptyAnswer]:
        """Resizes a terminal (``cols`` and ``rows`` checked by the caller)."""
        return self.daemon_op(daemon_calls.resize_call(self._daemon, self.access_token, pid, cols, rows))

    def signal_op(self, pid: int, tree: bool) -> Op[EmptyAnswer]:
        """SIGKILL to a command, or to its whole tree."""
        if not isinstance(tree, bool):
            raise InvalidArgumentException("kill: tree: must be a bool", "tree")
        return self.daemon_op(daemon_calls.signal_call(self._daemon, self.access_token, pid, tree))

    def list_op(self) -> Op[list[ProcessInfo]]:
        """Commands the daemon knows, running or ended."""
        return self.daemon_op(daemon_calls.list_call(self._daemon, self.access_token))

    # --- gateways, credentials, secrets (``sdk.gateways``, ``sdk.credentials``, ``sdk._sandbox_secrets``) --

    def version_op(self) -> Op[VersionAnswer]:
        """The daemon's version."""
        return self.daemon_op(daemon_calls.version_call(self._daemon, self.access_token))

    def gateway_state_op(self) -> Op[GatewayState]:
        """ConfigureStatus: every route's port, url and last failure class."""
        return self.daemon_op(daemon_calls.gateway_state_call(self._daemon, self.access_token))

    def configure_op(self, routes: dict[str, Any]) -> Op[GatewayState]:
        """ConfigureSandbox with resolved header values (held only for this call)."""
        return self.daemon_op(daemon_calls.configure_call(self._daemon, self.access_token, routes))

    def credential_state_op(self) -> Op[CredentialState]:
        """The credential broker's state: hosts, proxy, CA fingerprint."""
        return self.daemon_op(daemon_calls.credential_state_call(self._daemon, self.access_token))

    def configure_credentials_op(self, rules: list[dict[str, Any]]) -> Op[CredentialState]:
        """The credential rules with resolved header values (held only for this call)."""
        return self.daemon_op(daemon_calls.configure_credentials_call(self._daemon, self.access_token, rules))

    def put_secrets_call(self, envs: dict[str, str]) -> Call[SecretsState]:
        """``secrets=`` sent once, straight to the daemon (as TypeScript's ``deliverSecrets``)."""
        return daemon_calls.put_secrets_call(self._daemon, self.access_token, envs)
