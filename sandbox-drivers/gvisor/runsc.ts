/**
 * runsc, gVisor's runtime, as the gVisor driver runs it: built from the Go module proxy at a pinned
 * go-branch version by a pinned toolchain, checked against the pinned binary's SHA-256, and cached as a
 * layer of the template layer cache (`../namespace/image-layers.ts`: built aside and renamed into place,
 * root's only). Debian's runsc (2022) has no systrap platform; a cgo build is dynamically linked and dies
 * in its own chroot.
 */
import { join } from 'node:path';
import { goLayer, layerRoot, type BuildContext } from '../namespace/image-layers.js';
import type { GoPlacement } from '../namespace/image-recipe.js';

/** The runsc every gVisor sandbox runs on. */
export const RUNSC: GoPlacement = {
  package: 'gvisor.dev/gvisor/runsc',
  version: 'v0.0.0-20260905035102-160fafc42237',
  toolchain: 'go1.26.8',
  sha256: '2e755ed89cc2c450b2349cda80f1d41550f33b001430134b9911894ce8b2b1fb',
};

/** Where the pinned runsc is once built (`ensureRunsc`), whether it is there or not. */
export function runscPath(): string {
  return join(layerRoot('go', RUNSC), 'bin', 'runsc');
}

/**
 * The path of the pinned runsc, built first when the cache lacks it (about 2 minutes on 2 cores, once
 * per host).
 *
 * @throws ImageBuildError naming the step when the build fails or its binary is not the pinned one
 */
export async function ensureRunsc(context: BuildContext = {}): Promise<string> {
  const layer = await goLayer(RUNSC, context);
  return join(layer.root, 'bin', 'runsc');
}
