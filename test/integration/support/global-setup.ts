/**
 * Vitest global setup of the `integration` project: the tests need root (namespaces, cgroups, nftables)
 * a few Debian packages (chromium for the inspector page's tests among them), moto and uv from PyPI,
 * and Debian's cargo downloaded as `.deb` files (the credential broker's tests lay uv and cargo into
 * sandboxes, `sandbox-tools.ts`).
 * `.ci/run` installs them; on a fresh machine run as root, the missing ones are installed here, so
 * `npm test` works from a clone.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { commandExists, ensureHostPackages } from '../../../sandbox-drivers/namespace/host-requirements.js';
import { agentRecipe, agentsSource, AGENTS_TREE } from '../../../sandbox-drivers/namespace/agent-template.js';
import { BASE_RECIPE } from '../../../sandbox-drivers/namespace/image-recipe.js';
import { ensureRootImage } from '../../../sandbox-drivers/namespace/image-root.js';
import { ensureRunsc } from '../../../sandbox-drivers/gvisor/runsc.js';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { CARGO_DEBS, CARGO_DEBS_DIR, UV_PIN } from './sandbox-tools.js';

const AGENTS_BUILD = fileURLToPath(new URL('../../../templates/sdk-agent/build/opt-agents', import.meta.url));
const AGENTS_SCRIPT = fileURLToPath(new URL('../../../templates/sdk-agent/build.mjs', import.meta.url));

/** The AWS-compatible server of the secret store tests (the same pin as `.ci/run`). */
const MOTO = 'moto[server]==5.1.18';

export default async function setup(): Promise<void> {
  ensureHostPackages();
  // The template images every sandbox of the tests stands on: built here once (layers cached on the
  // host), so no test's first launch waits for Debian's packages.
  const onStep = (step: string, cached: boolean): void => {
    if (!cached) process.stderr.write(`building template image: ${step}\n`);
  };
  await ensureRootImage(BASE_RECIPE, { onStep });
  // sdk-agent's too (the agents' runtime folder `npm test` builds before the tests).
  const agents = await agentsSource(AGENTS_BUILD, AGENTS_SCRIPT, { onStep });
  await ensureRootImage(agentRecipe(BASE_RECIPE, true), { onStep }, { [AGENTS_TREE]: agents });
  // runsc for the gVisor sandboxes (built from the Go module proxy once per host, cached as a layer).
  await ensureRunsc({ onStep });
  // chromium for the inspector page's tests, dnsmasq for the egress tests' own DNS servers.
  const missing = [
    ...(commandExists('chromium') ? [] : ['chromium']),
    ...(commandExists('dnsmasq') ? [] : ['dnsmasq-base']),
  ];
  const debs = existsSync(CARGO_DEBS_DIR) ? readdirSync(CARGO_DEBS_DIR) : [];
  const cargoMissing = !CARGO_DEBS.every((name) => debs.some((deb) => deb.startsWith(`${name}_`)));
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (missing.length > 0 || cargoMissing)
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (missing.length > 0) {
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
      stdio: 'inherit',
      env,
    });
  }
  if (cargoMissing) {
    mkdirSync(CARGO_DEBS_DIR, { recursive: true });
    execFileSync('apt-get', ['download', '-qq', ...CARGO_DEBS], {
      cwd: CARGO_DEBS_DIR,
      stdio: 'ignore',
      env,
    });
  }
  if (!commandExists('moto_server')) {
    execFileSync('python3', ['-m', 'pip', 'install', '-q', MOTO], { stdio: 'inherit' });
  }
  try {
    execFileSync('python3', ['-c', 'import uv'], { stdio: 'ignore' });
  } catch {
    execFileSync('python3', ['-m', 'pip', 'install', '-q', UV_PIN], { stdio: 'inherit' });
  }
}
