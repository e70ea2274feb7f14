/**
 * Issue 24: what sandbox code can make a gateway host hold is bounded. Connections past a route's cap
 * (256) or the host's (512, all routes together) are closed as soon as they are accepted and the route
 * reports `ConnectionLimitError`; a connection whose request head is not complete in time is answered
 * 408 and closed; a connection pipelining more requests than one read can hold behind one in flight is
 * cut, and nothing more is read from it while one waits. No upstream is reachable here: admitted requests
 * fail at the (stub) resolver, after `lookupDelayMs`.
 */
import { connect, type LookupFunction, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayHost, type GatewayHostEvent, type GatewayHostOptions } from '../../../gateway/index.js';
import { CONNECTION_LIMITS } from '../../../gateway/connection-limits.js';
import { RawConnection } from '../../integration/support/raw-http.js';

const failingLookup =
  (delayMs: number): LookupFunction =>
  (_host, _options, callback) => {
    setTimeout(
      () => callback(Object.assign(new Error('no such name'), { code: 'ENOTFOUND' }), '', 4),
      delayMs,
    );
  };

/** Polls end only a test that hangs. */
const POLL = { timeout: 10_000 };

const hosts: GatewayHost[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

const route = {
  upstream: 'https://api.vendor.example',
  headers: { 'x-api-key': 'sk-planted-caps-secret-0123456789' },
  allow: [['GET', '/v1/*']],
  ratePerMinute: 6000,
};

/** A host with `routes` (each the route above), collecting its events; returns their ports. */
async function openHost(
  names: readonly string[],
  options: GatewayHostOptions & { lookupDelayMs?: number } = {},
) {
  const { lookupDelayMs = 0, ...hostOptions } = options;
  const host = new GatewayHost({ lookup: failingLookup(lookupDelayMs), ...hostOptions });
  hosts.push(host);
  const events: GatewayHostEvent[] = [];
  host.events$.subscribe((event) => events.push(event));
  const outcome = await host.apply(Object.fromEntries(names.map((name) => [name, route])));
  if (!outcome.ok) throw new Error(outcome.failure.message);
  const ports = names.map((name) => host.status().get(name)?.port ?? 0);
  return { ports, events };
}

/** `count` raw connections to `port` that send nothing; `closed()` counts those the gateway closed. */
async function silentConnections(port: number, count: number) {
  let closed = 0;
  const opened = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => resolve(socket));
          socket.on('error', () => undefined);
          socket.once('error', reject);
          socket.once('close', () => closed++);
          sockets.push(socket);
        }),
    ),
  );
  return { opened, closed: () => closed };
}

/**
 * `count` connections to `port`, each answered once (so the gateway has accepted every one) and then
 * idle, kept alive for 5 s.
 */
