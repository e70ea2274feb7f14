/**
 * The layer cache is collected (issue 14): a layer no build used for 30 days goes, one used lately stays,
 * a crashed build's folder goes after a day, and anything that is not a layer is left alone.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  collectUnusedLayers,
  LAYER_RETENTION_MS,
  npmLayer,
} from '../../../sandbox-drivers/namespace/image-layers.js';
import { inputHash } from '../../../sandbox-drivers/namespace/image-recipe.js';

let cache: string;
const saved = process.env.SDK_LAYER_CACHE;
beforeEach(() => {
  cache = mkdtempSync(join(tmpdir(), 'sdk-layers-'));
  process.env.SDK_LAYER_CACHE = cache;
});
afterEach(() => {
  if (saved === undefined) delete process.env.SDK_LAYER_CACHE;
  else process.env.SDK_LAYER_CACHE = saved;
  rmSync(cache, { recursive: true, force: true });
});

/** A layer folder as a build leaves it, last used `ageMs` ago. */
function layer(name: string, ageMs: number, file = 'layer.json'): string {
  const dir = join(cache, name);
  mkdirSync(join(dir, 'root'), { recursive: true });
  writeFileSync(join(dir, file), '{}');
  const then = new Date(Date.now() - ageMs);
  utimesSync(join(dir, file), then, then);
  utimesSync(dir, then, then);
  return dir;
}

describe('layer cache collection', () => {
  it('removes layers unused past the retention and crashed builds past a day, nothing else', () => {
    const day = 24 * 60 * 60_000;
    const old = layer('a'.repeat(64), LAYER_RETENTION_MS.unused + day);
    const recent = layer('b'.repeat(64), LAYER_RETENTION_MS.unused - day);
    const crashed = layer(`${'c'.repeat(64)}.building-0a1b2c3d`, LAYER_RETENTION_MS.building + 60_000, 'x');
    const building = layer(`${'d'.repeat(64)}.building-4e5f6a7b`, 60_000, 'x');
    const stranger = layer('not-a-layer', LAYER_RETENTION_MS.unused * 2, 'notes.txt');
    collectUnusedLayers();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(crashed)).toBe(false);
    for (const kept of [recent, building, stranger]) expect(existsSync(kept)).toBe(true);
  });

  it('counts a build that takes a layer from the cache as a use', async () => {
    const placement = { name: 'is-number', version: '7.0.0', files: {}, sha256: {} };
    // A finished layer where the build looks for it, last used long ago.
    const dir = layer(inputHash({ kind: 'npm', inputs: placement }), LAYER_RETENTION_MS.unused + 60_000);
    const steps: boolean[] = [];
    await npmLayer(placement, { onStep: (_, cached) => steps.push(cached) });
    expect(steps).toEqual([true]); // taken from the cache: no npm ran
    collectUnusedLayers();
    expect(existsSync(dir)).toBe(true);
  });
});
