/**
 * The sandbox lifecycle apart from the handle, as E2B's `SandboxApi` is: option resolution, the
 * control-plane calls that launch or connect a sandbox (returning what a handle is built on, never a
 * handle), the calls that need no handle (`getInfo`, `getMetrics`, `list`, the feeds), inherited by
 * `Sandbox`. `sandbox.ts` builds handles on what this module returns; this module never imports it.
 * `SandboxPool` launches its hot slots here too, so `Sandbox.create({ pool })` → `pool.take()` is the only
 * way between the two.
 */
import type { PortsAccess } from './sandbox-ports.js';
import type { Observable } from 'rxjs';
import { sandboxMetrics, type SandboxMetric } from './sandbox-metrics.js';
import { z } from 'zod';
import {
  connectedSandboxSchema,
  createdSandboxSchema,
  sandboxInfoSchema,
  sandboxStateSchema,
  type InspectionFeedRecord,
  type SandboxEvent,
  type SandboxInfo,
} from '../protocol/control-plane-api.js';
import { sandboxMetadataSchema } from '../rules/sandbox-metadata.js';
import { SANDBOX_ID, SANDBOX_ID_RULE } from '../rules/names.js';
import { AuthenticationError } from '../rules/errors.js';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { ControlPlaneClient, controlPlaneUrl, operatorKey } from './control-plane-client.js';
import { homePersistenceOf, type HomePersistence } from './home-persistence.js';
import type { SandboxSecrets } from './sandbox-secrets.js';
import type { CredentialRule } from './sandbox-credentials.js';
import type { SecretGateway } from './secret-gateway.js';
import type { SandboxPool } from './sandbox-pool.js';
import { SecretCache } from './secret-store/secret-cache.js';
import {
  resolveSandboxOptions,
  type ResolvedSandboxOptions,
  type SandboxOptions,
} from './sandbox-options.js';

/** A sandbox the control plane has launched or connected: what a handle is built on. */
export interface LaunchedSandbox {
  readonly sandboxId: string;
  readonly accessToken: string;
  /** `http://host:port` of its sandboxd. */
  readonly daemonUrl: string;
  /** The control plane that owns it. */
  readonly plane: ControlPlaneClient;
  /** The sequence number of the state it was in when launched or connected: `state$` starts there. */
  readonly seq: number;
  /** Its preview URL pattern and key (`sbx.ports`). */
  readonly ports: PortsAccess;
}

/** What only the handle that created its sandbox holds: gateway definitions and its create options. */
export interface CreatingHandle {
  readonly gateways: Readonly<Record<string, SecretGateway>>;
  readonly secretCache: SecretCache;
  /** `secrets` of `Sandbox.create`, sent once when the handle opens (never by `pool.take`). */
  readonly secrets?: SandboxSecrets;
  /** `credentials` of `Sandbox.create`: the broker's rules, sent when the handle opens and on refresh. */
  readonly credentials?: readonly CredentialRule[];
  /** The options `reincarnate` creates with. */
  readonly createdWith: SandboxOptions;
  /** Where `checkpointFiles` saves the home (`persist`). */
  readonly home?: HomePersistence | undefined;
}

const connectOptions = z.strictObject({
  accessToken: z.string().min(1, 'must not be empty').optional(),
  requestTimeoutMs: z.number().int().min(1).optional(),
  controlPlaneUrl: httpUrlSchema.optional(),
});

/** Options of `Sandbox.connect`. */
export type SandboxConnectOptions = z.input<typeof connectOptions>;

const eventsOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
});

const sandboxIdSchema = z.string().regex(SANDBOX_ID, SANDBOX_ID_RULE);

/** What `Sandbox.create` opens a handle on: a pool to take from, or a sandbox launched for it. */
export type CreatePlan =
  { readonly pool: SandboxPool } | { readonly launched: LaunchedSandbox; readonly opening: HandleOpening };

/** How a creating handle opens: what only it holds, and whether a failure leaves the sandbox. */
export interface HandleOpening {
  readonly creating: CreatingHandle;
  readonly keepOnFailure: boolean;
}

/**
 * `Sandbox.create` up to the handle: checks every option before any call, hands over to the pool when
 * one is given, else launches a sandbox and restores its saved home (`persist`); a failed restore ends
 * the sandbox unless `keepOnFailure`.
 */
export async function launchForCreate(options: SandboxOptions): Promise<CreatePlan> {
  const o = resolveSandboxOptions(options);
  if (o.pool !== undefined) return { pool: o.pool };
  const home = homePersistenceOf(o);
  const launched = await launchSandbox(o);
  // The saved home is in place before any handle (or agent) can use it; a failure ends the sandbox.
  if (home !== undefined) {
    await home.restoreInto(launched).catch(async (error: unknown) => {
      if (!o.keepOnFailure) await endLaunched(launched).catch(() => undefined);
      throw error;
    });
  }
  return {
    launched,
    opening: {
      creating: {
        home,
        gateways: o.gateways,
        secretCache: o.secretCache ?? new SecretCache(),
        createdWith: options,
        secrets: o.secrets,
        credentials: o.credentials,
      },
      keepOnFailure: o.keepOnFailure,
    },
  };
}

