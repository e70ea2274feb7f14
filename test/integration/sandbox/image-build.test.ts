/**
 * Issue 14: template image layers are built once and cached by their inputs' hash, and a failed build
 * step names itself and leaves nothing behind (real npm registry; the Debian layer is built by the
 * integration tests' global setup and checked by namespace-driver.test.ts).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImageBuildError, npmLayer } from '../../../sandbox-drivers/namespace/image-layers.js';

const cache = mkdtempSync(join(tmpdir(), 'sdk-layer-cache-'));
process.env.SDK_LAYER_CACHE = cache; // this file's own cache (a process of its own)
afterAll(() => rmSync(cache, { recursive: true, force: true }));

describe('image layers', () => {
  it('are built once, then taken from the cache by the hash of their inputs', async () => {
    const placement = {
      name: 'is-number',
      version: '7.0.0',
      files: { 'index.js': '/usr/lib/is-number.js' },
      sha256: {},
    };
    const steps: string[] = [];
    const onStep = (step: string, cached: boolean): void => {
      steps.push(`${step}${cached ? ' (cached)' : ''}`);
    };
    const first = await npmLayer(placement, { onStep });
    expect(steps).toEqual(['npm is-number@7.0.0']);
    expect(readFileSync(join(first.root, 'usr', 'lib', 'is-number.js'), 'utf8')).toContain('module.exports');
    const again = await npmLayer(placement, { onStep });
    expect(again).toEqual(first);
    expect(steps).toEqual(['npm is-number@7.0.0', 'npm is-number@7.0.0 (cached)']); // nothing rebuilt
    const other = await npmLayer({ ...placement, files: { 'index.js': '/usr/lib/other.js' } }, { onStep });
    expect(other.hash).not.toBe(first.hash); // other inputs, another layer
    await npmLayer(placement, { onStep, rebuild: ['npm'] });
    expect(steps.at(-1)).toBe('npm is-number@7.0.0'); // --force: built again, not taken from the cache
    expect(readFileSync(join(first.root, 'usr', 'lib', 'is-number.js'), 'utf8')).toContain('module.exports');
  });

  it('name the step that failed and leave nothing half-built', async () => {
    const before = readdirSync(cache).sort();
    const error = await npmLayer({
      name: 'sdk-no-such-package-zz9',
      version: '0.0.1',
      files: {},
      sha256: {},
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImageBuildError);
    expect((error as ImageBuildError).step).toBe('npm sdk-no-such-package-zz9@0.0.1');
    expect((error as Error).message).toContain(
      'template build step "npm sdk-no-such-package-zz9@0.0.1" failed',
    );
    expect(readdirSync(cache).sort()).toEqual(before);
    expect(readdirSync(cache).some((name) => name.includes('.building-'))).toBe(false);
    expect(existsSync(join(cache, 'layer.json'))).toBe(false);
  });

  it('refuse a file that is not the pinned one', async () => {
    const before = readdirSync(cache).sort();
    const pinned = { 'index.js': '0'.repeat(64) };
    const error = await npmLayer({ name: 'is-number', version: '7.0.0', files: {}, sha256: pinned }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ImageBuildError);
    expect((error as Error).message).toContain('index.js is not the pinned file');
    expect(readdirSync(cache).sort()).toEqual(before);
  });
});
