/** The options of `Sandbox.create` (SPEC "Sandbox handle"), checked before any call. */
import { z } from 'zod';
import { isolationSchema } from '../protocol/control-plane-api.js';
import { isolationFromEnvironment } from '../protocol/isolation-environment.js';
import { LIMITS } from '../rules/limits.js';
import { ROLE_ARN, SNAPSHOT_ID, TEMPLATE_NAME } from '../rules/names.js';
import { Snapshot } from './snapshot.js';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { IdlePolicy } from './idle-policy.js';
import { S3Prefix } from './s3-prefix.js';
import { gatewayMapSchema } from './secret-gateway.js';
import { sandboxSecretsSchema } from './sandbox-secrets.js';
import { credentialRulesSchema } from './sandbox-credentials.js';
import { SecretCache } from './secret-store/secret-cache.js';
import type { SandboxPool } from './sandbox-pool.js';
import { egressPolicySchema } from '../rules/egress-policy.js';
import { sandboxMetadataSchema } from '../rules/sandbox-metadata.js';
import { webhookUrlSchema } from '../rules/webhook-url.js';

const sandboxOptions = z
  .strictObject({
    template: z
      .string()
      .regex(TEMPLATE_NAME, 'must be an image name [a-z0-9._-] or an ARN')
      .default('sdk-base'),
    allowInternetAccess: z.boolean().default(true),
    /**
     * Where sandbox code may connect (`open`, `closed` or `allowlist`, with `allow` and `deny` entries:
     * domains, `*.` wildcards, IPv4 CIDRs). When absent, `allowInternetAccess` says open or closed.
     */
    egress: egressPolicySchema.optional(),
    /**
     * The boundary between the sandbox's code and the host: `namespace` (the host's kernel behind
     * namespaces, cgroups and a seccomp filter) or `gvisor` (gVisor's kernel in between). By default
     * `SDK_ISOLATION`, else the control plane's.
     */
    isolation: isolationSchema.optional(),
    /**
     * Start from this snapshot (`sbx.snapshot()`, or its id): its template, isolation and limits, and
     * with a memory snapshot its running processes. Gateways are given anew here (a snapshot holds none).
     */
    snapshot: z
      .union([
        z.string().regex(SNAPSHOT_ID, 'must be a snapshot id (snap_ and 16 hex digits) or a Snapshot'),
        z.instanceof(Snapshot, { message: 'must be a snapshot id or a Snapshot' }),
      ])
      .transform((value) => (typeof value === 'string' ? value : value.id))
      .optional(),
    gateways: gatewayMapSchema.default({}),
    /**
     * Environment variable name to secret name (or `SecretRef`), at most 64: each secret's value, read
     * with `secretCache` at create, is in the environment of every command the sandbox runs. Not a
     * gateway: anything in the sandbox can read these values (gateways keep a key unreadable). The
     * agent's runtimes do not get them, and a command's own `envs` win on a shared name.
     */
    secrets: sandboxSecretsSchema.default({}),
    /**
     * The credential broker's rules (`{ host, headers }`, at most 32): each header's secret (or
     * `SecretRef`), read with `secretCache` at create, is added to every HTTPS request sandbox code
     * sends that host through the sandbox's proxy (`HTTPS_PROXY`, set for every command). Sandbox code
     * uses the credential and cannot read it.
     */
    credentials: credentialRulesSchema.default([]),
    timeoutMs: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(LIMITS.sandboxMaxTimeoutMs, 'must be at most 8 h (running plus suspended)')
      .default(LIMITS.sandboxTimeoutMs),
    persist: z.instanceof(S3Prefix, { message: 'must be an S3Prefix' }).optional(),
    executionRoleArn: z.string().regex(ROLE_ARN, 'must be a role ARN').optional(),
    keepOnFailure: z.boolean().default(false),
    idlePolicy: z
      .instanceof(IdlePolicy, { message: 'must be an IdlePolicy' })
      .default(() => new IdlePolicy()),
    /** Control plane address; `SDK_CONTROL_PLANE_URL` or http://127.0.0.1:4780 by default. */
    controlPlaneUrl: httpUrlSchema.optional(),
    /** Where gateway secrets and `secrets` are read; a cache of the local default store when absent. */
    secretCache: z.instanceof(SecretCache, { message: 'must be a SecretCache' }).optional(),
    /** Take the sandbox from this pool (a hot slot); gateways are opened with `pool.take`, not here. */
    pool: z
      .custom<SandboxPool>(
        (v) => typeof v === 'object' && v !== null && typeof (v as { take?: unknown }).take === 'function',
        { message: 'must be a SandboxPool' },
      )
      .optional(),
    /** Deadline of one call to the control plane or the daemon. */
    requestTimeoutMs: z.number().int().min(1).optional(),
    /**
     * Memory of sandbox code, MiB (its tmpfs files included); sandboxd has a reserve of its own. By
     * default the template's: 512, 1024 for agent templates (or what `AgentTemplate({ memoryMb })` set).
     */
    memoryMb: z
      .number()
      .int('must be a whole number')
      .min(32, 'must be at least 32')
      .max(16_384, 'must be at most 16384')
      .optional(),
    /**
     * CPU time of the whole sandbox, in CPUs (0.5 is half of one CPU). By default the template's: 1, and
     * 2 for agent templates.
     */
    cpus: z.number().min(0.05, 'must be at least 0.05').max(64, 'must be at most 64').optional(),
    /**
     * A string map (at most 64 entries) shown by `getInfo`, `Sandbox.list` and the inspector, and matched
     * by `Sandbox.list({ metadata })`. Readable by whoever may read the sandbox's facts: never a secret.
     */
    metadata: sandboxMetadataSchema.optional(),
    /**
     * Where this sandbox's lifecycle events (created, paused, resumed, ended, failed) are POSTed, signed
     * with the control plane's webhook secret, besides the control plane's own destinations: an http or
     * https URL. Never shown by `getInfo` or `list`.
     */
    webhookUrl: webhookUrlSchema.optional(),
  })
  .superRefine((o, ctx) => {
    if (o.egress !== undefined && !o.allowInternetAccess && o.egress.mode !== 'closed') {
      ctx.addIssue({
        code: 'custom',
        path: ['egress'],
        message: "allowInternetAccess false is mode 'closed'",
      });
    }
    if (o.pool !== undefined && o.egress !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['egress'], message: 'is not accepted with pool' });
    }
    if (o.pool !== undefined && Object.keys(o.gateways).length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['gateways'],
        message: 'is not accepted with pool; use pool.take({ gateways })',
      });
    }
    // SPEC names only gateways for `pool.take`, so a pooled sandbox has no `secrets` at all.
    if (o.pool !== undefined && Object.keys(o.secrets).length > 0) {
      ctx.addIssue({ code: 'custom', path: ['secrets'], message: 'is not accepted with pool' });
    }
    if (o.pool !== undefined && o.credentials.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['credentials'], message: 'is not accepted with pool' });
    }
    if (o.persist !== undefined && o.executionRoleArn === undefined) {
      ctx.addIssue({ code: 'custom', path: ['executionRoleArn'], message: 'is required with persist' });
    }
    if (o.pool !== undefined && o.snapshot !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['snapshot'], message: 'is not accepted with pool' });
    }
    // A pool's slots were launched without a home; `pool.take` restores none.
    if (o.pool !== undefined && o.persist !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['persist'], message: 'is not accepted with pool' });
    }
  });
// No memory or CPU default here: the control plane applies the template's own (an agent template's).

/** Options of `Sandbox.create`. */
export type SandboxOptions = z.input<typeof sandboxOptions>;

/**
 * `SandboxOptions` with every default applied; `given` names the template and egress options the
 * caller set (a sandbox started from a snapshot has the snapshot's unless they are set).
 */
export type ResolvedSandboxOptions = z.output<typeof sandboxOptions> & {
  readonly given: { readonly template: boolean; readonly allowInternetAccess: boolean };
};

/**
 * Applies defaults and checks every rule of the sandbox options.
 *
 * @throws InvalidArgumentError naming the field and the rule
 */
export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  const resolved = {
    ...parseOptions(sandboxOptions, options, 'Sandbox.create'),
    given: {
      template: options.template !== undefined,
      allowInternetAccess: options.allowInternetAccess !== undefined,
    },
  };
  // A snapshot fixes the isolation: SDK_ISOLATION is for sandboxes that start from their template.
  const isolation =
    resolved.isolation ?? (resolved.snapshot === undefined ? isolationFromEnvironment() : undefined);
  return isolation === undefined ? resolved : { ...resolved, isolation };
}
