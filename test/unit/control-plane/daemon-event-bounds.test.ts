/**
 * A sandboxd taken over by sandbox code must not make the control plane keep what it likes: every string
 * of its events is bounded (a longer event is dropped, the feed goes on), the routes and hosted actors
 * believed per sandbox are bounded, a stopped follower delivers nothing more, and a sandbox that has
 * ended (its records dropped or never made) gets no new entry from a record that comes late.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EMPTY } from 'rxjs';
import { followDaemon, MAX_DAEMON_LINE_CHARS } from '../../../control-plane/daemon-feed.js';
import { SandboxRecords } from '../../../control-plane/sandbox-records.js';
import {
  MAX_RECORD_NAME,
  MAX_RECORD_TEXT,
  daemonEventSchema,
  type DaemonEvent,
} from '../../../protocol/daemon-events.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A sandboxd whose event stream writes `lines` in one write, then stays open. */
async function fakeSandboxd(lines: readonly unknown[]): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    if (new URL(req.url ?? '/', 'http://sandboxd').searchParams.get('after') !== '0') return;
    res.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
}

const big = 'x'.repeat(1024 * 1024);
const call = (seq: number): DaemonEvent => ({
  seq,
  at: 1_000 + seq,
  type: 'call',
  method: 'GET',
  endpoint: 'x',
});

describe("sandboxd's event schema", () => {
  const transition = { seq: 1, at: 1, type: 'transition', actorId: 'agent', kind: 'agent_execution' };
  const events: readonly (readonly [string, (text: string) => unknown])[] = [
    ['call method', (s) => ({ seq: 1, at: 1, type: 'call', method: s, endpoint: 'GET /v1/health' })],
    ['call endpoint', (s) => ({ seq: 1, at: 1, type: 'call', method: 'GET', endpoint: s })],
    ['gateway_request route', (s) => ({ seq: 1, at: 1, type: 'gateway_request', route: s, method: 'GET' })],
    ['process signal', (s) => ({ seq: 1, at: 1, type: 'process', pid: 1, event: 'end', signal: s })],
    [
      'route errorClass',
      (s) => ({ seq: 1, at: 1, type: 'route', route: 'm', event: 'failed', errorClass: s }),
    ],
    ['route name', (s) => ({ seq: 1, at: 1, type: 'route', route: s, event: 'opened', port: 1 })],
    ['transition actorId', (s) => ({ ...transition, actorSeq: 1, event: 'run', state: 'idle', actorId: s })],
    ['transition event', (s) => ({ ...transition, actorSeq: 1, event: s, state: 'idle' })],
    ['transition state', (s) => ({ ...transition, actorSeq: 1, event: 'run', state: s })],
  ];

  it.each(events)(
    'bounds the %s: MAX_RECORD_NAME characters pass, one more or a megabyte is no event',
    (_field, make) => {
      expect(daemonEventSchema.safeParse(make('a'.repeat(MAX_RECORD_NAME))).success).toBe(true);
      expect(daemonEventSchema.safeParse(make('a'.repeat(MAX_RECORD_NAME + 1))).success).toBe(false);
      expect(daemonEventSchema.safeParse(make(big)).success).toBe(false);
    },
  );

  it('bounds paths and command lines to MAX_RECORD_TEXT characters', () => {
    const response = (path: string): unknown => ({
      seq: 1,
      at: 1,
      type: 'gateway_response',
      route: 'model',
      method: 'POST',
      path,
      status: 200,
      latencyMs: 1,
      bytes: 1,
    });
    const start = (command: string): unknown => ({
      seq: 1,
      at: 1,
      type: 'process',
      pid: 1,
      event: 'start',
      command,
    });
    for (const make of [response, start]) {
      expect(daemonEventSchema.safeParse(make('/'.repeat(MAX_RECORD_TEXT))).success).toBe(true);
      expect(daemonEventSchema.safeParse(make('/'.repeat(MAX_RECORD_TEXT + 1))).success).toBe(false);
    }
  });
});

