/**
 * The E2B compatibility shim (`sdk/compat/e2b`): the E2B SDK's public surface for sandboxes, commands,
 * terminals and files, under its names and with its defaults, running on our control plane. A program written
 * for E2B changes only its import (and points `SDK_CONTROL_PLANE_URL` / `SDK_API_KEY` at the server).
 *
 * @example
 * ```ts
 * import { Sandbox, CommandExitError } from 'sdk/compat/e2b';
 * const sbx = await Sandbox.create();
 * console.log((await sbx.commands.run('echo hello')).stdout);
 * await sbx.kill();
 * ```
 */
export { Sandbox, type SandboxConnectOpts } from './sandbox.js';
export {
  SandboxPaginator,
  type SandboxInfo,
  type SandboxListOpts,
  type SandboxState,
} from './sandbox-info.js';
export {
  SnapshotPaginator,
  type CreateSnapshotOpts,
  type SandboxForkOpts,
  type SnapshotInfo,
  type SnapshotListOpts,
} from './snapshots.js';
export type { SandboxOpts } from './sandbox-opts.js';
export type { SandboxMetrics, SandboxMetricsOpts } from './sandbox-metrics.js';
export {
  ALL_TRAFFIC,
  type SandboxEgressProxyInfo,
  type SandboxEgressProxyOpts,
  type SandboxNetworkInfo,
  type SandboxNetworkOpts,
  type SandboxNetworkRule,
  type SandboxNetworkRuleInfo,
  type SandboxNetworkRules,
  type SandboxNetworkSelector,
  type SandboxNetworkSelectorContext,
  type SandboxNetworkTransform,
  type SandboxNetworkTransformContext,
  type SandboxNetworkTransformResolver,
  type SandboxNetworkUpdate,
} from './network.js';
export type { ConnectionOpts } from './connection.js';
export {
  Commands,
  type CommandConnectOpts,
  type CommandRequestOpts,
  type CommandStartOpts,
  type Username,
} from './commands.js';
export { CommandHandle } from './command-handle.js';
export { Pty, type PtyConnectOpts, type PtyCreateOpts, type PtyOutput, type PtySize } from './pty.js';
export type { ProcessInfo } from './command-line.js';
export { Filesystem } from './files.js';
export { FileType, type EntryInfo, type WriteInfo } from './file-entries.js';
export type { FilesystemListOpts, FilesystemRequestOpts, WatchOpts, WriteEntry } from './file-opts.js';
export { FilesystemEventType, type FilesystemEvent, type WatchHandle } from './watch-handle.js';
export {
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  NotEnoughSpaceError,
  NotFoundError,
  NotSupportedError,
  RateLimitError,
  SandboxError,
  SandboxNotFoundError,
  TemplateError,
  TimeoutError,
  type CommandResult,
} from './errors.js';
export { Secret, Template, Volume, type RefusedApi } from './refused.js';

import { Sandbox } from './sandbox.js';
/** E2B's default export is `Sandbox` too. */
export default Sandbox;
