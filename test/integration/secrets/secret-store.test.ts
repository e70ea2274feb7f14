import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { SecretRef } from '../../../sdk/secret-ref.js';
import { SecretNotFoundError } from '../../../rules/errors.js';
import { startMotoServer, type MotoServer } from '../support/moto-server.js';

let moto: MotoServer;
const VALUE = 'Bearer sk-moto-planted-value-0123456789';

beforeAll(async () => {
  moto = await startMotoServer();
});

afterAll(async () => {
  await moto.stop();
});

const store = () => new SecretStore({ region: 'us-east-1', endpoint: moto.endpoint });

describe('SecretStore on AWS Secrets Manager (moto)', () => {
  it('creates, reads and updates a secret whose value is the whole header value', async () => {
    const s = store();
    await s.create('llm-key', VALUE);
    expect(await s.read('llm-key')).toBe(VALUE);
    await s.update('llm-key', `${VALUE}-rotated`);
    expect(await s.read('llm-key')).toBe(`${VALUE}-rotated`);
  });

  it('reports a missing secret as SecretNotFoundError naming it, never with AWS text or a value', async () => {
    const error = await store()
      .read('no-such-secret')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretNotFoundError);
    expect((error as Error).message).toBe('secret no-such-secret does not exist');
    await expect(store().update('no-such-secret', VALUE)).rejects.toBeInstanceOf(SecretNotFoundError);
  });

  it('makes no call at construction', () => {
    expect(() => new SecretStore({ region: 'eu-west-1', endpoint: 'http://127.0.0.1:9' })).not.toThrow();
  });
});

describe('SecretCache', () => {
  it('answers a hit without a remote call (the server is gone), and reads again after invalidate', async () => {
    const s = store();
    await s.create('cached-key', VALUE);
    const cache = new SecretCache({ store: s, ttlMs: 60_000 });
    expect(await cache.get('cached-key')).toBe(VALUE);
    expect(await cache.get(new SecretRef({ name: 'cached-key' }))).toBe(VALUE);
    await moto.stop();
    expect(await cache.get('cached-key')).toBe(VALUE); // no server, so no call was made
    cache.invalidate(['cached-key']);
    await expect(cache.get('cached-key')).rejects.toThrow();
    moto = await startMotoServer(); // a fresh, empty server for any later test
  });
});
