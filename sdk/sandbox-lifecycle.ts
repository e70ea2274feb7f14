/**
 * The sandbox lifecycle apart from the handle: option resolution, the control-plane calls that bring a
 * sandbox to a handle (create with the operator key, connect with the sandbox token), gateways opened on
 * a new handle, and the all-sandbox event feed. `Sandbox.create`, `Sandbox.connect` and `Sandbox.events`
 * delegate here; `SandboxPool` launches its hot slots and opens handles on them here, never through
 * `Sandbox.create`, so `Sandbox.create({ pool })` → `pool.take()` is the only way between the two.
 *
 * This module and `sandbox.ts` import each other (the statics call in, handles are built here through
 * `sandboxHandle`); neither uses the other at module evaluation, so either may load first.
 */
import type { PortsAccess } from './sandbox-ports.js';
import type { Observable } from 'rxjs';
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
import { sandboxHandle, type Sandbox } from './sandbox.js';
import { homePersistenceOf, type HomePersistence } from './home-persistence.js';
import { deliverSecrets, type SandboxSecrets } from './sandbox-secrets.js';
import type { CredentialRule } from './sandbox-credentials.js';
import type { SecretGateway } from './secret-gateway.js';
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

/**
 * `Sandbox.create`: checks every option before any call, hands over to the pool when one is given,
 * else launches a sandbox, restores its saved home (`persist`) and opens its gateways.
 */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  const o = resolveSandboxOptions(options);
  if (o.pool !== undefined) return o.pool.take();
  const home = homePersistenceOf(o);
  const launched = await launchSandbox(o);
  // The saved home is in place before any handle (or agent) can use it; a failure ends the sandbox.
  if (home !== undefined) {
    await home.restoreInto(launched).catch(async (error: unknown) => {
      if (!o.keepOnFailure) await endLaunched(launched).catch(() => undefined);
      throw error;
    });
  }
  return openSandbox(launched, {
    creating: {
      home,
      gateways: o.gateways,
      secretCache: o.secretCache ?? new SecretCache(),
      createdWith: options,
      secrets: o.secrets,
      credentials: o.credentials,
    },
    keepOnFailure: o.keepOnFailure,
  });
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

/**
 * A new creating handle on a launched sandbox, its gateways opened: secrets resolved now and
 * ConfigureSandbox sent, then its credential rules, then its `secrets`. When that fails the sandbox is ended unless
 * `keepOnFailure`.
 */
export async function openSandbox(
  launched: LaunchedSandbox,
  options: { readonly creating: CreatingHandle; readonly keepOnFailure: boolean },
): Promise<Sandbox> {
  const sbx = sandboxHandle(launched, options.creating);
  const { gateways, secrets = {}, credentials = [] } = options.creating;
  const none = Object.keys(gateways).length === 0 && Object.keys(secrets).length === 0;
  if (none && credentials.length === 0) return sbx;
  try {
    if (Object.keys(gateways).length > 0) await sbx.gateways.configure();
    // Before any command of the caller's runs: every one gets the proxy and the CA.
    if (credentials.length > 0) await sbx.credentials.configure();
    await deliverSecrets(
      {
        url: launched.daemonUrl,
        accessToken: launched.accessToken,
        requestTimeoutMs: launched.plane.requestTimeoutMs,
      },
      secrets,
      options.creating.secretCache,
    );
  } catch (error) {
    if (!options.keepOnFailure) await sbx.kill().catch(() => undefined);
    throw error;
  }
  return sbx;
}

/** Ends a launched sandbox no handle was opened on (a pool slot never taken). */
export async function endLaunched(launched: LaunchedSandbox): Promise<void> {
  await launched.plane.call('DELETE', `/v1/sandboxes/${launched.sandboxId}`, sandboxInfoSchema, {
    token: launched.accessToken,
  });
}

/** `Sandbox.connect`: a handle without gateway definitions on an existing sandbox, resumed when suspended. */
export async function connectSandbox(sandboxId: string, options: SandboxConnectOptions): Promise<Sandbox> {
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
  const sbx = sandboxHandle({
    sandboxId: id,
    accessToken: token,
    daemonUrl: connected.daemonUrl,
    plane,
    seq: connected.seq,
    ports: { previewUrl: connected.previewUrl, previewKey: connected.previewKey },
  });
  // SPEC Authentication 1: a refused token leaves the gateways empty; the first authenticated call raises.
  await sbx.gateways.readState().catch((error: unknown) => {
    if (!(error instanceof AuthenticationError)) throw error;
  });
  return sbx;
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
