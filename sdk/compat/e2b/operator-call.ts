/**
 * What `Sandbox`'s calls by id share (`kill`, `getInfo`, `pause`, `list`, the snapshot and fork calls):
 * the control plane and operator key of the call, and the sandbox id checked before any call. Apart
 * from `sandbox.ts` so that `sandbox-snapshots.ts` uses them without importing the class.
 */
import { ControlPlaneClient } from '../../control-plane-client.js';
import { requireApiKey, resolveConnection, type ConnectionOpts } from './connection.js';
import { SandboxNotFoundError, invalidArgument } from './errors.js';

/**
 * A sandbox id, checked before any call: not a string is an `InvalidArgumentError`; a string that is
 * no id the control plane makes (12 hex characters) names no sandbox, so `SandboxNotFoundError`, E2B's
 * answer for an unknown id (`Sandbox.kill` turns it into `false`, as E2B does).
 */
export function checkSandboxId(sandboxId: unknown): string {
  if (typeof sandboxId !== 'string' || sandboxId === '') {
    throw invalidArgument('sandboxId must be a sandbox id (a non-empty string)', 'sandboxId');
  }
  if (!/^[a-f0-9]{12}$/.test(sandboxId)) {
    throw new SandboxNotFoundError(
      `Sandbox ${sandboxId} not found (ids of this control plane are 12 hex characters)`,
      { code: 'sandbox_not_found' },
    );
  }
  return sandboxId;
}

/**
 * The control plane and key of an operator call (`list`, `kill`, `getInfo` by id, …).
 *
 * @throws InvalidArgumentError, NotSupportedError for the options; AuthenticationError without a key
 */
export function operatorCall(
  call: string,
  opts: ConnectionOpts,
  extraKeys: readonly string[] = [],
): { plane: ControlPlaneClient; key: string } {
  const connection = resolveConnection(call, opts, extraKeys);
  return {
    plane: new ControlPlaneClient(connection.controlPlaneUrl, connection.requestTimeoutMs),
    key: requireApiKey(call, connection),
  };
}
