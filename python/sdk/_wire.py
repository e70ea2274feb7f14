"""Wire models of the control plane (``protocol/control-plane-api.ts``, ``protocol/template-api.ts``) and
of sandboxd's process events (``protocol/process-events.ts``): pydantic v2, camelCase on the wire,
snake_case in Python, validated strictly (unknown keys refused, as zod's strict objects do)."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from ._rules import SANDBOX_MAX_TIMEOUT_MS

#: A sandbox's state.
SandboxState = Literal["running", "suspended", "ended"]

#: The boundary between a sandbox's code and the host (``protocol/control-plane-api.ts`` ``ISOLATIONS``):
#: ``namespace`` (the host's kernel behind namespaces, cgroups and a seccomp filter) or ``gvisor``
#: (gVisor's user-space kernel in between).
Isolation = Literal["namespace", "gvisor"]

#: Every isolation, in the order the rules name them.
ISOLATIONS: tuple[Isolation, ...] = ("namespace", "gvisor")


#: An egress policy's mode (``rules/egress-policy.ts`` ``EGRESS_MODES``): ``open`` (every network but
#: what ``deny`` names), ``closed`` (none) or ``allowlist`` (only what ``allow`` names and ``deny`` does not).
EgressMode = Literal["open", "closed", "allowlist"]

#: Every egress mode, in the order the rules name them.
EGRESS_MODES: tuple[EgressMode, ...] = ("open", "closed", "allowlist")


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class EgressPolicyWire(_Wire):
    """A normalised egress policy on the wire (``egressPolicyWireSchema``): the ``egress`` of a create
    body and of every sandbox's facts, the body of ``PUT /v1/sandboxes/:id/egress`` and its answer.
    ``sdk.EgressPolicy`` checks and normalises it before it is sent."""

    mode: EgressMode
    #: Lower-case domains (``*.`` for every name under one) and canonical IPv4 CIDRs.
    allow: list[str]
    deny: list[str]

    def wire(self) -> dict[str, object]:
        """The JSON body."""
        return self.model_dump(by_alias=True)


class SandboxInfo(_Wire):
    """A sandbox's public facts (no token), as the control plane reports them."""

    sandbox_id: str
    template: str
    #: Its isolation: ``namespace`` or ``gvisor``.
    isolation: Isolation
    state: SandboxState
    allow_internet_access: bool
    #: Where its code may connect (issue 27), normalised.
    egress: EgressPolicyWire
    #: Why it ended: ``killed``, ``timeout``, or ``failed`` (its daemon died); ``None`` while it lives.
    end_reason: Literal["killed", "timeout", "failed"] | None
    #: Why it is suspended: ``paused`` or ``idle``; ``None`` otherwise.
    suspend_reason: Literal["paused", "idle"] | None
    #: When it ends at the latest, milliseconds since the epoch (running plus suspended time).
    deadline_at: float
    #: When it was created, milliseconds since the epoch: its lifetime (running plus suspended, at most
    #: 8 h) counts from here (0 for a sandbox that ended before the control plane kept it).
    started_at: float
    #: Its metadata (``Sandbox.create(metadata=...)``), empty when none was given.
    metadata: dict[str, str]
    #: Sequence number of its latest state event.
    seq: int = Field(ge=0)


class SandboxMetric(_Wire):
    """One sample of a sandbox's use (``sandboxMetricSchema``), taken by the control plane every few seconds
    while the sandbox runs (none while suspended): ``sbx.get_metrics()``. Numbers as the wire has them
    (JSON numbers: floats here, as ``SandboxInfo``'s times)."""

    #: When it was taken, milliseconds since the epoch (as ``SandboxInfo.started_at``).
    timestamp: float
    #: The sandbox's CPU limit, in CPUs (a fraction with ``cpus=0.5``).
    cpu_count: float
    #: Its CPU time since the sample before, in percent of ``cpu_count`` CPUs over that time.
    cpu_used_pct: float
    #: Its memory in use (``/tmp`` is a tmpfs of its own and counts here) and its limit, bytes.
    mem_used_bytes: float
    mem_total_bytes: float
    #: Its writable file systems (its layer over the template and ``/home``): used and size, bytes.
    disk_used_bytes: float
    disk_total_bytes: float
    #: Bytes it received and sent since it started.
    net_rx_bytes: float
    net_tx_bytes: float


