/**
 * Issue 14: how a template image is put together: a recipe's hash does not depend on key order, and
 * layers laid over each other keep folder modes and symlinks, let a later layer win, and are never
 * written through when the image's own files replace theirs, which keep their modes (issue 25: the sudoers
 * file is 0440).
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
import { layOver, writeImageFiles } from '../../../sandbox-drivers/namespace/image-root.js';

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

describe('the base recipe', () => {
  it("gives the sandbox user sudo without a password (E2B's convention), in a root-only sudoers file", () => {
    expect(BASE_RECIPE.debianPackages).toContain('sudo');
    expect(BASE_RECIPE.setuidPrograms).toEqual(['/usr/bin/sudo']);
    expect(BASE_RECIPE.files['/etc/sudoers.d/user']).toBe('user ALL=(ALL:ALL) NOPASSWD: ALL\n');
    expect(BASE_RECIPE.modes?.['/etc/sudoers.d/user']).toBe(0o440);
  });

  it('gives every account a shadow entry and every group a gshadow entry (PAM fails an account without)', () => {
    const names = (file: string): string[] =>
      (BASE_RECIPE.files[file] ?? '')
        .trim()
        .split('\n')
        .map((line) => line.split(':')[0] ?? '');
    expect(names('/etc/shadow')).toEqual(names('/etc/passwd'));
    expect(names('/etc/gshadow')).toEqual(names('/etc/group'));
    expect(BASE_RECIPE.files['/etc/passwd']).toContain('_apt:x:42:'); // apt fetches as _apt
  });
});

describe("an image's own files", () => {
  it('are written with their modes whatever the umask, replacing links into layers', () => {
    const lower = join(dir, 'layer', 'etc', 'passwd');
    mkdirSync(join(dir, 'layer', 'etc'), { recursive: true });
    writeFileSync(lower, 'layer');
    mkdirSync(join(dir, 'image', 'etc'), { recursive: true });
    linkSync(lower, join(dir, 'image', 'etc', 'passwd'));
    const umask = process.umask(0o077);
    try {
      writeImageFiles(join(dir, 'image'), {
        files: { '/etc/passwd': 'image', '/etc/sudoers.d/user': 'rule\n' },
        modes: { '/etc/sudoers.d/user': 0o440 },
        env: { PATH: '/usr/bin' },
      });
    } finally {
      process.umask(umask);
    }
    const mode = (path: string): number => lstatSync(join(dir, 'image', path)).mode & 0o7777;
    expect(readFileSync(lower, 'utf8')).toBe('layer');
    expect(readFileSync(join(dir, 'image', 'etc', 'passwd'), 'utf8')).toBe('image');
    expect(mode('etc/passwd')).toBe(0o644);
    expect(mode('etc/sudoers.d/user')).toBe(0o440);
    expect(mode('etc/environment')).toBe(0o644);
    expect(readFileSync(join(dir, 'image', 'etc', 'environment'), 'utf8')).toBe('PATH=/usr/bin\n');
  });
});
