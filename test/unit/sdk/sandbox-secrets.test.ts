/**
 * `Sandbox.create({ secrets })`: the option's rules (InvalidArgumentError naming the field, before any
 * call), and the create path against an in-process sandboxd behind a fake control plane: values read
 * with the caller's SecretCache and sent to sandboxd alone, a missing secret or an old daemon ending the
 * new sandbox, `reincarnate` sending them again, and no value in any error, print or JSON of the SDK.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  InvalidArgumentError,
  PoolConfig,
  Sandbox,
  SandboxError,
  SandboxPool,
  SecretCache,
  SecretGateway,
  SecretNotFoundError,
  SecretRef,
  SecretStore,
  resolveSandboxOptions,
  type SandboxOptions,
} from '../../../sdk/index.js';
import { useDaemonWorld } from '../daemon/daemon-world.js';
import { FakeSandboxd } from './agent-fake-sandboxd.js';
import { fakeSandboxInfo } from './fake-sandbox-info.js';

const TOKEN = 'unit-test-token-sdk-secrets-4567';
const VALUE = 'planted-sdk-secret-value-c0ffee11';
const SANDBOX_ID = 'abcdef012345';
const daemon = useDaemonWorld({ name: 'sdk-secrets-unit-', token: TOKEN, runtime: '#!/bin/sh\nexit 0\n' });

/** A fake control plane whose sandboxes are all the in-process sandboxd; it records every request. */
interface FakePlane {
  readonly url: string;
  readonly requests: { method: string; path: string; body: string }[];
  readonly server: Server;
}

async function startFakePlane(): Promise<FakePlane> {
  const requests: FakePlane['requests'] = [];
  const info = (state: 'running' | 'ended'): Record<string, unknown> => fakeSandboxInfo(SANDBOX_ID, state);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      requests.push({ method, path, body: Buffer.concat(chunks).toString('utf8') });
      const created = path === '/v1/sandboxes' && method === 'POST';
      const body = created
        ? {
            ...info('running'),
            daemonUrl: daemon.url,
            accessToken: TOKEN,
            previewKey: 'k',
            previewUrl: '/{port}/',
          }
        : info(method === 'DELETE' ? 'ended' : 'running');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`, requests, server };
}

let plane: FakePlane;
let dir: string;
let cache: SecretCache;

beforeAll(async () => {
  vi.stubEnv('SDK_API_KEY', 'operator-key');
  plane = await startFakePlane();
  dir = mkdtempSync(join(tmpdir(), 'sdk-secrets-store-'));
  const store = new SecretStore({ file: join(dir, 'secrets.json') });
  await store.create('api-key', VALUE);
  cache = new SecretCache({ store });
});

afterAll(() => {
  vi.unstubAllEnvs();
  plane.server.closeAllConnections();
  plane.server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The InvalidArgumentError `make` throws; its field must be `field`. */
function refusal(make: () => unknown, field: string): InvalidArgumentError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).field).toBe(field);
    return error as InvalidArgumentError;
  }
  throw new Error(`expected InvalidArgumentError on ${field}`);
}

const secretsCalls = (): number =>
  daemon.records().filter((r) => r.type === 'call' && r.endpoint === 'PUT /v1/secrets').length;

const create = (options: SandboxOptions): Promise<Sandbox> =>
  Sandbox.create({ controlPlaneUrl: plane.url, secretCache: cache, ...options });

describe('the secrets option', () => {
  it('takes environment names to secret names or SecretRefs, at most 64', () => {
    const ref = new SecretRef({ name: 'api-key', region: 'eu-west-1' });
    expect(resolveSandboxOptions({ secrets: { API_KEY: 'api-key', _other2: ref } }).secrets).toEqual({
      API_KEY: 'api-key',
      _other2: ref,
    });
    expect(resolveSandboxOptions().secrets).toEqual({});
    const many = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${String(i)}`, 'k']));
    expect(Object.keys(resolveSandboxOptions({ secrets: many(64) }).secrets)).toHaveLength(64);
    refusal(() => resolveSandboxOptions({ secrets: many(65) }), 'secrets');
  });

  it('refuses names commands.run refuses, and values that are not a secret name or SecretRef', () => {
    for (const name of ['1ST', 'A-B', 'A B', '', 'É']) {
      refusal(() => resolveSandboxOptions({ secrets: { [name]: 'api-key' } }), `secrets.${name}`);
    }
    refusal(() => resolveSandboxOptions({ secrets: { A: 5 as never } }), 'secrets.A');
    refusal(() => resolveSandboxOptions({ secrets: { A: { name: 'api-key' } as never } }), 'secrets.A');
    // A value where a name belongs: refused by the name rule, and the message never repeats it.
    const e = refusal(() => resolveSandboxOptions({ secrets: { A: `Bearer ${VALUE}` } }), 'secrets.A');
    expect(e.message).not.toContain(VALUE);
    refusal(() => resolveSandboxOptions({ secrets: [] as never }), 'secrets');
  });

  it('is refused with pool (only gateways are taken), and pool.take does not accept it', async () => {
    const take = vi.fn();
    refusal(() => resolveSandboxOptions({ pool: { take } as never, secrets: { A: 'api-key' } }), 'secrets');
    const pool = new SandboxPool(new PoolConfig({ size: 1, template: 'sdk-base' }), {
      controlPlaneUrl: plane.url,
    });
    try {
      await expect(pool.take({ secrets: { A: 'api-key' } } as never)).rejects.toMatchObject({
        field: 'secrets',
      });
    } finally {
      await pool.close();
    }
    expect(take).not.toHaveBeenCalled();
  });

  it('is checked by Sandbox.create before any call', async () => {
    const before = plane.requests.length;
    await expect(create({ secrets: { 'BAD-NAME': 'api-key' } })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(create({ secrets: { A: 42 as never } })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(plane.requests.length).toBe(before);
  });
});

