/**
 * The public entry of `sdk`: sandboxes with a secret gateway, the agent specification types, provider
 * presets, and the SDK exceptions.
 *
 * @example
 * ```ts
 * import { Sandbox, SecretGateway, vendorBGateway } from 'sdk';
 * const llm = vendorBGateway('vendor-b-key');
 * ```
 */
export {
  type AgentEvent,
  type AgentFailed,
  type AgentResult,
  type AgentToolCall,
  type Done,
  type ExecutionInfo,
  type ExecutionList,
  type Reasoning,
  type StepFinished,
  type StepStarted,
  type Text,
  type TextDelta,
  type TokenUsage,
  type ToolCall,
} from './agent-events.js';
export { AgentLimits, type AgentLimitsOptions } from './agent-limits.js';
export { AgentTemplate, type TemplateBuildOptions, type TemplateBuildStep } from './agent-template.js';
export type { AgentTemplateOptions, AgentTemplateSpec, BuiltTemplate } from '../protocol/template-api.js';
export { AgentModel, type AgentModelOptions } from './agent-model.js';
export {
  AgentPermissions,
  DENIED_BY_DEFAULT,
  type AgentPermissionsOptions,
  type PermissionAction,
  type ToolPermission,
} from './agent-permissions.js';
export { AgentSpec, RESERVED_RAW_CONFIG_KEYS, type AgentSpecOptions } from './agent-spec.js';
export { type AttachOptions, type PrepareOptions, type RunOptions } from './agent-options.js';
export { AgentStream } from './agent-stream.js';
export { IdlePolicy, type IdlePolicyOptions } from './idle-policy.js';
export {
  McpLocal,
  McpRemote,
  type McpLocalOptions,
  type McpRemoteOptions,
  type McpServer,
} from './mcp-servers.js';
export { PoolConfig, agentPoolWarmup, type PoolConfigOptions, type PoolWarmup } from './pool-config.js';
export {
  RUNTIME_B_TOOLS,
  RuntimeB,
  checkSpecForRuntime,
  type RuntimeBOptions,
  type RuntimeChoice,
  type RuntimeName,
} from './runtimes.js';
export { S3Prefix, type S3PrefixOptions } from './s3-prefix.js';
export {
  CommandHandle,
  Commands,
  type CommandConnectOptions,
  type CommandResult,
  type CommandRunOptions,
} from './commands.js';
export {
  Files,
  type EntryInfo,
  type FileData,
  type FileListOptions,
  type FileReadOptions,
  type FileRequestOptions,
  type WriteEntry,
} from './files.js';
export type { WatchHandle, FilesystemEvent, WatchDirOptions, WatchEventCallback } from './files-watch.js';
export {
  Sandbox,
  type SandboxConnectOptions,
  type SandboxEvent,
  type SandboxInfo,
  type SandboxState,
} from './sandbox.js';
export { SandboxAgent, type AgentFeedEvent } from './sandbox-agent.js';
export { Snapshot } from './snapshot.js';
export type { MetricsRange, SandboxMetric } from './sandbox-metrics.js';
export type { Isolation, SnapshotKind } from '../protocol/control-plane-api.js';
export type { InspectionFeedRecord } from '../protocol/control-plane-api.js';
export type { DaemonEvent } from '../protocol/daemon-events.js';
export { SandboxPool, type PoolTakeOptions } from './sandbox-pool.js';
export { SandboxGateways, type GatewayStatus } from './sandbox-gateways.js';
export { SandboxEgress, type EgressPolicy, type EgressPolicyInput } from './sandbox-egress.js';
export { SandboxPorts } from './sandbox-ports.js';
export { Pty, PtyHandle, type PtyCreateOptions, type PtyResult } from './pty.js';
export { SandboxCredentials, type CredentialRule, type CredentialStatus } from './sandbox-credentials.js';
export {
  resolveSandboxOptions,
  type ResolvedSandboxOptions,
  type SandboxOptions,
} from './sandbox-options.js';
export { SECRET_CACHE_TTL_MS, SecretCache, type SecretCacheOptions } from './secret-store/secret-cache.js';
export { SecretStore, type SecretStoreOptions } from './secret-store/secret-store.js';
export {
  SecretGateway,
  type PresetBinding,
  type SecretGatewayOptions,
  type SecretSource,
} from './secret-gateway.js';
export { SecretRef, type SecretRefOptions } from './secret-ref.js';
export { SubAgent, type SubAgentOptions } from './sub-agent.js';
export {
  compatibleGateway,
  vendorAGateway,
  vendorBGateway,
  vendorCGateway,
  vendorDGateway,
  vendorEGateway,
  vendorFGateway,
  vendorGGateway,
  vendorHGateway,
  vendorIGateway,
  vendorJGateway,
  vendorKGateway,
} from './preset-gateways.js';
export { AGENT_PROVIDERS, type AgentProvider } from '../rules/agent-providers.js';
export { AGENT_FAILURE_REASONS, type AgentFailureReason } from '../rules/agent-reasons.js';
export { ERROR_HTTP_STATUS, type ErrorCode } from '../rules/error-codes.js';
export {
  AgentError,
  AuthenticationError,
  InvalidArgumentError,
  SandboxError,
  SdkError,
  SecretNotFoundError,
  type SandboxErrorCode,
} from '../rules/errors.js';
export { LIMITS } from '../rules/limits.js';
export { errorFromEnvelope, type ErrorContext, type ErrorEnvelope } from '../protocol/error-envelope.js';
export { GATEWAY_MIN_VERSION } from '../protocol/versions.js';
