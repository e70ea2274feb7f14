/**
 * The embedded default: a control plane with the namespace driver, served on a loopback port of this
 * process, for examples, tests and single-machine use.
 */
import type { AddressInfo } from 'node:net';
import { ensureHostPackages } from '../sandbox-drivers/namespace/host-requirements.js';
import { ControlPlane } from './control-plane.js';
import { createControlPlaneServer } from './http-api.js';

/** A running embedded control plane. */
export interface EmbeddedControlPlane {
  /** Give it to the SDK as `controlPlaneUrl`. */
  readonly url: string;
  readonly plane: ControlPlane;
  /** Stops serving; sandboxes keep running until killed (a later start adopts them). */
  close(): Promise<void>;
}

/**
 * Starts the embedded control plane (root; installs missing Debian packages on a fresh machine).
 *
 * @param stateDir - journal and templates; `/var/lib/sdk` by default
 * @param warmPool - sandboxes kept launched ahead of demand per base template (0: none)
 * @example
 * ```ts
 * const embedded = await startEmbeddedControlPlane();
 * const sbx = await Sandbox.create({ controlPlaneUrl: embedded.url });
 * ```
 */
export async function startEmbeddedControlPlane(
  stateDir = '/var/lib/sdk',
  warmPool = 0,
): Promise<EmbeddedControlPlane> {
  ensureHostPackages();
  const plane = await ControlPlane.start({ stateDir, warmPool });
  const server = createControlPlaneServer(plane);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    plane,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        plane.close();
      }),
  };
}
