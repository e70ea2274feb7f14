/**
 * E2B's `Sandbox.create` options as the native SDK's: the template mapped (`base` → `sdk-base`), or a
 * snapshot id where the template goes (E2B's `Sandbox.create(snapshotId)`), E2B's 5-minute default
 * lifetime, `envs` for every command (sent to sandboxd), `gateways` refused, and every option we cannot
 * honour refused by name. Checked before any call.
 */
import { LIMITS } from '../../../rules/limits.js';
import { ENV_NAME, ENV_NAME_RULE } from '../../../rules/names.js';
import { sandboxMetadataSchema, type SandboxMetadata } from '../../../rules/sandbox-metadata.js';
import type { SandboxOptions } from '../../sandbox-options.js';
import {
  DEFAULT_SANDBOX_TIMEOUT_MS,
  givenKeys,
  nativeTemplate,
  requireApiKey,
  resolveConnection,
  type ConnectionOpts,
  type ResolvedConnection,
} from './connection.js';
import type { EgressPolicyInput } from '../../sandbox-egress.js';
import { NotSupportedError, e2bParse, invalidArgument } from './errors.js';
import { createEgress, type SandboxNetworkOpts } from './network.js';
import { isSnapshotId } from './snapshots.js';

/** Options of `Sandbox.create` (E2B's `SandboxOpts`), as far as the shim reads them. */
export interface SandboxOpts extends ConnectionOpts {
  /**
   * A template built with `sdk template build`, or E2B's `base` (our `sdk-base`, the default); or a
   * snapshot id (`createSnapshot().snapshotId`, `snap_…`), as E2B takes one where the template goes.
   */
  template?: string;
  /**
   * E2B's custom metadata: the native `metadata` (`Sandbox.create({ metadata })`), shown by `getInfo` and
   * `Sandbox.list` and matched by `Sandbox.list({ query: { metadata } })`. At most 64 entries, keys 1 to 128
   * characters, values at most 1024, no control characters (else `InvalidArgumentError` before any
   * call). Readable by whoever may read the sandbox's facts: never a secret.
   */
  metadata?: Record<string, string>;
  /**
   * Environment variables of every command of the sandbox, kept by sandboxd (`PUT /v1/secrets`), so a
   * handle connected elsewhere has them too; a command's own `envs` win. At most 61 (sandboxd holds 64;
   * E2B's `E2B_SANDBOX`, `E2B_SANDBOX_ID`, `E2B_TEMPLATE_ID` take three, as in the Python shim).
   */
  envs?: Record<string, string>;
  /** The sandbox's lifetime, ms; default 300 000 (E2B's). */
  timeoutMs?: number;
  /** Accepted; every sandbox here needs its access token either way (the shim holds it). */
  secure?: boolean;
  /** `false` closes the sandbox's egress (our `sdk-base-caps` for E2B's `base`). */
  allowInternetAccess?: boolean;
  /**
   * E2B's egress rules, as the egress policy (`network.ts`): `denyOut: [ALL_TRAFFIC]` with `allowOut` is an
   * allowlist, another `denyOut` is denied less what `allowOut` covers. Refused: the inbound options
   * (`allowPublicTraffic` other than `true`, `maskRequestHost`, `httpsPorts`), `rules`, `egressProxy`,
   * and an `allowOut` with `allowInternetAccess: false` (closed egress here).
   */
  network?: SandboxNetworkOpts;
}

/**
 * What `Sandbox.create` sends: the native options (`snapshot` set when it starts from one), the key
 * and the sandbox's `envs`.
 */
export interface ResolvedCreate {
  readonly native: SandboxOptions;
  /** `E2B_TEMPLATE_ID` of its commands: the template's name, or the snapshot id it starts from. */
  readonly templateId: string;
  readonly apiKey: string;
  readonly envs: Readonly<Record<string, string>>;
}

/**
 * E2B's default variables every command has (`E2B_SANDBOX`, `E2B_SANDBOX_ID`, `E2B_TEMPLATE_ID`): create's
 * `envs` leave them room in sandboxd's 64, so both shims take the same number.
 */
const E2B_DEFAULT_ENV_COUNT = 3;
/** `envs` of `Sandbox.create`: at most 61. */
const MAX_SANDBOX_ENVS = LIMITS.secretEnvsPerSandbox - E2B_DEFAULT_ENV_COUNT;

const SANDBOX_KEYS = [
  'template',
  'metadata',
  'envs',
  'timeoutMs',
  'secure',
  'allowInternetAccess',
  'network',
];

/** E2B options this control plane has no equivalent of, with why. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  mcp: "E2B's MCP gateway is not offered; the native SDK's agent takes McpLocal and McpRemote servers",
  iam: "E2B's IAM tokens are E2B's cloud",
  volumeMounts: "E2B's volumes are E2B's cloud",
  lifecycle: "E2B's lifecycle options are not offered; the native SDK's idlePolicy is",
};

/**
 * Resolves `Sandbox.create(template?, opts?)`.
 *
 * @throws InvalidArgumentError for `gateways`, an unknown option or a malformed value
 * @throws NotSupportedError for an option we cannot honour (its name in `feature`)
 * @throws AuthenticationError without a key
 */
