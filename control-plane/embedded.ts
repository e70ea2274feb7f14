/**
 * The embedded default: a control plane with the host driver (namespace and gVisor sandboxes), served on
 * a loopback port of this process, for examples, tests and single-machine use. Its default isolation is
 * `SDK_ISOLATION` (`namespace` when unset).
 */
import type { AddressInfo } from 'node:net';
import { ensureHostPackages } from '../sandbox-drivers/namespace/host-requirements.js';
import { NamespaceDriver } from '../sandbox-drivers/namespace/namespace-driver.js';
import type { Isolation } from '../sandbox-drivers/sandbox-driver.js';
import { isolationFromEnvironment } from '../protocol/isolation-environment.js';
import { ControlPlane } from './control-plane.js';
import { createControlPlaneServer } from './http-api.js';
import { loadOrCreateOperatorKey } from './operator-key.js';

/** A running embedded control plane. */
export interface EmbeddedControlPlane {
  /** Give it to the SDK as `controlPlaneUrl`. */
  readonly url: string;
  /** The inspector page (sign in with the operator key, `SDK_API_KEY`). */
  readonly inspectorUrl: string;
  readonly plane: ControlPlane;
  /** Stops serving; sandboxes keep running until killed (a later start adopts them). */
  close(): Promise<void>;
}

/** Options of the embedded control plane. */
export interface EmbeddedOptions {
  /** Journal and templates; `/var/lib/sdk` by default. */
  readonly stateDir?: string;
  /** Sandboxes kept launched ahead of demand per base template (0: none). */
  readonly warmPool?: number;
  /** Trust roots for gateway upstreams in every sandbox, PEM (a private CA). */
  readonly gatewayCa?: string;
  /** The isolation of sandboxes whose create names none: `SDK_ISOLATION`, else `namespace`. */
  readonly isolation?: Isolation;
  /** Where every sandbox's lifecycle events are POSTed, signed (`ControlPlaneOptions.webhooks`). */
  readonly webhooks?: readonly string[];
  /** Their signing secret; the state folder's `webhook-secret` by default. */
  readonly webhookSecret?: string;
}

/**
 * Starts the embedded control plane (root; installs missing Debian packages on a fresh machine). It
 * wires the operator key itself: `SDK_API_KEY` of this process is set to it, so `Sandbox.create` works.
 *
 * @example
 * ```ts
 * const embedded = await startEmbeddedControlPlane();
 * const sbx = await Sandbox.create({ controlPlaneUrl: embedded.url });
 * ```
 */
export async function startEmbeddedControlPlane(
  options: EmbeddedOptions = {},
): Promise<EmbeddedControlPlane> {
  const isolation = options.isolation ?? isolationFromEnvironment() ?? 'namespace';
  ensureHostPackages();
  const stateDir = options.stateDir ?? '/var/lib/sdk';
  // The SDK in this process presents the operator key from SDK_API_KEY: the embedded default takes the
  // one already there, or its state folder's and puts it there.
  const operatorKey = process.env.SDK_API_KEY || loadOrCreateOperatorKey(stateDir).key;
  process.env.SDK_API_KEY = operatorKey;
  const driver = new NamespaceDriver({ stateDir, isolations: ['namespace', 'gvisor'] });
  await driver.prepare(); // the template images, built once per host (layers cached), before any create
  // runsc too when gVisor is the default (built once per host; else at the first gVisor create).
  if (isolation === 'gvisor') await driver.prepareGvisor();
  const plane = await ControlPlane.start({
    stateDir,
    operatorKey,
    driver,
    warmPool: options.warmPool ?? 0,
    defaultIsolation: isolation,
    ...(options.gatewayCa === undefined ? {} : { gatewayCa: options.gatewayCa }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
    ...(options.webhookSecret === undefined ? {} : { webhookSecret: options.webhookSecret }),
  });
  const server = createControlPlaneServer(plane);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    inspectorUrl: `http://127.0.0.1:${String(port)}/inspector/`,
    plane,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await plane.close();
    },
  };
}