/**
 * Launches a sandbox without gateways (`POST /v1/sandboxes` with the operator key: `SDK_API_KEY`
 * unless `apiKey` is given, as the E2B shim does with its `apiKey` option).
 */
export async function launchSandbox(
  o: ResolvedSandboxOptions,
  apiKey: string | undefined = operatorKey(),
): Promise<LaunchedSandbox> {
  const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl), o.requestTimeoutMs);
  const created = await plane.call('POST', '/v1/sandboxes', createdSandboxSchema, {
    token: apiKey,
    body: {
      // From a snapshot the template is the snapshot's, unless the caller named it.
      ...(o.snapshot === undefined || o.given.template ? { template: o.template } : {}),
      ...(o.snapshot === undefined ? {} : { snapshot: o.snapshot }),
      ...(o.isolation === undefined ? {} : { isolation: o.isolation }),
      ...(o.egress === undefined ? {} : { egress: o.egress }),
      ...(o.snapshot === undefined || o.given.allowInternetAccess
        ? { allowInternetAccess: o.allowInternetAccess }
        : {}),
      timeoutMs: o.timeoutMs,
      idlePolicy: { maxIdleSeconds: o.idlePolicy.maxIdleSeconds, autoResume: o.idlePolicy.autoResume },
      memoryMb: o.memoryMb,
      cpus: o.cpus,
      ...(o.metadata === undefined ? {} : { metadata: o.metadata }),
      ...(o.webhookUrl === undefined ? {} : { webhookUrl: o.webhookUrl }),
    },
  });
  return {
    sandboxId: created.sandboxId,
    accessToken: created.accessToken,
    daemonUrl: created.daemonUrl,
    ports: { previewUrl: created.previewUrl, previewKey: created.previewKey },
    plane,
    seq: created.seq,
  };
}

/** Ends a launched sandbox no handle was opened on (a pool slot never taken). */
export async function endLaunched(launched: LaunchedSandbox): Promise<void> {
  await launched.plane.call('DELETE', `/v1/sandboxes/${launched.sandboxId}`, sandboxInfoSchema, {
    token: launched.accessToken,
  });
}

/**
 * `Sandbox.connect` up to the handle: the control plane's answer for an existing sandbox (resumed when
 * suspended), with the caller's token.
 */
export async function connectLaunched(
  sandboxId: string,
  options: SandboxConnectOptions,
): Promise<LaunchedSandbox> {
  const id = parseOptions(sandboxIdSchema, sandboxId, 'Sandbox.connect', ['sandboxId']);
  const o = parseOptions(connectOptions, options, 'Sandbox.connect');
  const token = o.accessToken ?? process.env.SDK_ACCESS_TOKEN;
  if (token === undefined || token === '') {
    throw new AuthenticationError('Sandbox.connect needs the access token (accessToken or SDK_ACCESS_TOKEN)');
  }
  const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl), o.requestTimeoutMs);
  const connected = await plane.call('POST', `/v1/sandboxes/${id}/connect`, connectedSandboxSchema, {
    token,
  });
  return {
    sandboxId: id,
    accessToken: token,
    daemonUrl: connected.daemonUrl,
    plane,
    seq: connected.seq,
    ports: { previewUrl: connected.previewUrl, previewKey: connected.previewKey },
  };
}

/** `Sandbox.events`: every sandbox's state changes, with the operator key. */
export function sandboxEvents(options: { controlPlaneUrl?: string }): Observable<SandboxEvent> {
  const o = parseOptions(eventsOptions, options, 'Sandbox.events');
  return new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl)).events({ token: operatorKey() });
}

const infoOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
  /** The sandbox's token; by default the operator key (`SDK_API_KEY`). */
  accessToken: z.string().min(1).optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
});

/** `Sandbox.getInfo`: one sandbox's facts, with its token or the operator key, without a handle. */
export async function sandboxInfo(
  sandboxId: string,
  options: z.input<typeof infoOptions>,
): Promise<SandboxInfo> {
  const id = parseOptions(sandboxIdSchema, sandboxId, 'Sandbox.getInfo', ['sandboxId']);
  const o = parseOptions(infoOptions, options, 'Sandbox.getInfo');
  const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl), o.requestTimeoutMs);
  return plane.call('GET', `/v1/sandboxes/${id}`, sandboxInfoSchema, {
    token: o.accessToken ?? operatorKey(),
  });
}

const listOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
  /** Only sandboxes whose metadata holds every one of these entries. */
  metadata: sandboxMetadataSchema.optional(),
  /** Only sandboxes in one of these states. */
  state: z.array(sandboxStateSchema).optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
});

/**
 * `Sandbox.list`: the control plane's sandboxes (ended ones too), filtered; with the operator key
 * (`SDK_API_KEY` unless `apiKey` is given, as the E2B shim does with its `apiKey` option).
 */
export async function listSandboxes(
  options: z.input<typeof listOptions>,
  apiKey: string | undefined = operatorKey(),
): Promise<SandboxInfo[]> {
  const o = parseOptions(listOptions, options, 'Sandbox.list');
  const query = new URLSearchParams();
  for (const state of o.state ?? []) query.append('state', state);
  if (o.metadata !== undefined)
    query.set('metadata', new URLSearchParams(Object.entries(o.metadata)).toString());
  const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl), o.requestTimeoutMs);
  const search = query.size === 0 ? '' : `?${query.toString()}`;
  return plane.call('GET', `/v1/sandboxes${search}`, z.array(sandboxInfoSchema), { token: apiKey });
}

const inspectOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
  after: z.number().int('must be a whole number').min(0, 'must be a cursor (0 or more)').optional(),
});

/** `Sandbox.inspect$`: the inspection feed, with the operator key. */
export function inspectFeed(options: {
  controlPlaneUrl?: string;
  after?: number;
}): Observable<InspectionFeedRecord> {
  const o = parseOptions(inspectOptions, options, 'Sandbox.inspect$');
  return new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl)).inspections({
    token: operatorKey(),
    ...(o.after === undefined ? {} : { after: o.after }),
  });
}

/**
 * The calls on sandboxes that need no handle, as E2B's `SandboxApi`: `Sandbox` extends it, so they are
 * `Sandbox.events`, `Sandbox.getInfo`, `Sandbox.getMetrics`, `Sandbox.list` and `Sandbox.inspect$`.
 */
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a base of statics, as E2B's SandboxApi: `Sandbox` inherits them
export class SandboxApi {
  /**
   * State changes of every sandbox of a control plane, each with its sequence number: the current state
   * of every sandbox first, then every change. Needs the operator key (`SDK_API_KEY`).
   *
   * @example
   * ```ts
   * Sandbox.events().subscribe(({ sandboxId, state }) => console.log(sandboxId, state));
   * ```
   */
  static events(options: { controlPlaneUrl?: string } = {}): Observable<SandboxEvent> {
    return sandboxEvents(options);
  }

  /**
   * One sandbox's facts without a handle (also once it has ended): with `accessToken`, else the
   * operator key (`SDK_API_KEY`).
   */
  static getInfo(
    sandboxId: string,
    options: { controlPlaneUrl?: string; accessToken?: string; requestTimeoutMs?: number } = {},
  ): Promise<SandboxInfo> {
    return sandboxInfo(sandboxId, options);
  }

  /**
   * A sandbox's metrics samples without a handle (see `sbx.getMetrics`): with `accessToken`, else the
   * operator key (`SDK_API_KEY`).
   */
  static getMetrics(
    sandboxId: string,
    options: {
      controlPlaneUrl?: string;
      accessToken?: string;
      requestTimeoutMs?: number;
      start?: Date | number;
      end?: Date | number;
    } = {},
  ): Promise<SandboxMetric[]> {
    return sandboxMetrics(sandboxId, options);
  }

  /**
   * The control plane's sandboxes, ended ones included, those in one of `state` whose metadata holds
   * every entry of `metadata` when given. Needs the operator key (`SDK_API_KEY`).
   *
   * @example
   * ```ts
   * const mine = await Sandbox.list({ metadata: { owner: 'ci' }, state: ['running', 'suspended'] });
   * ```
   */
  static list(
    options: {
      controlPlaneUrl?: string;
      metadata?: Record<string, string>;
      state?: SandboxInfo['state'][];
      requestTimeoutMs?: number;
    } = {},
  ): Promise<SandboxInfo[]> {
    return listSandboxes(options);
  }
  /**
   * Every transition of every actor of a control plane (sandboxes, gateway routes, agent executions),
   * each with the actor's own sequence number and the feed's `cursor`: after `after` when given, else
   * from each actor's latest transition; a broken stream goes on after the last cursor. Needs the
   * operator key (`SDK_API_KEY`).
   *
   * @example
   * ```ts
   * Sandbox.inspect$().subscribe((r) => console.log(r.cursor, r.kind, r.actorId, r.event.type, '→', r.state));
   * ```
   */
  static inspect$(
    options: { controlPlaneUrl?: string; after?: number } = {},
  ): Observable<InspectionFeedRecord> {
    return inspectFeed(options);
  }
}