async function answeredConnections(port: number, count: number): Promise<Socket[]> {
  const { opened } = await silentConnections(port, count);
  await Promise.all(
    opened.map(
      (socket) =>
        new Promise((resolve) => {
          socket.once('data', resolve);
          socket.write('GET /v2/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        }),
    ),
  );
  return opened;
}

const refusals = (events: readonly GatewayHostEvent[]) =>
  events.filter((event) => event.type === 'route_failed' && event.errorClass === 'ConnectionLimitError');

/** One request on a fresh connection; its status. */
async function status(port: number, path = '/v2/x'): Promise<number> {
  const client = await RawConnection.open(port);
  client.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  return Number((await client.untilClosed()).slice(9, 12));
}

describe('connection caps', () => {
  it(`closes a route's connection past ${String(CONNECTION_LIMITS.perRoute)} at once and records it once`, async () => {
    const { ports, events } = await openHost(['llm']);
    const port = ports[0] ?? 0;
    const extra = 40;
    const flood = await silentConnections(port, CONNECTION_LIMITS.perRoute + extra);
    // Exactly the connections past the cap are closed, long before any time-out.
    await expect.poll(flood.closed, POLL).toBe(extra);
    expect(refusals(events)).toEqual([
      { type: 'route_failed', route: 'llm', errorClass: 'ConnectionLimitError' },
    ]);
    // The held ones are served; a new one gets a place as soon as one closes.
    const held = flood.opened.filter((socket) => !socket.destroyed);
    expect(held).toHaveLength(CONNECTION_LIMITS.perRoute);
    const first = held[0];
    const answered = new Promise<string>((resolve) => first?.once('data', (data) => resolve(String(data))));
    first?.write('GET /v2/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect((await answered).slice(9, 12)).toBe('403');
    const refusedNow = await silentConnections(port, 1);
    await expect.poll(refusedNow.closed, POLL).toBe(1);
    first?.destroy();
    await expect.poll(async () => status(port), POLL).toBe(403);
  });

  it(`closes connections past ${String(CONNECTION_LIMITS.perHost)} over all routes of the host`, async () => {
    const { ports, events } = await openHost(['a', 'b', 'c']);
    const [a = 0, b = 0, c = 0] = ports;
    const perRoute = CONNECTION_LIMITS.perRoute;
    const fillA = await answeredConnections(a, perRoute);
    const fillB = await answeredConnections(b, CONNECTION_LIMITS.perHost - perRoute);
    const onC = await silentConnections(c, 5);
    await expect.poll(onC.closed, POLL).toBe(5);
    expect([...fillA, ...fillB].filter((socket) => socket.destroyed)).toHaveLength(0);
    expect(refusals(events).map((event) => event.route)).toEqual(['c']);
    // A place freed on any route is one route c can use.
    for (const socket of fillA.slice(0, 2)) socket.destroy();
    await expect.poll(async () => status(c), POLL).toBe(403);
  });
});

describe('request heads on time', () => {
  it('answers 408 and closes a silent connection and one that dribbles its head, and serves on', async () => {
    const { ports } = await openHost(['llm'], {
      connectionLimits: { requestHeadTimeoutMs: 300, checkIntervalMs: 50 },
    });
    const port = ports[0] ?? 0;
    const silent = await RawConnection.open(port);
    const dribbling = await RawConnection.open(port);
    dribbling.write('GET /v1/x HTTP/1.1\r\n');
    const drip = setInterval(() => dribbling.write('X-Slow: 1\r\n'), 50);
    try {
      for (const client of [silent, dribbling]) {
        expect(await client.untilClosed()).toMatch(/^HTTP\/1\.1 408 /);
      }
    } finally {
      clearInterval(drip);
    }
    expect(await status(port)).toBe(403);
  });
});

const statusesOf = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);

describe('pipelined requests', () => {
  it('serves requests pipelined behind one in flight, in order, up to the cap', async () => {
    const { ports } = await openHost(['llm'], { lookupDelayMs: 200 });
    const client = await RawConnection.open(ports[0] ?? 0);
    const count = CONNECTION_LIMITS.pipelined + 1; // one in flight, the rest waiting
    const requests = Array.from({ length: count }, (_, i) =>
      i === 0
        ? 'GET /v1/slow HTTP/1.1\r\nHost: a\r\n\r\n'
        : `GET /v2/${String(i)} HTTP/1.1\r\nHost: a\r\n\r\n`,
    );
    client.write(requests.join(''));
    const received = await client.until((text) => statusesOf(text).length === count);
    const statuses = statusesOf(received);
    expect(statuses).toEqual(['502', ...Array<string>(count - 1).fill('403')]);
    client.destroy();
  });

  it('cuts a connection that pipelines more behind one in flight than it may hold', async () => {
    const { ports, events } = await openHost(['llm'], { lookupDelayMs: 1_000 });
    const client = await RawConnection.open(ports[0] ?? 0);
    client.write(
      'GET /v1/slow HTTP/1.1\r\nHost: a\r\n\r\n' + 'GET /v2/x HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(2_000),
    );
    expect(await client.untilClosed()).toBe('');
    // Only the request in flight was handled; none of the queued ones started.
    expect(events.filter((event) => event.type === 'request')).toHaveLength(1);
  });

  it(`cuts a connection past ${String(CONNECTION_LIMITS.pipelinedPerHost)} waiting requests over the host`, async () => {
    // Long enough for every connection below to be open with its first request still in flight.
    const { ports, events } = await openHost(['llm'], { lookupDelayMs: 3_000 });
    const port = ports[0] ?? 0;
    const waiting = CONNECTION_LIMITS.pipelined - 1;
    const burst =
      'GET /v1/slow HTTP/1.1\r\nHost: a\r\n\r\n' + 'GET /v2/x HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(waiting);
    const full = Math.floor(CONNECTION_LIMITS.pipelinedPerHost / waiting);
    const clients: RawConnection[] = [];
    for (let i = 0; i < full; i++) {
      const client = await RawConnection.open(port);
      clients.push(client);
      client.write(burst);
      // Its first request started, so every request of the same write is parsed (and waiting).
      await expect.poll(() => events.filter((event) => event.type === 'request').length, POLL).toBe(i + 1);
    }
    const over = await RawConnection.open(port);
    over.write(burst);
    expect(await over.untilClosed()).toBe('');
    for (const client of clients) {
      const received = await client.until((text) => statusesOf(text).length === waiting + 1);
      expect(statusesOf(received)).toEqual(['502', ...Array<string>(waiting).fill('403')]);
    }
  });
});
