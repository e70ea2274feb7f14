/**
 * The `response` event of a forwarded request: the upstream's status as the sandbox saw it, the path
 * without its query, and exactly the bytes the client read, streamed or cut; never a header value (the
 * client's or the injected one) or the query.
 */
import { describe, expect, it } from 'vitest';
import type { GatewayHostEvent } from '../../../gateway/index.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';

const world = useGatewayWorld(10);
const KEY = 'sk-response-events-value-0123456789';
const HEADER_VALUE = 'distinctive-header-value-6161';
const QUERY = 'distinctive-query-value-6262';

type Response = Extract<GatewayHostEvent, { type: 'response' }>;

async function openRoute() {
  const host = world.host();
  const events: GatewayHostEvent[] = [];
  host.events$.subscribe((event) => events.push(event));
  const outcome = await host.apply({ llm: world.route(KEY) });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  const port = host.status().get('llm')?.port ?? 0;
  const responses = (): Response[] => events.filter((e): e is Response => e.type === 'response');
  return { port, events, responses };
}

/** One request on a fresh connection; everything received until the gateway closes it. */
async function exchange(port: number, target: string, headers: readonly string[] = []): Promise<string> {
  const client = await RawConnection.open(port);
  client.write(
    [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, 'Connection: close', '', ''].join('\r\n'),
  );
  return client.untilClosed(20_000);
}

describe('the response event of a forwarded request', () => {
  it("carries the upstream's status, the path without its query and the bytes the client read", async () => {
    const { port, events, responses } = await openRoute();
    const raw = await exchange(port, `/echo?token=${QUERY}`, [`X-Note: ${HEADER_VALUE}`]);
    expect(raw.startsWith('HTTP/1.1 200')).toBe(true);
    // The upstream echoes the request headers in its body: the client sees them, the event never.
    expect(raw).toContain(HEADER_VALUE);
    await expect.poll(() => responses().length).toBe(1);
    const [event] = responses();
    expect(event).toMatchObject({ route: 'llm', method: 'GET', path: '/echo', status: 200 });
    expect(event?.bytes).toBe(raw.length);
    expect(event?.latencyMs).toBeGreaterThan(0);
    const text = JSON.stringify(events);
    for (const hidden of [HEADER_VALUE, QUERY, KEY, 'token=']) expect(text).not.toContain(hidden);
  });

  it('counts a streamed body of a megabyte, and an upstream status passed through', async () => {
    const { port, responses } = await openRoute();
    const big = await exchange(port, '/bytes?n=1048576');
    const missing = await exchange(port, '/no-such-page');
    expect(missing.startsWith('HTTP/1.1 404')).toBe(true);
    await expect.poll(() => responses().length).toBe(2);
    expect(responses().map(({ path, status, bytes }) => ({ path, status, bytes }))).toEqual([
      { path: '/bytes', status: 200, bytes: big.length },
      { path: '/no-such-page', status: 404, bytes: missing.length },
    ]);
    expect(big.length).toBeGreaterThan(1_048_576);
  });

  it('reports a response the upstream cut with the status already sent and the bytes that went out', async () => {
    const { port, responses } = await openRoute();
    const raw = await exchange(port, '/cut');
    expect(raw).toContain('partial');
    await expect.poll(() => responses().length).toBe(1);
    expect(responses()[0]).toMatchObject({ path: '/cut', status: 200, bytes: raw.length });
  });
});
