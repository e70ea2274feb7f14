/**
 * What the namespace driver needs from the host: root, and the Debian packages that provide `nft`, `ip`,
 * util-linux's tools and `mmdebstrap` (and `openssl` for the tests' CAs); its own privileged steps are
 * `sdk-exec`'s, built with the package (`sdk-exec/README.md`). Run as root on a fresh Debian machine, the missing
 * packages are installed with apt-get; otherwise the error says exactly what is missing.
 */
import { execFileSync } from 'node:child_process';

/** Command → Debian package that provides it. */
export const HOST_PACKAGES: Readonly<Record<string, string>> = {
  nft: 'nftables',
  ip: 'iproute2',
  openssl: 'openssl',
  // User namespaces: the holder (unshare, as sandboxd's id through setpriv); views: mount, umount.
  unshare: 'util-linux',
  setpriv: 'util-linux',
  mount: 'mount',
  // Template images: Debian's packages into a root folder (`image-layers.ts`).
  mmdebstrap: 'mmdebstrap',
};

/** True when `command` is on the PATH. */
export function commandExists(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Installs whatever of `HOST_PACKAGES` is missing; throws when not root. */
export function ensureHostPackages(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('the namespace driver needs root: it creates namespaces, cgroups and nftables tables');
  }
  const missing = Object.entries(HOST_PACKAGES)
    .filter(([command]) => !commandExists(command))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
    stdio: 'inherit',
    env,
  });
}
