/**
 * Vitest global setup of the `integration` project: the tests need root (namespaces, nftables) and a few
 * Debian packages. `.ci/run` installs them; on a fresh machine run as root, this installs what is
 * missing so `npm test` works from a clone, and otherwise says exactly what to do.
 */
import { execFileSync } from 'node:child_process';

/** Command → Debian package that provides it. */
const NEEDED: Readonly<Record<string, string>> = {
  ip: 'iproute2',
  nft: 'nftables',
  openssl: 'openssl',
  bwrap: 'bubblewrap',
};

function present(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export default function setup(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('the integration tests need root: they create network namespaces and nftables tables');
  }
  const missing = Object.entries(NEEDED)
    .filter(([command]) => !present(command))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
    stdio: 'inherit',
    env,
  });
}
