/**
 * Issue 9 at the daemon: one request through a gateway route used to end sandboxd. After each raw form
 * the daemon is still running, answers `/v1/health`, its route still serves, and it reported no fault.
 */
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { RouteConfiguration } from '../../../gateway/index.js';
import { BODY_FORMS, HI_SHA256, rawJsonBody } from '../support/body-forms.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';
import { useSandboxd } from '../support/sandboxd-hooks.js';

const world = useGatewayWorld(9);
const daemon = useSandboxd({ gatewayCa: () => world.pki.caPem });
const VALUE = 'sk-resilience-value-0123456789';

/** ConfigureSandbox with `routes`; the ports of the routes. */
async function configure(routes: Record<string, RouteConfiguration>): Promise<Record<string, number>> {
  const res = await request(`${daemon.url}/v1/gateways`, {
    method: 'POST',
    headers: { authorization: `Bearer ${daemon.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ routes }),
  });
  expect(res.statusCode).toBe(200);
  const state = (await res.body.json()) as { routes: Record<string, { port: number }> };
  return Object.fromEntries(Object.entries(state.routes).map(([name, route]) => [name, route.port]));
}

/** The daemon process is alive, healthy, and wrote no fault line. */
async function expectDaemonServing(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1_200)); // past the listener's closing timers
  expect(daemon.running()).toBe(true);
  const health = await request(`${daemon.url}/v1/health`);
  expect(health.statusCode).toBe(200);
  expect(await health.body.json()).toMatchObject({ ok: true });
  expect(daemon.stderr()).not.toContain('"fault"');
}

describe('sandboxd with a gateway route', () => {
  it.each(BODY_FORMS)('%s body: answered, and the daemon keeps serving', async (_, raw) => {
    const { llm = 0 } = await configure({ llm: world.route(VALUE, { allow: [['POST', '/v1/*']] }) });
    const client = await RawConnection.open(llm);
    client.write(raw);
    const received = await client.untilClosed();
    expect(received).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(rawJsonBody(received)).toMatchObject({ target: '/v1/cc', bytes: 2, sha256: HI_SHA256 });
    await expectDaemonServing();
    const again = await request(`http://127.0.0.1:${String(llm)}/v1/cc`, { method: 'POST', body: 'hi' });
    expect(again.statusCode).toBe(200);
    await again.body.dump();
  });

  it('a route removed while a request with a body is in flight: it finishes, the daemon keeps serving', async () => {
    const { llm = 0 } = await configure({ llm: world.route(VALUE) });
    const client = await RawConnection.open(llm);
    client.write('POST /sse HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\nhi');
    await client.until((text) => text.includes(': open'));
    expect(await configure({})).toEqual({});
    await world.upstream.endStreams();
    expect(await client.untilClosed()).toContain('data: end');
    await expectDaemonServing();
  });

  it('an upstream 100 Continue then 200: the client gets the 200', async () => {
    const { llm = 0 } = await configure({ llm: world.route(VALUE) });
    const res = await request(`http://127.0.0.1:${String(llm)}/interim?codes=100`, {
      method: 'POST',
      body: 'hi',
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toMatchObject({ bytes: 2, sha256: HI_SHA256 });
    await expectDaemonServing();
  });
});
