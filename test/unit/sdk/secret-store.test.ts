import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { SECRET_CACHE_TTL_MS, SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { InvalidArgumentError, SandboxError, SecretNotFoundError } from '../../../rules/errors.js';

const VALUE = 'sk-local-planted-value-0123456789';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function localStore(): { store: SecretStore; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-secrets-'));
  dirs.push(dir);
  const file = join(dir, 'store', 'secrets.json');
  return { store: new SecretStore({ file }), file };
}

describe('SecretStore, local backend', () => {
  it('keeps secrets in a file only its owner can read', async () => {
    const { store, file } = localStore();
    await store.create('llm-key', VALUE);
    expect(await store.read('llm-key')).toBe(VALUE);
    await store.update('llm-key', `${VALUE}2`);
    expect(await store.read('llm-key')).toBe(`${VALUE}2`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
  });

  it('refuses a missing secret, a second create and bad arguments, never echoing a value', async () => {
    const { store } = localStore();
    await expect(store.read('missing')).rejects.toBeInstanceOf(SecretNotFoundError);
    await expect(store.update('missing', VALUE)).rejects.toBeInstanceOf(SecretNotFoundError);
    await store.create('once', VALUE);
    const again = await store.create('once', VALUE).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(SandboxError);
    expect((again as Error).message).not.toContain(VALUE);
    await expect(store.create('bad name!', VALUE)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(store.create('empty', '')).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(inspect(store, { depth: 5, showHidden: true })).not.toContain(VALUE);
  });
});

describe('SecretCache', () => {
  it('has a documented default time-to-live of 5 minutes', () => {
    expect(SECRET_CACHE_TTL_MS).toBe(300_000);
    expect(new SecretCache({ store: localStore().store }).ttlMs).toBe(300_000);
  });

  it('serves a hit from memory until the time-to-live passes, then reads again', async () => {
    const { store } = localStore();
    await store.create('k', VALUE);
    let now = 0;
    const cache = new SecretCache({ store, ttlMs: 1_000, now: () => now });
    expect(await cache.get('k')).toBe(VALUE);
    await store.update('k', 'rotated-value-000000');
    now = 999;
    expect(await cache.get('k')).toBe(VALUE); // a hit: the store was not read
    now = 1_000;
    expect(await cache.get('k')).toBe('rotated-value-000000');
    expect(inspect(cache, { depth: 5, showHidden: true })).not.toContain('rotated-value');
  });
});
