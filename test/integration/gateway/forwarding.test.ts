import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';

const world = useGatewayWorld(0);
const KEY = 'sk-test-value-0123456789';

async function openRoute(overrides: Parameters<typeof world.route>[1] = {}) {
  const host = world.host();
  const outcome = await host.apply({ llm: world.route(KEY, overrides) });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  const url = host.status().get('llm')?.url;
  if (url === undefined) throw new Error('no route');
  return { host, url };
}

interface Echo {
  method: string;
  target: string;
  headers: string[];
  bytes: number;
}

function headerValues(raw: readonly string[], name: string): string[] {
  return raw.flatMap((value, i) => (i % 2 === 1 && raw[i - 1]?.toLowerCase() === name ? [value] : []));
}

describe('a request the route admits', () => {
  it('reaches the upstream with the injected value, method, path and query exactly as received', async () => {
    const { url } = await openRoute();
    const res = await request(`${url}/echo?b=2&a=%20x&c=/../`, { method: 'PUT', body: 'hello' });
    expect(res.statusCode).toBe(200);
    const echo = (await res.body.json()) as Echo;
    expect(echo).toMatchObject({ method: 'PUT', target: '/echo?b=2&a=%20x&c=/../', bytes: 5 });
    expect(headerValues(echo.headers, 'x-api-key')).toEqual([KEY]);
  });

  it('drops every incoming header named like the configured one, whatever its spelling, and what Connection nominates', async () => {
    const { url } = await openRoute();
    const client = await RawConnection.open(Number(new URL(url).port));
    client.write(
      [
        'GET /echo HTTP/1.1',
        'Host: 127.0.0.1',
        'X-API-KEY: mine-1',
        'x-api-key: mine-2',
        'X_Api_Key: mine-3',
        'x.api.key: mine-4',
        'Connection: x-hidden, close',
        'X-Hidden: nominated',
        'X-Kept: kept',
        '',
        '',
      ].join('\r\n'),
    );
    const response = await client.untilClosed();
    const echo = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as Echo;
    const sent = echo.headers.join('\n');
    for (const mine of ['mine-1', 'mine-2', 'mine-3', 'mine-4', 'nominated'])
      expect(sent).not.toContain(mine);
    expect(headerValues(echo.headers, 'x-api-key')).toEqual([KEY]);
    expect(headerValues(echo.headers, 'x-kept')).toEqual(['kept']);
    expect(headerValues(echo.headers, 'host')).toEqual([new URL(world.upstream.origin).host]);
  });

  it('never returns a response header or trailer that carries an injected value', async () => {
    const { url } = await openRoute();
    const res = await request(`${url}/echo-headers`, { headers: { 'x-note': `prefix ${KEY} suffix` } });
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toBe('echoed');
    const everything = JSON.stringify([res.headers, res.trailers]);
    expect(everything).not.toContain(KEY);
    expect(res.headers['x-plain']).toBe('kept');
    expect(res.headers['x-api-key']).toBeUndefined();
    // The other echoed headers (those without the value) do come back, in headers and trailers.
    expect(Object.keys(res.headers).filter((name) => name.startsWith('x-echo-')).length).toBeGreaterThan(0);
    expect(Object.keys(res.trailers).filter((name) => name.startsWith('x-echo-')).length).toBeGreaterThan(0);
  });

  it('aborts the upstream request when the client goes away', async () => {
    const { url } = await openRoute();
    const client = new Agent();
    const res = await request(`${url}/sse`, { dispatcher: client });
    expect(res.statusCode).toBe(200);
    await world.upstream.tick();
    res.body.destroy();
    await client.destroy();
    await expect.poll(async () => world.upstream.streamCount(), { timeout: 5_000 }).toBe(0);
  });
});

describe('a request the route refuses', () => {
  it('answers 403 for a bad path, 403 outside the allowlist, 429 over the rate, and never calls upstream', async () => {
    const { url } = await openRoute({ allow: [['POST', '/v1/*']], ratePerMinute: 1 });
    const client = new Agent();
    await world.upstream.reset();
    const cases: [string, string, number, string][] = [
      ['POST', '/v1/%2e%2e/admin', 403, 'path_forbidden'],
      ['POST', '/v1/a;b', 403, 'path_forbidden'],
      ['POST', '/v1//x', 403, 'path_forbidden'],
      ['GET', '/v1/models', 403, 'not_allowed'],
      ['POST', '/v1', 403, 'not_allowed'],
      ['POST', '/v2/x', 403, 'not_allowed'],
    ];
    for (const [method, path, status, code] of cases) {
      // Through the dispatcher API, so the client sends the path as written (a URL would normalize it).
      const res = await client.request({ origin: url, path, method, body: method === 'POST' ? '{}' : null });
      expect({ path, status: res.statusCode }).toEqual({ path, status });
      expect(await res.body.json()).toEqual({ code });
    }
    expect(await world.upstream.requests()).toEqual([]);
    const first = await request(`${url}/v1/echo`, { method: 'POST', body: '{}' });
    expect(first.statusCode).toBe(404); // reached the upstream, which has no /v1/echo
    await first.body.dump();
    const limited = await request(`${url}/v1/echo`, { method: 'POST', body: '{}' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(await limited.body.json()).toEqual({ code: 'rate_limited' });
    expect(await world.upstream.requests()).toEqual(['POST /v1/echo']);
    await client.close();
  });

  it('admits nothing when the route has no allow rules', async () => {
    const { url } = await openRoute({ allow: [] });
    await world.upstream.reset();
    for (const [method, path] of [
      ['GET', '/'],
      ['POST', '/v1/messages'],
    ] as const) {
      const res = await request(`${url}${path}`, { method, body: method === 'POST' ? '{}' : null });
      expect(res.statusCode).toBe(403);
      expect(await res.body.json()).toEqual({ code: 'not_allowed' });
    }
    expect(await world.upstream.requests()).toEqual([]);
  });
});
