/**
 * One `response` event per request a route handled, once its response is over: the path without its
 * query (cut to `MAX_RECORD_TEXT`), the status the sandbox saw (0 when its connection was cut before a
 * head), the latency and exactly the bytes the client received; never a header value or the query. No
 * upstream is reachable here: admitted requests fail at the (stub) resolver, so every status is the
 * gateway's own (the forwarded 200s are in test/integration/gateway/response-events.test.ts).
 */
import type { LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayHost, type GatewayHostEvent } from '../../../gateway/index.js';
import { MAX_RECORD_TEXT } from '../../../protocol/daemon-events.js';
import { RawConnection } from '../../integration/support/raw-http.js';

const SECRET = 'sk-planted-response-secret-0123456789';
const HEADER_VALUE = 'distinctive-header-value-4242';
const QUERY = 'distinctive-query-value-4343';

type Response = Extract<GatewayHostEvent, { type: 'response' }>;

/** A resolver that fails every name after `delayMs`: admitted requests end as 502 upstream_error. */
const failingLookup =
  (delayMs = 0): LookupFunction =>
  (_host, _options, callback) => {
    setTimeout(
      () => callback(Object.assign(new Error('no such name'), { code: 'ENOTFOUND' }), '', 4),
      delayMs,
    );
  };

const hosts: GatewayHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

/** A host with route `llm` (POST and GET under /v1/), collecting its response events. */
async function openRoute(options: { ratePerMinute?: number; lookupDelayMs?: number } = {}) {
  const host = new GatewayHost({ lookup: failingLookup(options.lookupDelayMs) });
  hosts.push(host);
  const events: GatewayHostEvent[] = [];
  host.events$.subscribe((event) => events.push(event));
  const outcome = await host.apply({
    llm: {
      upstream: 'https://api.vendor.example',
      headers: { 'x-api-key': SECRET },
      allow: [
        ['POST', '/v1/*'],
        ['GET', '/v1/*'],
      ],
      ...(options.ratePerMinute === undefined ? {} : { ratePerMinute: options.ratePerMinute }),
    },
  });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  const port = host.status().get('llm')?.port ?? 0;
  const responses = (): Response[] => events.filter((e): e is Response => e.type === 'response');
  return { port, events, responses };
}

/** Sends `head` lines (plus Host) on a fresh connection and returns all it received until the close. */
async function exchange(port: number, lines: readonly string[]): Promise<string> {
  const client = await RawConnection.open(port);
  client.write([...lines, 'Host: 127.0.0.1', 'Connection: close', '', ''].join('\r\n'));
  return client.untilClosed();
}

const statusOf = (raw: string): number => Number(raw.slice(9, 12));

describe("a route's response events", () => {
  it('reports a rejected request: status, path without its query, exact bytes, latency, no header value', async () => {
    const { port, responses } = await openRoute();
    const raw = await exchange(port, [`GET /v2/models?key=${QUERY} HTTP/1.1`, `X-Note: ${HEADER_VALUE}`]);
    expect(statusOf(raw)).toBe(403);
    await expect.poll(() => responses().length).toBe(1);
    const [event] = responses();
    expect(event).toMatchObject({ route: 'llm', method: 'GET', path: '/v2/models', status: 403 });
    expect(event?.bytes).toBeGreaterThan(0);
    expect(event?.bytes).toBe(raw.length);
    expect(event?.latencyMs).toBeGreaterThanOrEqual(0);
    const text = JSON.stringify(responses());
    for (const hidden of [QUERY, HEADER_VALUE, SECRET, 'key=']) expect(text).not.toContain(hidden);
  });

  it('reports every rejection class with the status the sandbox saw', async () => {
    const { port, responses } = await openRoute({ ratePerMinute: 1 });
    const sent: [string, number][] = [];
    for (const target of ['/v1/%2e%2e/secret', '/v1/ok', '/v1/again', '/elsewhere']) {
      sent.push([target, statusOf(await exchange(port, [`GET ${target}?q=${QUERY} HTTP/1.1`]))]);
    }
    // Not origin-form: refused before any rule, and never recorded (it may carry credentials).
    const absolute = await exchange(port, [`GET http://user:${SECRET}@api.vendor.example/v1/x HTTP/1.1`]);
    // One token: the first admitted request fails at the resolver (502), the next is rate limited.
    expect(sent.map(([, status]) => status)).toEqual([403, 502, 429, 403]);
    expect(statusOf(absolute)).toBe(400);
    await expect.poll(() => responses().length).toBe(5);
    expect(responses().map(({ path, status }) => ({ path, status }))).toEqual([
      { path: '/v1/%2e%2e/secret', status: 403 },
      { path: '/v1/ok', status: 502 },
      { path: '/v1/again', status: 429 },
      { path: '/elsewhere', status: 403 },
      { path: '', status: 400 },
    ]);
    expect(JSON.stringify(responses())).not.toContain(SECRET);
    expect(JSON.stringify(responses())).not.toContain(QUERY);
  });

  it('cuts a long path to MAX_RECORD_TEXT characters ending with …', async () => {
    const { port, responses } = await openRoute();
    const long = `/v2/${'a'.repeat(2 * MAX_RECORD_TEXT)}`;
    await exchange(port, [`GET ${long}?q=${QUERY} HTTP/1.1`]);
    await expect.poll(() => responses().length).toBe(1);
    const path = responses()[0]?.path ?? '';
    expect(path).toHaveLength(MAX_RECORD_TEXT);
    expect(path).toBe(`${long.slice(0, MAX_RECORD_TEXT - 1)}…`);
    // A path of exactly the limit is kept whole.
    const exact = `/v2/${'b'.repeat(MAX_RECORD_TEXT - 4)}`;
    await exchange(port, [`GET ${exact} HTTP/1.1`]);
    await expect.poll(() => responses().length).toBe(2);
    expect(responses()[1]?.path).toBe(exact);
  });

  it('counts each pipelined response on one connection exactly', async () => {
    const { port, responses } = await openRoute();
    const client = await RawConnection.open(port);
    client.write(
      [
        'GET /v2/first HTTP/1.1',
        'Host: 127.0.0.1',
        '',
        'GET /v2/second-and-longer HTTP/1.1',
        'Host: 127.0.0.1',
        'Connection: close',
        '',
        '',
      ].join('\r\n'),
    );
    const raw = await client.untilClosed();
    await expect.poll(() => responses().length).toBe(2);
    const split = raw.indexOf('HTTP/1.1', 1);
    expect(responses().map((e) => [e.path, e.bytes])).toEqual([
      ['/v2/first', split],
      ['/v2/second-and-longer', raw.length - split],
    ]);
  });

  it('reports status 0 and no bytes when the client goes before any response head', async () => {
    const { port, events, responses } = await openRoute({ lookupDelayMs: 500 });
    const client = await RawConnection.open(port);
    client.write('POST /v1/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n');
    await expect.poll(() => events.some((e) => e.type === 'request')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    client.destroy();
    await expect.poll(() => responses().length).toBe(1);
    expect(responses()[0]).toMatchObject({ method: 'POST', path: '/v1/chat', status: 0, bytes: 0 });
    expect(responses()[0]?.latencyMs).toBeGreaterThanOrEqual(40);
  });

  it('reports the request at its start and the response once it is over', async () => {
    const { port, events } = await openRoute();
    await exchange(port, ['GET /v2/x HTTP/1.1']);
    await expect.poll(() => events.filter((e) => e.type === 'response').length).toBe(1);
    expect(events.map((e) => e.type)).toEqual(['route_opened', 'request', 'response']);
  });
});