class SandboxMetrics(_Wire):
    """Answer of ``GET /v1/sandboxes/:id/metrics`` (``sandboxMetricsSchema``): the samples taken in the
    range asked, oldest first."""

    metrics: list[SandboxMetric]


class CreatedSandbox(SandboxInfo):
    """Answer to create (and each sandbox of a fork): the facts, the daemon address, the access token
    (shown once), the preview key and the preview URL pattern (issue 28, ``protocol/preview-wire.ts``)."""

    daemon_url: str
    access_token: str = Field(repr=False)
    #: What every port's preview token derives from (``sdk.ports.port_token``); a secret, as the token.
    preview_key: str = Field(repr=False)
    #: The sandbox's preview URL, ``{port}`` standing for the port (by path, or by host with
    #: ``sdk serve --preview-domain``).
    preview_url: str


class ConnectedSandbox(SandboxInfo):
    """Answer to connect: the facts, the daemon address, the preview URL pattern, and the preview key
    only when the control plane admitted the token (absent otherwise; never ``null``)."""

    daemon_url: str
    preview_key: str | None = Field(default=None, repr=False)
    preview_url: str

    @field_validator("preview_key", mode="before")
    @classmethod
    def _absent_not_null(cls, value: object) -> object:
        # zod's ``optional()``: the key may be left out, but a ``null`` is refused (a default is never
        # validated, so None here is an explicit null).
        if value is None:
            raise ValueError("must be a string when given")
        return value


#: What a snapshot holds: ``memory`` (a gVisor sandbox's processes, memory and files) or ``filesystem``
#: (a namespace sandbox's own files: its changes to its template, and its home).
SnapshotKind = Literal["memory", "filesystem"]


class SnapshotInfo(_Wire):
    """A snapshot as the control plane keeps it (never a secret)."""

    snapshot_id: str
    #: The sandbox it was taken of.
    sandbox_id: str
    #: When it was taken, milliseconds since the epoch.
    created_at: float
    kind: SnapshotKind
    isolation: Isolation
    template: str
    #: What it takes in the control plane's state folder.
    bytes: int = Field(ge=0)


class SnapshotList(_Wire):
    """Answer of ``GET /v1/snapshots`` and ``GET /v1/sandboxes/:id/snapshots``, oldest first."""

    snapshots: list[SnapshotInfo]


class ForkRequest(_Wire):
    """Body of ``POST /v1/sandboxes/:id/fork``: how many sandboxes to start from the snapshot."""

    count: int = Field(ge=1, le=100)

    def wire(self) -> dict[str, object]:
        """The JSON body."""
        return self.model_dump(by_alias=True)


class ForkedSandboxes(_Wire):
    """Answer to fork: the snapshot taken, and each sandbox started from it (with its access token)."""

    snapshot: SnapshotInfo
    sandboxes: list[CreatedSandbox]


class SetTimeoutRequest(_Wire):
    """Body of ``POST /v1/sandboxes/:id/timeout`` (``setTimeoutRequestSchema``): the sandbox ends
    ``timeout_ms`` from now (never past 8 h from its creation: the control plane refuses that)."""

    timeout_ms: int = Field(ge=1, le=SANDBOX_MAX_TIMEOUT_MS)

    def wire(self) -> dict[str, object]:
        """The JSON body."""
        return self.model_dump(by_alias=True)


class ExposePortRequest(_Wire):
    """Body of ``PUT /v1/sandboxes/:id/previews/:port`` (``exposePortRequestSchema``)."""

    #: Public: anyone with the URL may use it, no token asked.
    public: bool

    def wire(self) -> dict[str, object]:
        """The JSON body."""
        return self.model_dump(by_alias=True)


class PreviewPortInfo(_Wire):
    """A port's preview as the control plane answers it (``previewPortInfoSchema``): the answer of
    ``PUT /v1/sandboxes/:id/previews/:port``."""

    port: int = Field(ge=1, le=65_535)
    public: bool


class PreviewPorts(_Wire):
    """Answer of ``GET /v1/sandboxes/:id/previews`` (``previewPortsSchema``): the ports made public."""

    ports: list[PreviewPortInfo]


class IdlePolicyBody(_Wire):
    """``idlePolicy`` of a create request: suspend after this many idle seconds, resume on an SDK call."""

    max_idle_seconds: int = Field(ge=1)
    auto_resume: bool


