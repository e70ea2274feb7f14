/**
 * sandboxd's `PUT /v1/secrets` (SPEC "What the service does" 6, `secrets=`): environment variables whose
 * values the SDK read from the caller's secret store, for every command `POST /v1/processes` starts. The
 * body carries the values: it is never logged, and the answer names the variables, never a value.
 */
import { z } from 'zod';
import { LIMITS } from '../rules/limits.js';
import { ENV_NAME, ENV_NAME_RULE } from '../rules/names.js';

/** Body of `PUT /v1/secrets`: the whole set, replacing any earlier one. */
export const putSecretsSchema = z.strictObject({
  envs: z
    .record(
      z.string().regex(ENV_NAME, ENV_NAME_RULE),
      // A NUL byte cannot be in an environment; refused here rather than when a command starts.
      z.string().refine((value) => !value.includes('\0'), 'must not hold a NUL byte'),
    )
    .refine(
      (envs) => Object.keys(envs).length <= LIMITS.secretEnvsPerSandbox,
      `at most ${String(LIMITS.secretEnvsPerSandbox)} entries`,
    ),
});

/** A `PUT /v1/secrets` body, as sent. */
export type PutSecrets = z.input<typeof putSecretsSchema>;

/** Answer of `PUT /v1/secrets`: the variables now set, sorted. */
export const secretsStateSchema = z.strictObject({
  names: z.array(z.string()),
});
