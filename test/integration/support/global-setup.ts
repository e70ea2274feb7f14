/**
 * Vitest global setup of the `integration` project: the tests need root (namespaces, cgroups, nftables)
 * and a few Debian packages. `.ci/run` installs them; on a fresh machine run as root, the missing ones
 * are installed here, so `npm test` works from a clone.
 */
import { ensureHostPackages } from '../../../sandbox-drivers/namespace/host-requirements.js';

export default function setup(): void {
  ensureHostPackages();
}
