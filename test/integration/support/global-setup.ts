/**
 * Vitest global setup of the `integration` project: the tests need root (namespaces, cgroups, nftables)
 * a few Debian packages (chromium for the inspector page's tests among them), and moto from PyPI.
 * `.ci/run` installs them; on a fresh machine run as root, the missing ones are installed here, so
 * `npm test` works from a clone.
 */
import { execFileSync } from 'node:child_process';
import { commandExists, ensureHostPackages } from '../../../sandbox-drivers/namespace/host-requirements.js';
import { BASE_RECIPE } from '../../../sandbox-drivers/namespace/image-recipe.js';
import { ensureRootImage } from '../../../sandbox-drivers/namespace/image-root.js';

/** The AWS-compatible server of the secret store tests (the same pin as `.ci/run`). */
const MOTO = 'moto[server]==5.1.18';

export default async function setup(): Promise<void> {
  ensureHostPackages();
  // The template images every sandbox of the tests stands on: built here once (layers cached on the
  // host), so no test's first launch waits for Debian's packages.
  await ensureRootImage(BASE_RECIPE, (step) => process.stderr.write(`building template image: ${step}\n`));
  if (!commandExists('chromium')) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], {
      stdio: 'inherit',
      env,
    });
  }
  if (!commandExists('moto_server')) {
    execFileSync('python3', ['-m', 'pip', 'install', '-q', MOTO], { stdio: 'inherit' });
  }
}
