/**
 * The Debian packages a benchmark needs beyond the namespace driver's, installed the way the integration
 * tests' global setup installs theirs: as root with apt-get when missing. What cannot be installed is
 * returned, so the benchmark stops with one line naming it instead of failing to exec a command later.
 */
import { execFileSync } from 'node:child_process';
import { commandExists, ensureHostPackages } from '../../sandbox-drivers/namespace/host-requirements.js';

/** Command → Debian package that provides it. */
export type PackagesByCommand = Readonly<Record<string, string>>;

function missingPackages(packages: PackagesByCommand): string[] {
  return [
    ...new Set(
      Object.entries(packages)
        .filter(([command]) => !commandExists(command))
        .map(([, pkg]) => pkg),
    ),
  ];
}

/**
 * Installs the namespace driver's packages and whatever of `packages` is missing; returns a one-line
 * problem (not root, or packages still missing after apt-get) or undefined when all is there.
 */
export function ensureBenchPackages(packages: PackagesByCommand): string | undefined {
  try {
    ensureHostPackages(); // ip, nft, openssl: the test network and the test CA
  } catch (error) {
    return error instanceof Error ? error.message : 'the namespace driver packages could not be installed';
  }
  const wanted = missingPackages(packages);
  if (wanted.length === 0) return undefined;
  if (commandExists('apt-get')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
      execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...wanted], {
        stdio: 'inherit',
        env,
      });
    } catch {
      // reported below, by what is still missing
    }
  }
  const missing = missingPackages(packages);
  if (missing.length === 0) return undefined;
  return `missing Debian package${missing.length === 1 ? '' : 's'} ${missing.join(', ')}: install with apt-get install ${missing.join(' ')}`;
}