class CreateSandboxRequest(_Wire):
    """Body of ``POST /v1/sandboxes``; ``isolation`` (the control plane's default), ``memory_mb`` and
    ``cpus`` (the template's), ``egress`` (``allow_internet_access`` alone), ``metadata`` and
    ``webhook_url`` are left out when ``None``, and so are ``template`` and ``allow_internet_access``
    (from ``snapshot``, the snapshot's sandbox's unless the caller set them)."""

    template: str | None = None
    isolation: Isolation | None = None
    #: Start from this snapshot (``snap_`` and 16 hex digits): its template, isolation and limits.
    snapshot: str | None = None
    allow_internet_access: bool | None = None
    #: The egress policy, normalised (sent only when the caller gave one; else ``allow_internet_access``
    #: decides: open or closed).
    egress: EgressPolicyWire | None = None
    timeout_ms: int = Field(ge=1)
    idle_policy: IdlePolicyBody
    memory_mb: int | None = None
    cpus: float | None = None
    #: A string map shown by ``get_info`` and ``list`` and matched by ``list`` (checked by
    #: ``sdk._sandbox_metadata``); sent only when given.
    metadata: dict[str, str] | None = None
    #: Where this sandbox's lifecycle events are POSTed, signed (issue 28; checked by
    #: ``sdk.webhooks``); sent only when given.
    webhook_url: str | None = None

    def wire(self) -> dict[str, object]:
        """The JSON body: camelCase keys, no ``null`` (an absent option takes the control plane's
        default)."""
        return self.model_dump(by_alias=True, exclude_none=True)


class _Numbered(_Wire):
    """An event with its number in the command's log (``seq``, from 1): a reader cut off re-attaches
    after the last one it read (``?after=<seq>``)."""

    seq: int | None = Field(default=None, gt=0)


class StartEvent(_Numbered):
    """A command started."""

    type: Literal["start"]
    pid: int = Field(gt=0)


class DataEvent(_Numbered):
    """Output of a command: ``data`` is the bytes (base64 on the wire)."""

    type: Literal["data"]
    stream: Literal["stdout", "stderr"]
    data: bytes = Field(repr=False)

    @field_validator("data", mode="before")
    @classmethod
    def _base64(cls, value: object) -> bytes:
        if not isinstance(value, str):
            raise ValueError("must be base64 text")
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            raise ValueError("must be base64 text") from None


class EndEvent(_Numbered):
    """A command ended: its exit status, or the signal that ended it."""

    type: Literal["end"]
    exit_code: int | None
    signal: str | None


class KeepaliveEvent(_Wire):
    """Sent on an idle stream."""

    type: Literal["keepalive"]


#: One process event.
ProcessEvent = Annotated[Union[StartEvent, DataEvent, EndEvent, KeepaliveEvent], Field(discriminator="type")]

_PROCESS_EVENT: TypeAdapter[ProcessEvent] = TypeAdapter(ProcessEvent)


def parse_process_event(payload: object) -> ProcessEvent:
    """One process event from its JSON value (raises ``pydantic.ValidationError`` for another value)."""
    return _PROCESS_EVENT.validate_python(payload, strict=True)


class PidAnswer(_Wire):
    """Answer to a background start."""

    pid: int = Field(gt=0)


class EmptyAnswer(_Wire):
    """An answer with nothing in it (``{}``)."""


class ProcessInfo(_Wire):
    """One command sandboxd knows, running or ended."""

    pid: int = Field(gt=0)
    cmd: str
    running: bool
    #: True for a terminal (``sbx.pty``, issue 28); sandboxd sends ``pty`` for terminals only, so a plain
    #: command's is False (an explicit ``null`` is refused, as zod's ``optional()`` refuses it).
    pty: bool = False


class GatewayRouteState(_Wire):
    """One route's state as sandboxd reports it (SPEC "GatewayStatus"); never a value."""

    port: int = Field(gt=0)
    url: str
    last_error_class: str | None


class GatewayState(_Wire):
    """Answer of ConfigureSandbox (``POST /v1/gateways``) and ConfigureStatus (``GET /v1/gateways``)."""

    routes: dict[str, GatewayRouteState]


class VersionAnswer(BaseModel):
    """Answer of ``GET /v1/version`` (other keys ignored, as TypeScript's non-strict object does)."""

    version: str


