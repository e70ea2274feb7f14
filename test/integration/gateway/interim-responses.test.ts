/**
 * Issue 9: an upstream's 1xx interim responses (DESIGN.md §5: not relayed). undici 7 destroys the
 * connection on any `100 Continue` (the gateway never sends `Expect`), which turned a good answer into
 * a 502; the final response and its body must reach the client unchanged, and no interim at all.
 */
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { HI_SHA256, rawJsonBody } from '../support/body-forms.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';

const world = useGatewayWorld(8);

async function openRoute(): Promise<string> {
  const host = world.host();
  const outcome = await host.apply({ llm: world.route('sk-interim-12345678') });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  return outcome.status.get('llm')?.url ?? '';
}

/** A raw POST of `hi` to `target`, read to the close. */
async function rawPost(url: string, target: string): Promise<string> {
  const client = await RawConnection.open(Number(new URL(url).port));
  client.write(`POST ${target} HTTP/1.1\r\nHost: gw\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi`);
  return client.untilClosed();
}

describe('upstream interim responses', () => {
  it.each([
    ['100 Continue', '100'],
    ['103 Early Hints', '103'],
    ['100 then 103', '100,103'],
    ['103 then 100', '103,100'],
    ['102, 100 and 103, each in two pieces', '102,100,103&split=1'],
  ])('%s then 200: the client gets the 200 and its body, and no interim', async (_, codes) => {
    const url = await openRoute();
    const received = await rawPost(url, `/interim?codes=${codes}`);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).not.toMatch(/HTTP\/1\.1 1\d\d/);
    expect(received.toLowerCase()).not.toContain('link:');
    expect(rawJsonBody(received)).toMatchObject({ method: 'POST', bytes: 2, sha256: HI_SHA256 });
  });

  it('a client that sent Expect: 100-continue gets the gateway’s own 100 once, then the 200', async () => {
    const url = await openRoute();
    const client = await RawConnection.open(Number(new URL(url).port));
    client.write(
      'POST /interim?codes=100 HTTP/1.1\r\nHost: gw\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n',
    );
    await client.until((text) => text.includes('\r\n\r\n'));
    expect(client.received).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    client.write('hi');
    const received = await client.untilClosed();
    expect(received.match(/HTTP\/1\.1 100 /g)).toHaveLength(1);
    const final = received.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
    expect(final).toMatch(/^HTTP\/1\.1 200 /);
    expect(rawJsonBody(final)).toMatchObject({ bytes: 2, sha256: HI_SHA256 });
  });

  it('keeps working on a reused upstream connection, before and after plain answers', async () => {
    const url = await openRoute();
    const client = new Agent();
    const ports = new Set<unknown>();
    for (const path of ['/interim?codes=100', '/echo', '/interim?codes=103,100', '/echo', '/interim']) {
      const res = await client.request({ origin: url, path, method: 'POST', body: 'hi' });
      expect({ path, status: res.statusCode }).toEqual({ path, status: 200 });
      const echo = (await res.body.json()) as { peerPort: unknown };
      expect(echo).toMatchObject({ bytes: 2, sha256: HI_SHA256 });
      ports.add(echo.peerPort);
    }
    expect(ports.size).toBe(1); // one upstream connection carried all five
    await client.close();
  });

  it('relays a final response that carries interim-looking text unchanged', async () => {
    const url = await openRoute();
    // `/echo` answers with the request's raw headers, so its body can hold such text.
    const echoed = await request(`${url}/echo`, {
      method: 'POST',
      body: 'hi',
      headers: { 'x-text': 'HTTP/1.1 100 Continue' },
    });
    expect(echoed.statusCode).toBe(200);
    expect(JSON.stringify(await echoed.body.json())).toContain('HTTP/1.1 100 Continue');
  });
});
