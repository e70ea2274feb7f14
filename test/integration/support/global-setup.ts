/**
 * Vitest global setup of the `integration` project: the tests need root (namespaces, cgroups, nftables)
 * a few Debian packages (chromium for the inspector page's tests among them), and moto from PyPI.
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
