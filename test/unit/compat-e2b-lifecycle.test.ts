/**
 * The E2B shim's lifecycle calls over the native ones (issue 28 item 3), after E2B's own JS SDK tests
 * (`tests/sandbox/timeout.test.ts`, `tests/api/list.test.ts`, `tests/api/info.test.ts`): metadata at
 * create, in `getInfo` (with `startedAt`) and matched by `Sandbox.list({ query: { metadata } })`;
 * `sbx.setTimeout` and `Sandbox.setTimeout(id)` shortening and extending the lifetime, refused past 8 h
 * from creation as E2B's `InvalidArgumentError`; `connect({ timeoutMs })` extending it; the list's
 * state, start, order and pages. A fake control plane keeps sandboxes as the real one answers for them
 * (facts with `startedAt` and `metadata`, the list filtered by `state` and `metadata`, the timeout refused
 * past 8 h from `startedAt`), and records each request.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../rules/limits.js';
import { InvalidArgumentError as NativeInvalidArgumentError } from '../../rules/errors.js';
import {
  InvalidArgumentError,
  Sandbox,
  SandboxError,
  SandboxNotFoundError,
  type SandboxInfo,
} from '../../sdk/compat/e2b/index.js';
import { fakeSandboxInfo } from './sdk/fake-sandbox-info.js';

const KEY = 'operator-key';
const HOUR = 3_600_000;

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

interface Kept {
  info: Record<string, unknown>;
  readonly token: string;
}

let server: Server;
let url: string;
const requests: Recorded[] = [];
const sandboxes = new Map<string, Kept>();
let made = 0;

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

/** A sandbox's facts now: ended once its deadline has passed, as the control plane ends it. */
function factsOf(kept: Kept): Record<string, unknown> {
  if (kept.info.state !== 'ended' && (kept.info.deadlineAt as number) <= Date.now()) {
    kept.info = { ...kept.info, state: 'ended', endReason: 'timeout' };
  }
  return kept.info;
}