export function resolveCreate(
  templateOrOpts: string | SandboxOpts | undefined,
  opts: SandboxOpts | undefined,
): ResolvedCreate {
  const options: SandboxOpts = (typeof templateOrOpts === 'string' ? opts : templateOrOpts) ?? {};
  const template = typeof templateOrOpts === 'string' ? templateOrOpts : options.template;
  if ('gateways' in options) {
    throw invalidArgument(
      "Sandbox.create: the E2B shim does not accept gateways; create the sandbox with the native SDK (import { Sandbox } from 'sdk') for gateways and the agent",
      'gateways',
    );
  }
  for (const key of givenKeys(options)) {
    const why = UNSUPPORTED[key];
    if (why !== undefined) throw new NotSupportedError(key, why);
  }
  const connection = resolveConnection('Sandbox.create', options, SANDBOX_KEYS);
  const metadata =
    options.metadata === undefined
      ? undefined
      : e2bParse(sandboxMetadataSchema, options.metadata, 'Sandbox.create', ['metadata']);
  if (options.secure !== undefined && typeof options.secure !== 'boolean') {
    throw invalidArgument('Sandbox.create: secure must be a boolean', 'secure');
  }
  const envs = options.envs ?? {};
  if (typeof envs !== 'object' || (envs as unknown) === null)
    throw invalidArgument('Sandbox.create: envs must be an object', 'envs');
  for (const [name, value] of Object.entries(envs)) {
    if (!ENV_NAME.test(name)) throw invalidArgument(`Sandbox.create: envs: ${ENV_NAME_RULE}`, `envs.${name}`);
    if (typeof value !== 'string' || value.includes('\0'))
      throw invalidArgument('Sandbox.create: envs: each value must be a string without NUL', `envs.${name}`);
  }
  if (Object.keys(envs).length > MAX_SANDBOX_ENVS) {
    throw invalidArgument(`Sandbox.create: envs: at most ${String(MAX_SANDBOX_ENVS)} entries`, 'envs');
  }
  if (template !== undefined && typeof template !== 'string') {
    throw invalidArgument('Sandbox.create: template must be a template name', 'template');
  }
  const egress =
    options.network === undefined || (options.network as unknown) === null
      ? undefined
      : createEgress('Sandbox.create', options.network, options.allowInternetAccess);
  const apiKey = requireApiKey('Sandbox.create', connection);
  if (isSnapshotId(template)) {
    // Egress as E2B sends it at create (open unless closed), as the Python shim.
    return snapshotCreate(template, connection, apiKey, options.timeoutMs, {
      envs: { ...envs },
      allowInternetAccess: options.allowInternetAccess ?? true,
      templateId: template,
      egress,
      metadata,
    });
  }
  const native = nativeTemplate(template, options.allowInternetAccess === false);
  return {
    apiKey,
    envs: { ...envs },
    templateId: native,
    native: {
      template: native,
      timeoutMs: options.timeoutMs ?? DEFAULT_SANDBOX_TIMEOUT_MS,
      controlPlaneUrl: connection.controlPlaneUrl,
      ...(options.allowInternetAccess === undefined
        ? {}
        : { allowInternetAccess: options.allowInternetAccess }),
      ...(egress === undefined ? {} : { egress }),
      ...(metadata === undefined ? {} : { metadata }),
      ...(connection.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: connection.requestTimeoutMs }),
    },
  };
}

/**
 * The create of a sandbox from a snapshot (`Sandbox.create(snapshotId)`, each copy of `fork`): the
 * snapshot's template, isolation and limits, its egress unless `allowInternetAccess` or `network` is given, E2B's
 * lifetime; `templateId` (`E2B_TEMPLATE_ID`) the snapshot id unless given.
 */
export function snapshotCreate(
  snapshot: string,
  connection: ResolvedConnection,
  apiKey: string,
  timeoutMs: number | undefined,
  extra: {
    envs?: Readonly<Record<string, string>>;
    allowInternetAccess?: boolean | undefined;
    templateId?: string;
    /** The policy of E2B's `network` (else the snapshot's, or `allowInternetAccess`'s). */
    egress?: EgressPolicyInput | undefined;
    /** The new sandbox's metadata (`Sandbox.create(snapshotId, { metadata })`). */
    metadata?: SandboxMetadata | undefined;
  } = {},
): ResolvedCreate {
  return {
    apiKey,
    envs: extra.envs ?? {},
    templateId: extra.templateId ?? snapshot,
    native: {
      snapshot,
      timeoutMs: timeoutMs ?? DEFAULT_SANDBOX_TIMEOUT_MS,
      controlPlaneUrl: connection.controlPlaneUrl,
      ...(extra.allowInternetAccess === undefined ? {} : { allowInternetAccess: extra.allowInternetAccess }),
      ...(extra.egress === undefined ? {} : { egress: extra.egress }),
      ...(extra.metadata === undefined ? {} : { metadata: extra.metadata }),
      ...(connection.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: connection.requestTimeoutMs }),
    },
  };
}