describe("the control plane's follower of a sandboxd", () => {
  it('drops an event with an oversized string and goes on with the next', async () => {
    const long = 'x'.repeat(8 * 1024); // past every field's bound, within a line's
    const url = await fakeSandboxd([
      call(1),
      { seq: 2, at: 2, type: 'route', route: long, event: 'opened', port: 1 },
      { seq: 3, at: 3, type: 'process', pid: 1, event: 'start', command: long },
      call(4),
    ]);
    const seen: number[] = [];
    const stop = followDaemon({ url, token: 't', onEvent: (event) => seen.push(event.seq) });
    try {
      await expect.poll(() => seen).toEqual([1, 4]);
    } finally {
      stop();
    }
  });

  it('holds no line longer than MAX_DAEMON_LINE_CHARS: the stream is dropped there', async () => {
    expect(big.length).toBeGreaterThan(MAX_DAEMON_LINE_CHARS);
    const url = await fakeSandboxd([call(1), { seq: 2, at: 2, type: 'call', method: big }, call(3)]);
    const seen: number[] = [];
    const stop = followDaemon({ url, token: 't', onEvent: (event) => seen.push(event.seq) });
    try {
      await expect.poll(() => seen).toEqual([1]);
      await sleep(300);
      expect(seen).toEqual([1]); // nothing after the long line; the follower asks again after 1
    } finally {
      stop();
    }
  });

  it('delivers nothing once stopped, not even the rest of a chunk it has read', async () => {
    const url = await fakeSandboxd([call(1), call(2), call(3)]);
    const seen: number[] = [];
    const stop = followDaemon({
      url,
      token: 't',
      onEvent: (event) => {
        seen.push(event.seq);
        stop(); // as when its sandbox ends on this event
      },
    });
    await expect.poll(() => seen.length).toBeGreaterThan(0);
    await sleep(100);
    expect(seen).toEqual([1]);
  });
});

describe("a sandbox's records", () => {
  let seq = 0;
  const route = (name: string): DaemonEvent => ({
    seq: ++seq,
    at: seq,
    type: 'route',
    route: name,
    event: 'opened',
    port: 40_000,
  });
  const transition = (
    actorId: string,
    kind: 'gateway_route' | 'agent_execution' = 'gateway_route',
  ): DaemonEvent => ({
    seq: ++seq,
    at: seq,
    type: 'transition',
    actorId,
    kind,
    actorSeq: 1,
    event: 'configure',
    state: 'open',
  });

  it('believe a bounded number of routes and hosted actors', () => {
    const records = new SandboxRecords();
    for (let i = 0; i < 1_000; i++) records.append('a', route(`route-${String(i)}`));
    for (let i = 0; i < 1_000; i++) records.append('a', transition(`actor-${String(i)}`));
    const routes = records.routes('a');
    expect(routes.length).toBeLessThanOrEqual(64);
    expect(routes.length).toBeGreaterThanOrEqual(8); // the spec's routes per sandbox, and more
    expect(routes[0]?.name).toBe('route-0'); // the first ones kept, later names not believed
    expect(records.hosts('a', 'actor-999')).toBe(false);
    // A few routes and actors, as a real sandboxd reports, are all taken.
    records.append('b', route('model'));
    records.append('b', transition('model'));
    records.append('b', transition('agent', 'agent_execution'));
    expect(records.routes('b').map((summary) => summary.name)).toEqual(['model']);
    expect(records.hosts('b', 'model') && records.hosts('b', 'agent')).toBe(true);
  });

  it('open no new entry for an ended sandbox whose records were dropped, or that had none', () => {
    const records = new SandboxRecords();
    records.append('gone', route('model'));
    records.end('gone');
    // Enough later sandboxes end that the first one's records are dropped.
    for (let i = 0; i < 200; i++) {
      records.append(`later-${String(i)}`, route('model'));
      records.end(`later-${String(i)}`);
    }
    expect(records.routes('gone')).toEqual([]);
    records.end('never-heard-of');

    for (const id of ['gone', 'never-heard-of']) {
      records.append(id, route('late'));
      records.append(id, transition('late'));
      expect(records.routes(id)).toEqual([]);
      expect(records.stream(id, 0, false)).toBe(EMPTY);
      expect(records.hosts(id, 'late')).toBe(false);
    }
  });
});
