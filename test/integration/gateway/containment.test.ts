/**
 * Issue 9: no request ends the process hosting the gateway. undici sets a forwarded body's
 * `IncomingMessage.socket` to null once it has sent it, so reading `req.socket` afterwards used to throw
 * outside any request; and a fault while handling one request is that request's alone.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import type { GatewayHost } from '../../../gateway/index.js';
import { BODY_FORMS, HI_SHA256, rawJsonBody } from '../support/body-forms.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';

const world = useGatewayWorld(7);

/** Uncaught faults of this process while a test runs; the host must never cause one. */
const faults: unknown[] = [];
const record = (error: unknown): void => void faults.push(error);
beforeAll(() => {
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
});
afterAll(() => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
});
afterEach(() => {
  faults.length = 0;
});

/** Lets timers the listener set on the way out (closing, draining) run. */
const settle = (ms = 1_200): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function openRoute(host: GatewayHost, name = 'llm'): Promise<number> {
  const outcome = await host.apply({
    [name]: world.route('sk-bodies-12345678', { allow: [['POST', '/v1/*']] }),
  });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  return outcome.status.get(name)?.port ?? 0;
}

async function expectServes(port: number): Promise<void> {
  const res = await request(`http://127.0.0.1:${String(port)}/v1/cc`, { method: 'POST', body: 'hi' });
  expect(res.statusCode).toBe(200);
  expect(await res.body.json()).toMatchObject({ method: 'POST', target: '/v1/cc', bytes: 2 });
}

describe('a forwarded request with a body', () => {
  it.each(BODY_FORMS)('%s: answered, then the listener still serves and nothing escapes', async (_, raw) => {
    const host = world.host();
    const port = await openRoute(host);
    const client = await RawConnection.open(port);
    client.write(raw);
    const received = await client.untilClosed();
    expect(received).toMatch(/^HTTP\/1\.[01] 200 /);
    expect(rawJsonBody(received)).toMatchObject({
      method: 'POST',
      target: '/v1/cc',
      bytes: 2,
      sha256: HI_SHA256,
    });
    await settle();
    await expectServes(port);
    expect(faults).toEqual([]);
  });

  it('a route removed while one is in flight finishes it and closes, and nothing escapes', async () => {
    const host = world.host();
    const outcome = await host.apply({ llm: world.route('sk-bodies-12345678') });
    const port = outcome.ok ? (outcome.status.get('llm')?.port ?? 0) : 0;
    const client = await RawConnection.open(port);
    // An event stream stays in flight until the upstream ends it, after the route is gone.
    client.write('POST /sse HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\nhi');
    await client.until((text) => text.includes(': open'));
    expect((await host.apply({})).ok).toBe(true);
    await world.upstream.endStreams();
    const received = await client.untilClosed();
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toContain('data: end');
    await settle();
    await expectServes(await openRoute(host, 'again'));
    expect(faults).toEqual([]);
  });

  it('an upload cut short by an upstream failure answers 502, and nothing escapes the drain', async () => {
    const host = world.host();
    const outcome = await host.apply({ llm: world.route('sk-bodies-12345678') });
    const port = outcome.ok ? (outcome.status.get('llm')?.port ?? 0) : 0;
    const client = await RawConnection.open(port);
    // The upstream answers with bytes that are not HTTP while 8 of the 10 promised bytes are missing.
    client.write('POST /malformed HTTP/1.1\r\nHost: gw\r\nContent-Length: 10\r\n\r\nhi');
    const received = await client.until((text) => text.includes('upstream_error'));
    expect(received).toMatch(/^HTTP\/1\.1 502 /);
    await settle(2_500); // past the bounded drain of a refused request's body
    client.destroy();
    await expectServes(await openRoute(host, 'again'));
    expect(faults).toEqual([]);
  });
});

describe('a fault while handling a request', () => {
  it('answers that request 502 and the listener goes on serving the same connection', async () => {
    // The host's clock is caller-supplied; one that throws faults the rate check of each request.
    let broken = false;
    const now = (): number => {
      if (broken) throw new Error('clock failed');
      return performance.now();
    };
    const host = world.host({ now });
    const port = await openRoute(host);
    const client = new Agent({ headersTimeout: 5_000 });
    const origin = `http://127.0.0.1:${String(port)}`;
    broken = true;
    const failed = await client.request({ origin, path: '/v1/cc', method: 'POST', body: 'hi' });
    expect(failed.statusCode).toBe(502);
    expect(await failed.body.json()).toEqual({ code: 'upstream_error' });
    broken = false;
    const next = await client.request({ origin, path: '/v1/cc', method: 'POST', body: 'hi' });
    expect(next.statusCode).toBe(200);
    expect(await next.body.json()).toMatchObject({ bytes: 2, sha256: HI_SHA256 });
    await client.close();
    expect(faults).toEqual([]);
  });
});
