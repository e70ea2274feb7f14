/**
 * `Sandbox.create({ secrets })` (SPEC "What the service does" 6): secrets delivered as environment
 * variables of every sandbox command. Unlike a gateway this protects nothing from sandbox code: any
 * command (and anything it starts) reads the value from its environment. The agent's runtimes do not
 * get them. Values are read with the caller's `SecretCache` just before the one call that sends them
 * (`PUT /v1/secrets` of `protocol/secrets-wire.ts`) and are held nowhere else in the SDK.
 */
import { z } from 'zod';
import { secretsStateSchema } from '../protocol/secrets-wire.js';
import { LIMITS } from '../rules/limits.js';
import { ENV_NAME, ENV_NAME_RULE } from '../rules/names.js';
import { DaemonClient, type DaemonEndpoint } from './daemon-client.js';
import { unimplementedWhenMissing } from './unimplemented.js';
import { secretSourceSchema, type SecretSource } from './secret-gateway.js';
import type { SecretCache } from './secret-store/secret-cache.js';

/** Schema of `secrets`: environment variable name to secret name (or `SecretRef`), at most 64. */
export const sandboxSecretsSchema = z
  .record(z.string().regex(ENV_NAME, `variable name ${ENV_NAME_RULE}`), secretSourceSchema)
  .refine(
    (map) => Object.keys(map).length <= LIMITS.secretEnvsPerSandbox,
    `at most ${String(LIMITS.secretEnvsPerSandbox)} entries`,
  );

/** `secrets` of `Sandbox.create`: environment variable name to the secret whose value it gets. */
export type SandboxSecrets = Readonly<Record<string, SecretSource>>;

/**
 * Reads every secret, then sends them all in one call: a missing one (`SecretNotFoundError`) fails
 * before any value has left this process. Nothing is sent when `secrets` is empty.
 *
 * @throws SecretNotFoundError when the store has no such secret
 * @throws SandboxError (class `UnimplementedError`) when the sandbox's daemon predates `secrets`
 */
export async function deliverSecrets(
  daemon: DaemonEndpoint,
  secrets: SandboxSecrets,
  cache: SecretCache,
): Promise<void> {
  const entries = Object.entries(secrets);
  if (entries.length === 0) return;
  const envs: Record<string, string> = {};
  for (const [name, source] of entries) envs[name] = await cache.get(source);
  await putSecretEnvs(daemon, envs);
}

/**
 * Sends environment variables of every sandbox command to sandboxd (`PUT /v1/secrets`, replacing what
 * was there): the step `deliverSecrets` ends with, also used by the E2B shim for `create`'s `envs`.
 *
 * @throws SandboxError (class `UnimplementedError`) when the sandbox's daemon predates `secrets`
 */
export async function putSecretEnvs(
  daemon: DaemonEndpoint,
  envs: Readonly<Record<string, string>>,
): Promise<void> {
  await new DaemonClient(daemon)
    .call('PUT', '/v1/secrets', secretsStateSchema, { envs })
    .catch((error: unknown) => {
      throw unimplementedWhenMissing(error, 'secrets');
    });
}
