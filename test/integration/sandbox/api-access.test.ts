/**
 * Issue 10, "An API that lets no one in where they don't belong": the operator key for create, list and
 * the all-sandbox feed; a sandbox's token (or the operator key) for its own calls and stream; sequence
 * numbers and cursors on every stream.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { firstValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ndjsonValues } from '../../../protocol/ndjson.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { AuthenticationError } from '../../../rules/errors.js';
import type { InspectionRecord } from '../../../actors/actor-system.js';
import {
  startControlPlane,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';
import { request } from 'undici';

let cp: InProcessControlPlane;
let mine: Sandbox;
let other: Sandbox;

const create = () => cp.createSandbox();

beforeAll(async () => {
  cp = await startControlPlane();
  [mine, other] = await Promise.all([create(), create()]);
});

afterAll(async () => {
  await cp.stop();
});

/** The status of a call with `credential` as its bearer (none when undefined). */
async function statusOf(method: string, path: string, credential?: string): Promise<number> {
  const res = await request(`${cp.url}${path}`, {
    method: method as 'GET',
    headers: credential === undefined ? {} : { authorization: `Bearer ${credential}` },
    ...(method === 'POST' ? { body: '{}' } : {}),
  });
  // Streams answer 200 at once: read no further.
  res.body.on('error', () => undefined).destroy();
  return res.statusCode;
}

describe('who may call what', () => {
  it('refuses every call that needs a credential without one, or with the wrong one', async () => {
    const id = mine.sandboxId;
    const operatorCalls: [string, string][] = [
      ['POST', '/v1/sandboxes'],
      ['GET', '/v1/sandboxes'],
      ['GET', '/v1/events'],
    ];
    const sandboxCalls: [string, string][] = [
      ['GET', `/v1/sandboxes/${id}`],
      ['GET', `/v1/sandboxes/${id}/events`],
      ['POST', `/v1/sandboxes/${id}/pause`],
      ['POST', `/v1/sandboxes/${id}/activity`],
      ['POST', `/v1/sandboxes/${id}/connect`],
      ['DELETE', `/v1/sandboxes/${id}`],
    ];
    for (const [method, path] of [...operatorCalls, ...sandboxCalls]) {
      expect({ method, path, status: await statusOf(method, path) }).toEqual({ method, path, status: 401 });
    }
    // A sandbox's token is not the operator key, and opens no other sandbox.
    for (const [method, path] of operatorCalls) {
      expect({ path, status: await statusOf(method, path, mine.accessToken) }).toEqual({ path, status: 401 });
    }
    for (const [method, path] of sandboxCalls.filter(([, p]) => !p.endsWith('/connect'))) {
      expect({ path, status: await statusOf(method, path, other.accessToken) }).toEqual({
        path,
        status: 401,
      });
    }
  });

  it('lets the operator key list and read every sandbox, and a token its own sandbox', async () => {
    expect(await statusOf('GET', '/v1/sandboxes', TEST_OPERATOR_KEY)).toBe(200);
    expect(await statusOf('GET', '/v1/events', TEST_OPERATOR_KEY)).toBe(200);
    expect(await statusOf('GET', `/v1/sandboxes/${mine.sandboxId}`, mine.accessToken)).toBe(200);
    expect(await statusOf('GET', `/v1/sandboxes/${mine.sandboxId}`, TEST_OPERATOR_KEY)).toBe(200);
  });

  it('raises AuthenticationError in the SDK when SDK_API_KEY is missing or wrong', async () => {
    const saved = process.env.SDK_API_KEY;
    try {
      delete process.env.SDK_API_KEY;
      await expect(Sandbox.create({ controlPlaneUrl: cp.url })).rejects.toBeInstanceOf(AuthenticationError);
      process.env.SDK_API_KEY = mine.accessToken;
      await expect(Sandbox.create({ controlPlaneUrl: cp.url })).rejects.toBeInstanceOf(AuthenticationError);
      await expect(firstValueFrom(Sandbox.events({ controlPlaneUrl: cp.url }))).rejects.toBeInstanceOf(
        AuthenticationError,
      );
    } finally {
      process.env.SDK_API_KEY = saved;
    }
  });
});

