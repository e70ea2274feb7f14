/**
 * Issue 10, "Events flow up from sandboxd": sandboxd streams what it saw, the control plane follows that
 * stream, and the idle policy counts it; nothing polls and no client has to claim activity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { filter, firstValueFrom, take, takeWhile, toArray } from 'rxjs';
import type { InspectionFeedRecord } from '../../../protocol/control-plane-api.js';
import { request } from 'undici';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { IdlePolicy } from '../../../sdk/idle-policy.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { ndjsonValues } from '../../../protocol/ndjson.js';
import { daemonEventSchema, type DaemonEvent } from '../../../protocol/daemon-events.js';
import { z } from 'zod';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';

let cp: InProcessControlPlane;

beforeAll(async () => {
  cp = await startControlPlane();
});

afterAll(async () => {
  await cp.stop();
});

const create = (options: Parameters<typeof Sandbox.create>[0] = {}) => cp.createSandbox(options);

/** The first `count` events of sandboxd's stream, read with `token`. */
async function daemonEvents(url: string, token: string, count: number): Promise<DaemonEvent[]> {
  const res = await request(`${url}/v1/events?after=0`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.statusCode).toBe(200);
  const events: DaemonEvent[] = [];
  for await (const value of ndjsonValues(res.body)) {
    events.push(daemonEventSchema.parse(value));
    if (events.length === count) break;
  }
  res.body.on('error', () => undefined).destroy();
  return events;
}

describe("sandboxd's event stream", () => {
  it('records calls and commands with their command line and exit, never output, and refuses a caller without the token', async () => {
    const sbx = await create();
    const { daemonUrl } = await cp.plane.connect(sbx.sandboxId, sbx.accessToken);
    // The command line is recorded (for the inspector), its output never: the two differ here.
    const cmd = "printf 'secret-output-%s' 0123456789";
    await sbx.commands.run(cmd);
    const unauthorized = await request(`${daemonUrl}/v1/events`);
    await unauthorized.body.dump();
    expect(unauthorized.statusCode).toBe(401);
    const events = await daemonEvents(daemonUrl, sbx.accessToken, 3);
    expect(events.map((e) => e.type)).toEqual(['call', 'process', 'process']);
    expect(events[0]).toMatchObject({ method: 'POST', endpoint: 'POST /v1/processes' });
    expect(events.slice(1).map((e) => (e.type === 'process' ? e.event : ''))).toEqual(['start', 'end']);
    expect(events[1]).toMatchObject({ event: 'start', command: cmd });
    expect(events[2]).toMatchObject({ event: 'end', exitCode: 0, signal: null });
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(JSON.stringify(events)).not.toContain('secret-output-0123456789');
    await sbx.kill();
  });

  it('reaches the SDK as sbx.events$: calls and commands in sequence, from the oldest held, never output', async () => {
    const sbx = await create();
    const seen: DaemonEvent[] = [];
    const subscription = sbx.events$.subscribe((event) => seen.push(event));
    try {
      await sbx.commands.run("printf 'never-in-%s' events");
      await expect
        .poll(() => seen.flatMap((e) => (e.type === 'process' ? [e.event] : [])))
        .toEqual(['start', 'end']);
      expect(seen.some((e) => e.type === 'call' && e.endpoint === 'POST /v1/processes')).toBe(true);
      const seqs = seen.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(JSON.stringify(seen)).not.toContain('never-in-events');
      // A later reader starts from the oldest record too: the same numbers, the same records.
      const again = await firstValueFrom(sbx.events$.pipe(take(seen.length), toArray()));
      expect(again).toEqual(seen.slice(0, again.length));
    } finally {
      subscription.unsubscribe();
      await sbx.kill();
    }
  });

  it('gives the operator the inspection feed with cursors: a reader that comes back after one misses nothing', async () => {
    const records: InspectionFeedRecord[] = [];
    const first = Sandbox.inspect$({ controlPlaneUrl: cp.url }).subscribe((r) => records.push(r));
    const sbx = await create();
    try {
      const mine = (r: InspectionFeedRecord): boolean => r.actorId === sbx.sandboxId;
      await sbx.pause();
      await expect.poll(() => records.filter(mine).map((r) => r.state)).toContain('suspended');
      first.unsubscribe();
      const cursor = records.filter(mine).at(-1)?.cursor ?? 0;
      await sbx.connect();
      // Back after the cursor: what happened since, in order, each cursor once.
      const after = await firstValueFrom(
        Sandbox.inspect$({ controlPlaneUrl: cp.url, after: cursor }).pipe(
          filter(mine),
          takeWhile((r) => r.event.type !== 'connect', true),
          toArray(),
        ),
      );
      expect(after.at(-1)).toMatchObject({ kind: 'sandbox', event: { type: 'connect' }, state: 'running' });
      const cursors = after.map((r) => r.cursor);
      expect(cursors.every((c) => c > cursor)).toBe(true);
      expect(cursors).toEqual([...new Set(cursors)].sort((a, b) => a - b));
      expect(after.map((r) => r.event.type)).not.toContain('pause');
    } finally {
      first.unsubscribe();
      await sbx.kill();
    }
  });

  it('keeps a sandbox running while something calls sandboxd directly, with no SDK activity call', async () => {
    const sbx = await create({ idlePolicy: new IdlePolicy({ maxIdleSeconds: 2 }) });
    const { daemonUrl } = await cp.plane.connect(sbx.sandboxId, sbx.accessToken);
    // A client of sandboxd alone: it never tells the control plane anything.
    const direct = new DaemonClient({ url: daemonUrl, accessToken: sbx.accessToken });
    const end = Date.now() + 5_000; // more than twice the idle time
    while (Date.now() < end) {
      await direct.call('GET', '/v1/processes', z.array(z.unknown()));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(cp.plane.get(sbx.sandboxId).state).toBe('running');
    // Once nothing reaches sandboxd, the idle policy suspends it.
    await expect
      .poll(() => cp.plane.get(sbx.sandboxId).state, { timeout: 10_000, interval: 100 })
      .toBe('suspended');
    await sbx.kill();
  });
});
