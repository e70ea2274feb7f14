import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { useGatewayWorld } from '../support/gateway-world.js';

const world = useGatewayWorld(0);
const KEY = 'sk-test-value-0123456789';

async function open(value = KEY) {
  const host = world.host();
  const outcome = await host.apply({ llm: world.route(value) });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  const status = host.status().get('llm');
  if (status === undefined) throw new Error('no route');
  return { host, url: status.url };
}

describe('forwarding', () => {
  it('injects the configured value and forwards method, path and query as received', async () => {
    const { url } = await open();
    const res = await request(`${url}/echo?b=2&a=%20x`, { method: 'POST', body: 'hello' });
    expect(res.statusCode).toBe(200);
    const echoed = (await res.body.json()) as { method: string; target: string; headers: string[] };
    expect(echoed.method).toBe('POST');
    expect(echoed.target).toBe('/echo?b=2&a=%20x');
    expect(echoed.headers).toContain(KEY);
  });
});