describe('streams with sequence numbers', () => {
  it('resumes a stream after a cursor with exactly what came later', async () => {
    const sbx = await create();
    await sbx.pause();
    await sbx.connect();
    /** The first `count` events of the sandbox's stream from `query`. */
    const read = async (query: string, count: number): Promise<{ seq: number; state: string }[]> => {
      const res = await request(`${cp.url}/v1/sandboxes/${sbx.sandboxId}/events${query}`, {
        headers: { authorization: `Bearer ${sbx.accessToken}` },
      });
      const events: { seq: number; state: string }[] = [];
      for await (const value of ndjsonValues(res.body)) {
        events.push(value as { seq: number; state: string });
        if (events.length === count) break;
      }
      res.body.on('error', () => undefined).destroy();
      return events;
    };
    const { seq } = await sbx.getInfo();
    // From the creation on: running, suspended, running, in sequence.
    const history = await read('?after=0', 3);
    expect(history.map((e) => e.state)).toEqual(['running', 'suspended', 'running']);
    expect(history.map((e) => e.seq)).toEqual([...history.map((e) => e.seq)].sort((x, y) => x - y));
    expect(history[2]?.seq).toBe(seq);
    // After a cursor: exactly what came later; without one: the current state.
    expect(await read(`?after=${String(history[0]?.seq ?? 0)}`, 2)).toEqual(history.slice(1));
    expect(await read('', 1)).toEqual([history[2]]);
    await sbx.kill();
  });

  it('gives state$ every transition in order, from the current state to ended', async () => {
    const sbx = await create();
    const states = firstValueFrom(sbx.state$.pipe(toArray()));
    // Transitions right after subscribing are not lost between a read and a subscription.
    await sbx.pause();
    await sbx.connect();
    await sbx.kill();
    expect(await states).toEqual(['running', 'suspended', 'running', 'ended']);
  });
});

describe('the inspection feed', () => {
  it('shows every transition of a sandbox actor in sequence, and only to the operator', async () => {
    expect(await statusOf('GET', '/v1/inspect')).toBe(401);
    expect(await statusOf('GET', '/v1/inspect', mine.accessToken)).toBe(401);
    expect(await statusOf('GET', '/v1/inspect', TEST_OPERATOR_KEY)).toBe(200);
    const records: InspectionRecord[] = [];
    const subscription = cp.plane.inspect$.subscribe((record) => records.push(record));
    try {
      const sbx = await create();
      await sbx.pause();
      await sbx.connect();
      await sbx.kill();
      const own = records.filter((r) => r.actorId === sbx.sandboxId && r.event.type !== 'clock');
      expect(own.map((r) => [r.kind, r.event.type, r.state])).toEqual([
        ['sandbox', 'pause', 'suspended'],
        ['sandbox', 'connect', 'running'],
        ['sandbox', 'kill', 'ended'],
      ]);
      const seqs = records.filter((r) => r.actorId === sbx.sandboxId).map((r) => r.seq);
      expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] ?? 0) + i)); // one per journaled event, no gap
    } finally {
      subscription.unsubscribe();
    }
  });
});

describe('calls a command costs', () => {
  it('runs a foreground command in one SDK request, which the control plane forwards to sandboxd', async () => {
    const sbx = await create();
    const seen: string[] = [];
    const count = (message: unknown): void => {
      const { method, path } = (message as { request: { method: string; path: string } }).request;
      // The control plane runs in this process too: its follower of sandboxd's stream is not the SDK's.
      if (!(method === 'GET' && path.startsWith('/v1/events'))) seen.push(`${method} ${path}`);
    };
    subscribe('undici:request:create', count);
    try {
      expect((await sbx.commands.run('echo two')).stdout).toBe('two\n');
    } finally {
      unsubscribe('undici:request:create', count);
    }
    // The SDK's one request, and the control plane's hop to sandboxd (it runs in this process too).
    expect(seen).toEqual([
      `POST /v1/sandboxes/${sbx.sandboxId}/daemon/v1/processes?stream=true`,
      'POST /v1/processes?stream=true',
    ]);
    await sbx.kill();
  });
});