class SecretsState(_Wire):
    """Answer of ``PUT /v1/secrets``: the variable names now set, never a value."""

    names: list[str]


class CredentialState(_Wire):
    """Answer of ``POST /v1/credentials`` and ``GET /v1/credentials`` (``credentialStateSchema`` of
    ``protocol/credentials-wire.ts``): the credential broker's state, nothing secret."""

    #: Hosts with a rule, sorted.
    hosts: list[str]
    #: ``http://127.0.0.1:<port>``, what every command's ``HTTPS_PROXY`` says; None before any rule.
    proxy: str | None
    #: SHA-256 of the sandbox's CA certificate (``AB:CD:…``); None before any rule.
    ca_fingerprint256: str | None


# --- template builds (``protocol/template-api.ts``) --------------------------------------------------

#: Every code of the error envelope (``rules/error-codes.ts``; ``sdk.errors.ERROR_CLASS`` maps them).
ErrorCode = Literal[
    "invalid_argument", "invalid_allow_path", "secret_not_found", "unauthenticated", "forbidden_origin",
    "forbidden_host", "sandbox_not_found", "process_not_found", "not_found", "agent_config_missing",
    "method_not_allowed",
    "sandbox_ended", "sandbox_suspended", "configuration_rejected", "unimplemented", "sandbox_error",
    "agent_failed", "file_not_found", "not_a_directory", "is_a_directory", "permission_denied", "no_space",
    "port_closed", "port_forbidden",
]


class ErrorEnvelopeBody(_Wire):
    """An error envelope inside a stream line: ``sdk.errors.error_from_envelope`` makes its exception."""

    code: ErrorCode
    message: str
    context: dict[str, Union[str, float, bool]] = Field(default_factory=dict)


class AgentTemplateBody(_Wire):
    """``template`` of ``POST /v1/templates``: an agent template's options, checked by ``AgentTemplate``."""

    name: str
    base: Literal["sdk-base-caps", "sdk-base"]
    memory_mb: int | None = Field(default=None, ge=256)
    runtime_b: bool
    prefetch: bool
    kernel_warmup: Literal[False]


class BuildTemplateRequest(_Wire):
    """Body of ``POST /v1/templates``; ``timeout_ms`` left out (the control plane's 30 minutes) when None."""

    template: AgentTemplateBody
    force: bool
    timeout_ms: int | None = Field(default=None, ge=1000)

    def wire(self) -> dict[str, object]:
        """The JSON body: camelCase keys, no ``null``."""
        return self.model_dump(by_alias=True, exclude_none=True)


class BuiltTemplate(_Wire):
    """A built template, as ``AgentTemplate.build()`` returns it (TypeScript's ``BuiltTemplate``)."""

    name: str
    base: str
    sandboxd_version: str
    #: The hash of the image's inputs (recipe, runtime options).
    recipe_hash: str
    #: Memory of sandbox code by default in sandboxes of it, MiB.
    memory_mb: float
    runtime_b: bool
    prefetch: bool
    kernel_warmup: bool
    #: False when a template of these options was already built and nothing was done.
    built: bool


class TemplateStepLine(_Wire):
    """A build step began (``cached``: its layer was already built); ``index`` of ``total``, from 1."""

    type: Literal["step"]
    step: str
    cached: bool
    index: int = Field(ge=1)
    total: int = Field(ge=1)


class TemplateBuiltLine(_Wire):
    """The build's last line when it succeeded (or found the template up to date)."""

    type: Literal["built"]
    template: BuiltTemplate


class TemplateFailedLine(_Wire):
    """The build's last line when it failed at ``step``; nothing of it is left."""

    type: Literal["failed"]
    step: str
    error: ErrorEnvelopeBody


#: One line of the answer of ``POST /v1/templates``.
TemplateBuildLine = Annotated[
    Union[TemplateStepLine, TemplateBuiltLine, TemplateFailedLine], Field(discriminator="type")
]

_TEMPLATE_BUILD_LINE: TypeAdapter[TemplateBuildLine] = TypeAdapter(TemplateBuildLine)


def parse_template_build_line(payload: object) -> TemplateBuildLine | None:
    """One line of a template build, or None for a line of another kind (skipped, as TypeScript does)."""
    try:
        return _TEMPLATE_BUILD_LINE.validate_python(payload, strict=True)
    except ValidationError:
        return None