/** What the fake answers: status and body. */
function answer(r: Recorded): [number, unknown] {
  const refuse = (status: number, code: string, message: string, field?: string): [number, unknown] => [
    status,
    { code, message, ...(field === undefined ? {} : { context: { field } }) },
  ];
  if (r.method === 'PUT' && r.path === '/daemon/v1/secrets') {
    return [200, { names: Object.keys((r.body as { envs: object }).envs) }];
  }
  if (r.method === 'POST' && r.path === '/v1/sandboxes') {
    if (r.authorization !== `Bearer ${KEY}`) return refuse(401, 'unauthenticated', 'operator key');
    const body = r.body as { template?: string; timeoutMs: number; metadata?: Record<string, string> };
    made += 1;
    const sandboxId = made.toString(16).padStart(12, '0');
    // Started a second apart, an hour ago: the order is by start, and 8 h count from it.
    const startedAt = Date.now() - HOUR + made * 1000;
    const info = {
      ...fakeSandboxInfo(sandboxId, 'running', body.template ?? 'sdk-base'),
      startedAt,
      deadlineAt: Date.now() + body.timeoutMs,
      metadata: body.metadata ?? {},
    };
    const token = `token-${sandboxId}`;
    sandboxes.set(sandboxId, { info, token });
    return [
      201,
      {
        ...info,
        daemonUrl: `${url}/daemon`,
        accessToken: token,
        previewKey: 'k',
        previewUrl: `${url}/{port}/`,
      },
    ];
  }
  if (r.method === 'GET' && r.path === '/v1/sandboxes') {
    if (r.authorization !== `Bearer ${KEY}`) return refuse(401, 'unauthenticated', 'operator key');
    const states = r.query.getAll('state').flatMap((s) => s.split(','));
    const metadataText = r.query.get('metadata');
    const wanted = metadataText === null ? {} : Object.fromEntries(new URLSearchParams(metadataText));
    const listed = [...sandboxes.values()]
      .map(factsOf)
      .filter((info) => states.length === 0 || states.includes(info.state as string))
      .filter((info) =>
        Object.entries(wanted).every(([k, v]) => (info.metadata as Record<string, string>)[k] === v),
      );
    return [200, listed];
  }
  const match = /^\/v1\/sandboxes\/([0-9a-f]{12})(?:\/([a-z]+))?$/.exec(r.path);
  const kept = match === null ? undefined : sandboxes.get(match[1] ?? '');
  if (match === null) return refuse(401, 'unauthenticated', 'not faked');
  if (kept === undefined) return refuse(404, 'sandbox_not_found', 'no such sandbox');
  if (r.authorization !== `Bearer ${KEY}` && r.authorization !== `Bearer ${kept.token}`) {
    return refuse(401, 'unauthenticated', 'token');
  }
  const info = factsOf(kept);
  const verb = `${r.method} ${match[2] ?? ''}`;
  if (verb === 'GET ') return [200, info];
  if (info.state === 'ended') return refuse(410, 'sandbox_ended', 'the sandbox has ended');
  if (verb === 'POST timeout') {
    const { timeoutMs } = r.body as { timeoutMs: number };
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > LIMITS.sandboxMaxTimeoutMs) {
      return refuse(400, 'invalid_argument', 'sbx.setTimeout: timeoutMs: out of range', 'timeoutMs');
    }
    if (Date.now() + timeoutMs > (info.startedAt as number) + LIMITS.sandboxMaxTimeoutMs) {
      return refuse(
        400,
        'invalid_argument',
        "timeoutMs: past the sandbox's longest lifetime (8 h from its creation, running plus suspended)",
        'timeoutMs',
      );
    }
    kept.info = { ...info, deadlineAt: Date.now() + timeoutMs };
    return [200, kept.info];
  }
  if (verb === 'POST pause') {
    kept.info = { ...info, state: 'suspended', suspendReason: 'paused' };
    return [200, kept.info];
  }
  if (verb === 'POST connect') {
    kept.info = { ...info, state: 'running', suspendReason: null };
    return [200, { ...kept.info, daemonUrl: `${url}/daemon`, previewUrl: `${url}/{port}/` }];
  }
  if (verb === 'DELETE ') {
    kept.info = { ...info, state: 'ended', endReason: 'killed' };
    return [200, kept.info];
  }
  return refuse(401, 'unauthenticated', 'not faked');
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      const target = new URL(req.url ?? '/', 'http://fake');
      const recorded = {
        method: req.method ?? '',
        path: target.pathname,
        query: target.searchParams,
        authorization: req.headers.authorization,
        body,
      };
      requests.push(recorded);
      const [status, payload] = answer(recorded);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  process.env.SDK_CONTROL_PLANE_URL = url;
  process.env.SDK_API_KEY = KEY;
});

afterAll(() => {
  server.close();
  Reflect.deleteProperty(process.env, 'SDK_CONTROL_PLANE_URL');
  Reflect.deleteProperty(process.env, 'SDK_API_KEY');
});

beforeEach(() => {
  sandboxes.clear();
  requests.length = 0;
});

/** The requests to `path` (`method` when given). */
const sent = (path: string, method?: string): Recorded[] =>
  requests.filter((r) => r.path === path && (method === undefined || r.method === method));