describe('Sandbox.create({ secrets })', () => {
  it("puts each value in every command's environment; a command's own envs win", async () => {
    const options: SandboxOptions = {
      secrets: { API_KEY: 'api-key', ALSO: new SecretRef({ name: 'api-key' }) },
    };
    const sbx = await create(options);
    expect((await sbx.commands.run('printf "%s|%s" "$API_KEY" "$ALSO"')).stdout).toBe(`${VALUE}|${VALUE}`);
    expect((await sbx.commands.run('printf %s "$API_KEY"', { envs: { API_KEY: 'own' } })).stdout).toBe('own');
    // Nothing of the SDK shows the value: handle, options, cache, gateways.
    for (const value of [sbx, options, cache, sbx.gateways, sbx.commands]) {
      expect(inspect(value, { showHidden: true, depth: Infinity })).not.toContain(VALUE);
      expect(JSON.stringify(value)).not.toContain(VALUE);
    }
    // The control plane never sees a value: the SDK sends them to sandboxd alone.
    expect(JSON.stringify(plane.requests)).not.toContain(VALUE);
    expect(JSON.stringify(daemon.records())).not.toContain(VALUE);
  });

  it('sends nothing when secrets is empty', async () => {
    const before = secretsCalls();
    await create({});
    expect(secretsCalls()).toBe(before);
  });

  it('sends them again on reincarnate', async () => {
    const gateways = {
      llm: new SecretGateway({
        upstream: 'https://api.example',
        headers: { 'x-api-key': 'api-key' },
        allow: [['POST', '/v1/messages']],
      }),
    };
    const sbx = await create({ gateways, secrets: { API_KEY: 'api-key' } });
    const before = secretsCalls();
    const next = await sbx.reincarnate();
    expect(secretsCalls()).toBe(before + 1);
    expect((await next.commands.run('printf %s "$API_KEY"')).stdout).toBe(VALUE);
  });

  it('raises SecretNotFoundError for a missing secret, sends no value and ends the sandbox', async () => {
    const [calls, deletes] = [secretsCalls(), plane.requests.filter((r) => r.method === 'DELETE').length];
    const error: unknown = await create({ secrets: { API_KEY: 'api-key', MISSING: 'no-such-secret' } }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SecretNotFoundError);
    expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error)}`).not.toContain(VALUE);
    expect(secretsCalls()).toBe(calls);
    expect(plane.requests.filter((r) => r.method === 'DELETE')).toHaveLength(deletes + 1);
    // keepOnFailure keeps it.
    await expect(
      create({ secrets: { MISSING: 'no-such-secret' }, keepOnFailure: true }),
    ).rejects.toBeInstanceOf(SecretNotFoundError);
    expect(plane.requests.filter((r) => r.method === 'DELETE')).toHaveLength(deletes + 1);
  });

  it('raises UnimplementedError on a daemon without secrets and ends the sandbox', async () => {
    const fake = await FakeSandboxd.start();
    try {
      const error: unknown = await Sandbox.create({
        controlPlaneUrl: fake.url,
        secretCache: cache,
        secrets: { API_KEY: 'api-key' },
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).failureClass).toBe('UnimplementedError');
      expect(`${String(error)} ${JSON.stringify(error)}`).not.toContain(VALUE);
      expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toContain(
        `DELETE /v1/sandboxes/${fake.sandboxId}`,
      );
    } finally {
      await fake.close();
    }
  });
});
