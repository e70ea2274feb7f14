/**
 * sandboxd's own event stream as the inspector reads it (`dist/daemon/main.js`): a route's opening with
 * its port and a refused configuration with its class; per gateway request a `gateway_request` at its
 * start and a `gateway_response` once it is over (path without the query, cut when long, the status the
 * sandbox saw, the bytes it read); never a header value, the injected value or the query.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { daemonEventSchema, MAX_RECORD_TEXT, type DaemonEvent } from '../../../protocol/daemon-events.js';
import { ndjsonValues } from '../../../protocol/ndjson.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';
import { useSandboxd } from '../support/sandboxd-hooks.js';

const world = useGatewayWorld(11);
const daemon = useSandboxd({ gatewayCa: () => world.pki.caPem });
const VALUE = 'sk-audit-records-value-0123456789';
const HEADER_VALUE = 'distinctive-header-value-7171';
const QUERY = 'distinctive-query-value-7272';

/** ConfigureSandbox; the answer's status and route ports. */
async function configure(value: string): Promise<{ status: number; ports: Record<string, number> }> {
  const res = await request(`${daemon.url}/v1/gateways`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ routes: { llm: world.route(value) } }),
  });
  const body = (await res.body.json()) as { routes?: Record<string, { port: number }> };
  const ports = Object.fromEntries(Object.entries(body.routes ?? {}).map(([name, r]) => [name, r.port]));
  return { status: res.statusCode, ports };
}

/** Every record the daemon holds now (read until the stream has nothing more for a moment). */
async function records(): Promise<DaemonEvent[]> {
  const controller = new AbortController();
  const res = await request(`${daemon.url}/v1/events?after=0`, {
    headers: { authorization: `Bearer ${daemon.token}` },
    signal: controller.signal,
  });
  const seen: DaemonEvent[] = [];
  const idle = (): NodeJS.Timeout => setTimeout(() => controller.abort(), 1_000);
  let timer = idle();
  try {
    for await (const value of ndjsonValues(res.body)) {
      seen.push(daemonEventSchema.parse(value));
      clearTimeout(timer);
      timer = idle();
    }
  } catch {
    // aborted once idle
  } finally {
    clearTimeout(timer);
  }
  return seen;
}

/** A raw request from the sandbox to the route; everything it received until the close. */
async function viaRoute(port: number, target: string): Promise<string> {
  const client = await RawConnection.open(port);
  client.write(
    [
      `GET ${target} HTTP/1.1`,
      'Host: 127.0.0.1',
      `X-Note: ${HEADER_VALUE}`,
      'Connection: close',
      '',
      '',
    ].join('\r\n'),
  );
  return client.untilClosed(20_000);
}

describe("sandboxd's records for the inspector", () => {
  it('records a route opened on its port and a refused configuration with its class', async () => {
    const { status, ports } = await configure(VALUE);
    expect(status).toBe(200);
    const refused = await configure(`${VALUE}\nx-evil: 1`);
    expect(refused.status).not.toBe(200);
    const routes = (await records()).flatMap((r) => (r.type === 'route' ? [r] : []));
    expect(routes.map(({ route, event, port, errorClass }) => ({ route, event, port, errorClass }))).toEqual([
      { route: 'llm', event: 'opened', port: ports.llm, errorClass: undefined },
      { route: 'llm', event: 'failed', port: undefined, errorClass: 'InvalidHeaderValueError' },
    ]);
  });

  it('records each gateway request at its start and its response once over, without values or query', async () => {
    const { ports } = await configure(VALUE);
    const port = ports.llm ?? 0;
    const ok = await viaRoute(port, `/echo?key=${QUERY}`);
    const long = `/${'p'.repeat(2 * MAX_RECORD_TEXT)}`;
    const missing = await viaRoute(port, `${long}?key=${QUERY}`);
    expect(ok.startsWith('HTTP/1.1 200')).toBe(true);
    expect(missing.startsWith('HTTP/1.1 404')).toBe(true);
    const all = await records();
    const gateway = all.filter((r) => r.type === 'gateway_request' || r.type === 'gateway_response');
    expect(gateway.map((r) => r.type)).toEqual([
      'gateway_request',
      'gateway_response',
      'gateway_request',
      'gateway_response',
    ]);
    const responses = gateway.flatMap((r) => (r.type === 'gateway_response' ? [r] : []));
    expect(
      responses.map(({ route, method, path, status, bytes }) => ({ route, method, path, status, bytes })),
    ).toEqual([
      { route: 'llm', method: 'GET', path: '/echo', status: 200, bytes: ok.length },
      {
        route: 'llm',
        method: 'GET',
        path: `${long.slice(0, MAX_RECORD_TEXT - 1)}…`,
        status: 404,
        bytes: missing.length,
      },
    ]);
    for (const r of responses) expect(r.latencyMs).toBeGreaterThanOrEqual(0);
    const text = JSON.stringify(all);
    for (const hidden of [HEADER_VALUE, QUERY, VALUE, 'key=']) expect(text).not.toContain(hidden);
  });
});