/** The error `promise` rejects with. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

const ids = (list: readonly SandboxInfo[]): string[] => list.map((s) => s.sandboxId);

describe('metadata at create, in getInfo and in the list (E2B: api/info.test.ts, api/list.test.ts)', () => {
  it('sends the metadata and shows it with startedAt in getInfo on the handle, by id and as getFullInfo', async () => {
    const sbx = await Sandbox.create({ metadata: { sandboxTestId: 'test-1', role: 'web' } });
    const created = sent('/v1/sandboxes', 'POST')[0]?.body;
    expect(created).toMatchObject({
      template: 'sdk-base',
      metadata: { sandboxTestId: 'test-1', role: 'web' },
    });
    const info = await sbx.getInfo();
    expect(info.metadata).toEqual({ sandboxTestId: 'test-1', role: 'web' });
    expect(info.startedAt).toBeInstanceOf(Date);
    expect(info.startedAt.getTime()).toBe(sandboxes.get(sbx.sandboxId)?.info.startedAt);
    expect(info.endAt).toBeInstanceOf(Date);
    expect(info.endAt.getTime()).toBeGreaterThan(info.startedAt.getTime());
    const byId = await Sandbox.getInfo(sbx.sandboxId);
    expect(byId).toEqual(info);
    // E2B's deprecated alias, still in its docs.
    expect((await Sandbox.getFullInfo(sbx.sandboxId)).metadata).toEqual(info.metadata);
  });

  it('a sandbox created without metadata has {}; a template and a snapshot id carry it too', async () => {
    const plain = await Sandbox.create();
    expect(sent('/v1/sandboxes', 'POST')[0]?.body).not.toHaveProperty('metadata');
    expect((await plain.getInfo()).metadata).toEqual({});
    await Sandbox.create('my-template', { metadata: { k: 'v' } });
    expect(sent('/v1/sandboxes', 'POST')[1]?.body).toMatchObject({
      template: 'my-template',
      metadata: { k: 'v' },
    });
    await Sandbox.create('snap_0123456789abcdef', { metadata: { from: 'snapshot' } });
    expect(sent('/v1/sandboxes', 'POST')[2]?.body).toMatchObject({
      snapshot: 'snap_0123456789abcdef',
      metadata: { from: 'snapshot' },
    });
  });

  it("refuses metadata past the native rules before any call, as E2B's InvalidArgumentError", async () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${String(i)}`, 'v']));
    for (const metadata of [many, { '': 'v' }, { k: 'a\u0000b' }, { k: 'x'.repeat(1025) }, { k: 1 }]) {
      const error = await failure(Sandbox.create({ metadata: metadata as never }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toBeInstanceOf(NativeInvalidArgumentError);
      expect(error).toMatchObject({ code: 'invalid_argument' });
      expect((error as Error).message).toMatch(/^Sandbox\.create: metadata/);
    }
    const list = (): unknown => Sandbox.list({ query: { metadata: { k: 'a\u0007' } } });
    expect(list).toThrow(InvalidArgumentError);
    expect(list).toThrow(/query\.metadata/);
    expect(requests).toEqual([]);
  });

  it('lists by metadata: the control plane filters it, with the key, running and paused by default', async () => {
    const mine = await Sandbox.create({ metadata: { uniqueId: 'u-1', team: 'a b&c=d' } });
    await Sandbox.create({ metadata: { uniqueId: 'u-2' } });
    requests.length = 0;
    const sandboxes = await Sandbox.list({ query: { metadata: { uniqueId: 'u-1' } } }).nextItems();
    expect(ids(sandboxes)).toEqual([mine.sandboxId]);
    expect(sandboxes[0]?.metadata).toEqual({ uniqueId: 'u-1', team: 'a b&c=d' });
    expect(sandboxes[0]?.startedAt).toBeInstanceOf(Date);
    const [listing] = sent('/v1/sandboxes', 'GET');
    expect(listing?.authorization).toBe(`Bearer ${KEY}`);
    expect(listing?.query.getAll('state')).toEqual(['running', 'suspended']);
    expect(listing?.query.get('metadata')).toBe('uniqueId=u-1');
    // A value with E2B's separators in it is matched exactly (one URL-encoded parameter).
    const odd = await Sandbox.list({ query: { metadata: { team: 'a b&c=d' } } }).nextItems();
    expect(ids(odd)).toEqual([mine.sandboxId]);
    expect(await Sandbox.list({ query: { metadata: { uniqueId: 'u-3' } } }).nextItems()).toEqual([]);
    // Every entry must be held (AND).
    const both = Sandbox.list({ query: { metadata: { uniqueId: 'u-1', team: 'other' } } });
    expect(await both.nextItems()).toEqual([]);
    // The apiKey option is the key the list is read with.
    await Sandbox.list({ apiKey: 'another-key' })
      .nextItems()
      .catch(() => undefined);
    expect(sent('/v1/sandboxes', 'GET').at(-1)?.authorization).toBe('Bearer another-key');
  });

  it('lists running or paused ones by state, as E2B names them (paused is suspended here)', async () => {
    const running = await Sandbox.create({ metadata: { sandboxTestId: 't' } });
    const paused = await Sandbox.create({ metadata: { sandboxTestId: 't' } });
    expect(await paused.betaPause()).toBe(true); // E2B's deprecated alias its list tests use
    requests.length = 0;
    const query = (state: ('running' | 'paused')[]): Promise<SandboxInfo[]> =>
      Sandbox.list({ query: { metadata: { sandboxTestId: 't' }, state } }).nextItems();
    const onlyPaused = await query(['paused']);
    expect(onlyPaused.map((s) => [s.sandboxId, s.state])).toEqual([[paused.sandboxId, 'paused']]);
    expect(sent('/v1/sandboxes', 'GET')[0]?.query.getAll('state')).toEqual(['suspended']);
    expect(ids(await query(['running']))).toEqual([running.sandboxId]);
    expect(ids(await query(['running', 'paused']))).toEqual([paused.sandboxId, running.sandboxId]);
    await running.kill();
    expect(ids(await query(['running', 'paused']))).toEqual([paused.sandboxId]);
  });

  it('orders by start (newest first by default), pages with limit and nextToken, filters by startedAfter', async () => {
    const older = await Sandbox.create({ metadata: { sandboxTestId: 'p' } });
    const newer = await Sandbox.create({ metadata: { sandboxTestId: 'p' } });
    await Sandbox.create({ metadata: { sandboxTestId: 'other' } });
    const query = { metadata: { sandboxTestId: 'p' } };
    const paginator = Sandbox.list({ limit: 1, query: { ...query, state: ['running'] } });
    const first = await paginator.nextItems();
    expect(ids(first)).toEqual([newer.sandboxId]);
    expect(paginator.hasNext).toBe(true);
    expect(paginator.nextToken).not.toBeUndefined();
    const second = await paginator.nextItems();
    expect(ids(second)).toEqual([older.sandboxId]);
    expect(paginator.hasNext).toBe(false);
    expect(paginator.nextToken).toBeUndefined();
    await expect(paginator.nextItems()).rejects.toBeInstanceOf(SandboxError);
    expect(ids(await Sandbox.list({ query, order: 'asc' }).nextItems())).toEqual([
      older.sandboxId,
      newer.sandboxId,
    ]);
    // E2B's 'list sandboxes started after': at or after the start, not a second later.
    const { startedAt } = await newer.getInfo();
    expect(ids(await Sandbox.list({ query: { ...query, startedAfter: startedAt } }).nextItems())).toEqual([
      newer.sandboxId,
    ]);
    const later = new Date(startedAt.getTime() + 1000);
    expect(await Sandbox.list({ query: { ...query, startedAfter: later } }).nextItems()).toEqual([]);
    expect(() => Sandbox.list({ query: { startedAfter: 'yesterday' as never } })).toThrow(
      InvalidArgumentError,
    );
    expect(() => Sandbox.list({ query: { startedAfter: new Date(Number.NaN) } })).toThrow(/startedAfter/);
    // The template filter stays (E2B's base is sdk-base).
    expect(ids(await Sandbox.list({ query: { ...query, template: 'base' } }).nextItems())).toHaveLength(2);
    expect(await Sandbox.list({ query: { ...query, template: 'unknown-template' } }).nextItems()).toEqual([]);
  });
});

describe('setTimeout (E2B: sandbox/timeout.test.ts)', () => {
  it("shortens the lifetime: with the sandbox's token, the sandbox then ends (isRunning false)", async () => {
    const sbx = await Sandbox.create();
    const token = sandboxes.get(sbx.sandboxId)?.token;
    requests.length = 0;
    const before = Date.now();
    await expect(sbx.setTimeout(300)).resolves.toBeUndefined(); // E2B's answer: nothing
    const [call] = sent(`/v1/sandboxes/${sbx.sandboxId}/timeout`, 'POST');
    expect(call?.body).toEqual({ timeoutMs: 300 });
    expect(call?.authorization).toBe(`Bearer ${String(token)}`);
    const { endAt } = await sbx.getInfo();
    expect(endAt.getTime()).toBeGreaterThanOrEqual(before + 300);
    expect(endAt.getTime()).toBeLessThanOrEqual(Date.now() + 300);
    await new Promise((resolve) => globalThis.setTimeout(resolve, 400));
    expect(await sbx.isRunning()).toBe(false);
    // Once ended, E2B's answer for the sandbox: not found.
    await expect(sbx.setTimeout(5000)).rejects.toBeInstanceOf(SandboxNotFoundError);
  });

  it('shortens then lengthens it: the latest call wins, from now', async () => {
    const sbx = await Sandbox.create();
    await sbx.setTimeout(5000);
    await sbx.setTimeout(2 * HOUR);
    const { endAt } = await sbx.getInfo();
    expect(endAt.getTime()).toBeGreaterThan(Date.now() + HOUR);
    expect(await sbx.isRunning()).toBe(true);
  });

  it('Sandbox.setTimeout(id, ms) with the key; an id no sandbox has is SandboxNotFoundError', async () => {
    const sbx = await Sandbox.create();
    requests.length = 0;
    await Sandbox.setTimeout(sbx.sandboxId, 60_000);
    const [call] = sent(`/v1/sandboxes/${sbx.sandboxId}/timeout`, 'POST');
    expect(call).toMatchObject({ authorization: `Bearer ${KEY}`, body: { timeoutMs: 60_000 } });
    await Sandbox.setTimeout(sbx.sandboxId, 30_000, { apiKey: 'operator-key', requestTimeoutMs: 5000 });
    expect((await sbx.getInfo()).endAt.getTime()).toBeLessThanOrEqual(Date.now() + 30_000);
    await expect(Sandbox.setTimeout('fedcba987654', 60_000)).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(Sandbox.setTimeout('not-an-id', 60_000)).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(Sandbox.setTimeout(sbx.sandboxId, 60_000, { domain: 'e2b.app' })).rejects.toMatchObject({
      name: 'NotSupportedError',
      feature: 'domain',
    });
  });

  it("past 8 h from creation is E2B's InvalidArgumentError naming timeoutMs; nothing changes", async () => {
    const sbx = await Sandbox.create(); // started an hour ago (the fake's clock)
    const { endAt } = await sbx.getInfo();
    for (const call of [
      () => sbx.setTimeout(LIMITS.sandboxMaxTimeoutMs),
      () => Sandbox.setTimeout(sbx.sandboxId, 7.5 * HOUR),
    ]) {
      const error = await failure(call());
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toBeInstanceOf(SandboxError); // E2B programs catching SandboxError still do
      expect(error).toMatchObject({ code: 'invalid_argument', cause: { context: { field: 'timeoutMs' } } });
      expect((error as Error).message).toContain('8 h from its creation');
    }
    expect((await sbx.getInfo()).endAt).toEqual(endAt);
    await sbx.setTimeout(6 * HOUR); // within 8 h of its start
  });

  it('checks timeoutMs before any call (1 ms to 8 h, whole milliseconds)', async () => {
    const sbx = await Sandbox.create();
    requests.length = 0;
    for (const timeoutMs of [0, -1, 1.5, LIMITS.sandboxMaxTimeoutMs + 1, '60000']) {
      const error = await failure(sbx.setTimeout(timeoutMs as never));
      expect(error, String(timeoutMs)).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ cause: { context: { field: 'timeoutMs' } } });
      await expect(Sandbox.setTimeout(sbx.sandboxId, timeoutMs as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    await expect(sbx.setTimeout(1000, { colour: 'red' } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(requests).toEqual([]);
  });
});

describe('connect({ timeoutMs }): extends, never shortens (E2B)', () => {
  it('within the lifetime left changes nothing; past it sets the end timeoutMs from now', async () => {
    const sbx = await Sandbox.create({ timeoutMs: 300_000 });
    const { endAt } = await sbx.getInfo();
    requests.length = 0;
    await Sandbox.connect(sbx.sandboxId, { timeoutMs: 10_000 });
    await sbx.connect({ timeoutMs: 10_000 });
    expect(sent(`/v1/sandboxes/${sbx.sandboxId}/timeout`)).toEqual([]);
    expect((await sbx.getInfo()).endAt).toEqual(endAt);
    await sbx.connect({ timeoutMs: 600_000 });
    expect(sent(`/v1/sandboxes/${sbx.sandboxId}/timeout`).map((r) => r.body)).toEqual([
      { timeoutMs: 600_000 },
    ]);
    expect((await sbx.getInfo()).endAt.getTime()).toBeGreaterThan(endAt.getTime());
    const again = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 2 * HOUR });
    expect((await again.getInfo()).endAt.getTime()).toBeGreaterThan(Date.now() + HOUR);
    await expect(sbx.connect({ timeoutMs: 9 * HOUR })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
