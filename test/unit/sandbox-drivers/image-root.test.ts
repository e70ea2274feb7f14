/**
 * Issue 14: how a template image is put together: a recipe's hash does not depend on key order, and
 * layers laid over each other keep folder modes and symlinks, let a later layer win, and are never
 * written through when the image's own files replace theirs.
 */
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASE_RECIPE, inputHash } from '../../../sandbox-drivers/namespace/image-recipe.js';
import { layOver } from '../../../sandbox-drivers/namespace/image-root.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-image-unit-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a recipe', () => {
  it('is named by its inputs, whatever their key order', () => {
    const reordered = Object.fromEntries(Object.entries(BASE_RECIPE).reverse());
    expect(inputHash(reordered)).toBe(inputHash(BASE_RECIPE));
    expect(inputHash({ ...BASE_RECIPE, debianPackages: [...BASE_RECIPE.debianPackages, 'jq'] })).not.toBe(
      inputHash(BASE_RECIPE),
    );
  });

  it('puts nothing of the host in the image: its /etc files are its own', () => {
    expect(BASE_RECIPE.files['/etc/passwd']).toContain('user:x:1000:1000');
    expect(Object.keys(BASE_RECIPE.files).every((path) => path.startsWith('/etc/'))).toBe(true);
  });
});

describe('layers laid over each other', () => {
  it('merge folders with their modes, keep symlinks, and let the later layer win', () => {
    const lower = join(dir, 'lower');
    const upper = join(dir, 'upper');
    const image = join(dir, 'image');
    mkdirSync(join(lower, 'usr', 'bin'), { recursive: true });
    mkdirSync(join(lower, 'root'));
    chmodSync(join(lower, 'root'), 0o700);
    mkdirSync(join(lower, 'tmp'));
    chmodSync(join(lower, 'tmp'), 0o1777);
    writeFileSync(join(lower, 'usr', 'bin', 'tool'), 'lower');
    writeFileSync(join(lower, 'usr', 'bin', 'kept'), 'kept');
    symlinkSync('usr/bin', join(lower, 'bin'));
    mkdirSync(join(upper, 'usr', 'bin'), { recursive: true });
    writeFileSync(join(upper, 'usr', 'bin', 'tool'), 'upper');

    layOver(lower, image);
    layOver(upper, image);

    expect(readFileSync(join(image, 'usr', 'bin', 'tool'), 'utf8')).toBe('upper');
    expect(readFileSync(join(image, 'usr', 'bin', 'kept'), 'utf8')).toBe('kept');
    expect(readlinkSync(join(image, 'bin'))).toBe('usr/bin');
    expect(lstatSync(join(image, 'root')).mode & 0o7777).toBe(0o700);
    expect(lstatSync(join(image, 'tmp')).mode & 0o7777).toBe(0o1777);
    // Files are links into the layer (no copy), so the layer's file is the image's.
    expect(lstatSync(join(image, 'usr', 'bin', 'kept')).ino).toBe(
      lstatSync(join(lower, 'usr', 'bin', 'kept')).ino,
    );
  });

  it('never writes through a link when a later layer replaces a file', () => {
    const lower = join(dir, 'lower');
    const image = join(dir, 'image');
    mkdirSync(join(lower, 'etc'), { recursive: true });
    writeFileSync(join(lower, 'etc', 'passwd'), 'layer');
    layOver(lower, image);
    const upper = join(dir, 'upper');
    mkdirSync(join(upper, 'etc'), { recursive: true });
    writeFileSync(join(upper, 'etc', 'passwd'), 'image');
    layOver(upper, image);
    expect(readFileSync(join(lower, 'etc', 'passwd'), 'utf8')).toBe('layer');
    expect(readFileSync(join(image, 'etc', 'passwd'), 'utf8')).toBe('image');
    linkSync(join(image, 'etc', 'passwd'), join(dir, 'probe')); // the image's file is a file of its own
  });
});
