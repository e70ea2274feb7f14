"""Sandboxes for AI agents, with a secret gateway: the Python SDK (sync ``Sandbox``, async ``AsyncSandbox``).

It mirrors the TypeScript SDK row for row with Python's names; see ``python/README.md``.
"""

from .errors import (
    AgentException,
    AuthenticationException,
    InvalidArgumentException,
    SandboxException,
    SdkException,
    SecretNotFoundException,
    error_from_envelope,
)
from ._command_output import CommandResult
from ._wire import Isolation, ProcessInfo, SandboxInfo, SandboxMetric, SandboxState, SnapshotKind
from .async_commands import AsyncCommandHandle, AsyncCommands
from .async_sandbox import AsyncSandbox
from .commands import CommandHandle, Commands
from ._files_core import EntryInfo, EntryType, FileData, FilesystemEvent, FilesystemEventType, WriteEntry
from ._files_watch import AsyncWatchHandle, WatchHandle
from .async_files import AsyncFiles, AsyncFileStream
from .files import Files, FileStream
from .sandbox import Sandbox
from .sandbox_pool import AsyncSandboxPool, SandboxPool
from .snapshot import AsyncSnapshot, Snapshot
from ._feeds import SandboxEvent
from .daemon_events import (
    ActorTransition,
    DaemonCall,
    DaemonEvent,
    DaemonProcess,
    EgressDecision,
    GatewayRequest,
    GatewayResponse,
    InspectionEvent,
    InspectionRecord,
    PreviewTraffic,
    RouteChange,
)
from .gateways import AsyncGateways, GatewayStatus, Gateways
from .egress import AsyncSandboxEgress, SandboxEgress
from .ports import AsyncSandboxPorts, SandboxPorts
from ._pty_core import PtyResult
from .async_pty import AsyncPty, AsyncPtyHandle
from .pty import Pty, PtyHandle
from .webhooks import (
    WEBHOOK_EVENT_TYPES,
    WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    WEBHOOK_TIMESTAMP_HEADER,
    WebhookEvent,
    verify_webhook_signature,
)
from .egress_policy import EgressPolicy
from .credentials import AsyncSandboxCredentials, CredentialStatus, SandboxCredentials
from .credential_rules import CredentialRule
from ._wire import EgressMode
from .secret_cache import SecretCache
from .secret_store import SecretStore
from .agent_limits import AgentLimits
from .agent_events import (
    AgentEvent,
    AgentFailed,
    AgentFeedEvent,
    AgentResult,
    AgentToolCall,
    Done,
    ExecutionInfo,
    ExecutionList,
    Reasoning,
    StepFinished,
    StepStarted,
    Text,
    TextDelta,
    TokenUsage,
    ToolCall,
)
from .agent_stream import AgentStream
from .async_agent_stream import AsyncAgentStream
from .sandbox_agent import AsyncSandboxAgent, SandboxAgent
from .agent_model import AgentModel
from .agent_permissions import DENIED_BY_DEFAULT, AgentPermissions
from .agent_spec import AgentSpec
from .agent_template import AgentTemplate, TemplateBuildStep
from ._wire import BuiltTemplate
from .idle_policy import IdlePolicy
from .mcp_servers import McpLocal, McpRemote
from .pool_config import PoolConfig, PoolWarmup, agent_pool_warmup
from .presets import (
    compatible_gateway,
    vendor_a_gateway,
    vendor_b_gateway,
    vendor_c_gateway,
    vendor_d_gateway,
    vendor_e_gateway,
    vendor_f_gateway,
    vendor_g_gateway,
    vendor_h_gateway,
    vendor_i_gateway,
    vendor_j_gateway,
    vendor_k_gateway,
)
from .runtimes import RUNTIME_B_TOOLS, RuntimeB, check_spec_for_runtime
from .s3_prefix import S3Prefix
from .secret_gateway import PresetBinding, SecretGateway
from .secret_ref import SecretRef
from .sub_agent import SubAgent

__all__ = [
    "ActorTransition",
    "AgentFeedEvent",
    "DaemonCall",
    "DaemonEvent",
    "DaemonProcess",
    "EgressDecision",
    "GatewayRequest",
    "GatewayResponse",
    "InspectionEvent",
    "InspectionRecord",
    "PreviewTraffic",
    "RouteChange",
    "AgentException",
    "AsyncCommandHandle",
    "AsyncCommands",
    "AsyncGateways",
    "AsyncSandbox",
    "AsyncSandboxPool",
    "AsyncSandboxEgress",
    "AsyncSandboxPorts",
    "AsyncPty",
    "AsyncPtyHandle",
    "AsyncSandboxCredentials",
    "AsyncSnapshot",
    "AsyncFiles",
    "AsyncFileStream",
    "AsyncWatchHandle",
    "EntryInfo",
    "EntryType",
    "FileData",
    "Files",
    "FileStream",
    "FilesystemEvent",
    "FilesystemEventType",
    "WatchHandle",
    "WriteEntry",
    "AuthenticationException",
    "CommandHandle",
    "CommandResult",
    "Commands",
    "CredentialRule",
    "CredentialStatus",
    "EgressMode",
    "EgressPolicy",
    "GatewayStatus",
    "Gateways",
    "InvalidArgumentException",
    "Isolation",
    "ProcessInfo",
    "Sandbox",
    "SandboxException",
    "SandboxEgress",
    "SandboxPorts",
    "Pty",
    "PtyHandle",
    "PtyResult",
    "WEBHOOK_EVENT_TYPES",
    "WEBHOOK_ID_HEADER",
    "WEBHOOK_SIGNATURE_HEADER",
    "WEBHOOK_TIMESTAMP_HEADER",
    "WebhookEvent",
    "verify_webhook_signature",
    "SandboxCredentials",
    "SandboxEvent",
    "SandboxInfo",
    "SandboxMetric",
    "SandboxPool",
    "SandboxState",
    "Snapshot",
    "SnapshotKind",
    "SdkException",
    "SecretNotFoundException",
    "error_from_envelope",
    "AgentLimits",
    "AgentEvent",
    "AgentFailed",
    "AgentResult",
    "AgentStream",
    "AgentToolCall",
    "AsyncAgentStream",
    "AsyncSandboxAgent",
    "Done",
    "ExecutionInfo",
    "ExecutionList",
    "Reasoning",
    "SandboxAgent",
    "StepFinished",
    "StepStarted",
    "Text",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "AgentModel",
    "AgentPermissions",
    "AgentSpec",
    "AgentTemplate",
    "BuiltTemplate",
    "TemplateBuildStep",
    "DENIED_BY_DEFAULT",
    "IdlePolicy",
    "McpLocal",
    "McpRemote",
    "PoolConfig",
    "PoolWarmup",
    "PresetBinding",
    "RUNTIME_B_TOOLS",
    "RuntimeB",
    "S3Prefix",
    "SecretCache",
    "SecretGateway",
    "SecretRef",
    "SecretStore",
    "SubAgent",
    "agent_pool_warmup",
    "check_spec_for_runtime",
    "compatible_gateway",
    "vendor_a_gateway",
    "vendor_b_gateway",
    "vendor_c_gateway",
    "vendor_d_gateway",
    "vendor_e_gateway",
    "vendor_f_gateway",
    "vendor_g_gateway",
    "vendor_h_gateway",
    "vendor_i_gateway",
    "vendor_j_gateway",
    "vendor_k_gateway",
]
