import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { GatewayHost } from '../../../gateway/index.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';
import { connectionRefused } from '../../support/loopback.js';

const world = useGatewayWorld(2);
const OLD = 'sk-old-value-aaaaaaaa';
const NEW = 'sk-new-value-bbbbbbbb';

function portOf(host: GatewayHost, route = 'llm'): number {
  const port = host.status().get(route)?.port;
  if (port === undefined) throw new Error(`route ${route} is not open`);
  return port;
}

async function configured(value: string): Promise<GatewayHost> {
  const host = world.host();
  const outcome = await host.apply({ llm: world.route(value) });
  expect(outcome.ok).toBe(true);
  return host;
}

/** The body of the last complete /echo response in `text` (content-length framed JSON). */
function lastEcho(text: string): { target: string; headers: string[] } {
  const start = text.lastIndexOf('{"method"');
  return JSON.parse(text.slice(start)) as { target: string; headers: string[] };
}

const echoRequest = (target: string): string => `GET ${target} HTTP/1.1\r\nHost: gw\r\n\r\n`;
const responseCount = (text: string): number => text.split('HTTP/1.1 ').length - 1;

describe('refresh', () => {
  it('keeps the port and uses the new value for the next request on an open keep-alive connection', async () => {
    const host = await configured(OLD);
    const port = portOf(host);
    const client = await RawConnection.open(port);
    client.write(echoRequest('/echo?n=1'));
    await client.until((text) => text.includes('"target":"/echo?n=1"') && text.endsWith('}'));
    expect(lastEcho(client.received).headers).toContain(OLD);

    const outcome = await host.apply({ llm: world.route(NEW) });
    expect(outcome.ok && outcome.status.get('llm')?.port).toBe(port);

    client.write(echoRequest('/echo?n=2'));
    await client.until((text) => text.includes('"target":"/echo?n=2"') && text.endsWith('}'));
    expect(client.closed).toBe(false);
    expect(lastEcho(client.received).headers).toContain(NEW);
    expect(lastEcho(client.received).headers).not.toContain(OLD);
    client.destroy();
  });

  it('leaves a streaming response running, and redacts both the old and the new value meanwhile', async () => {
    const host = await configured(OLD);
    const url = host.status().get('llm')?.url ?? '';
    const stream = await request(`${url}/sse`);
    const events = stream.body[Symbol.asyncIterator]();
    await events.next();

    expect((await host.apply({ llm: world.route(NEW) })).ok).toBe(true);
    await world.upstream.tick();
    expect(String(((await events.next()) as { value: Buffer }).value)).toMatch(/^data: \d+/);

    const echo = await request(`${url}/echo-headers`, {
      headers: { 'x-a': `old=${OLD}`, 'x-b': `new=${NEW}` },
    });
    await echo.body.dump();
    const returned = JSON.stringify([echo.headers, echo.trailers]);
    expect(returned).not.toContain(OLD);
    expect(returned).not.toContain(NEW);

    await world.upstream.endStreams();
    while ((await events.next()).done !== true);
  });
});

describe('removal', () => {
  it('stops accepting, closes idle connections at once, finishes the in-flight stream and never forwards the pipelined request', async () => {
    const host = await configured(OLD);
    const port = portOf(host);
    await world.upstream.reset();

    const busy = await RawConnection.open(port);
    busy.write(echoRequest('/sse') + echoRequest('/echo?pipelined'));
    await busy.until((text) => text.includes(': open'));

    const idle = await RawConnection.open(port);
    idle.write(echoRequest('/echo?idle'));
    await idle.until((text) => text.endsWith('}'));

    expect((await host.apply({})).ok).toBe(true);
    expect(host.status().size).toBe(0);
    await idle.untilClosed(2_000);
    expect(await connectionRefused(port)).toBe(true);

    await world.upstream.tick();
    await busy.until((text) => /data: \d+/.test(text));
    expect(busy.closed).toBe(false);
    await world.upstream.endStreams();
    const all = await busy.untilClosed();
    expect(all).toContain('data: end');
    expect(all.endsWith('0\r\n\r\n')).toBe(true); // the stream itself ended cleanly
    expect(responseCount(all)).toBe(1);
    expect(await world.upstream.requests()).toEqual(['GET /sse', 'GET /echo?idle']);
  });
});

describe('closing the host', () => {
  it('cuts streams still in flight, also on routes already removed', async () => {
    const host = await configured(OLD);
    const port = portOf(host);
    const removed = await RawConnection.open(port);
    removed.write(echoRequest('/sse'));
    await removed.until((text) => text.includes(': open'));
    expect((await host.apply({ other: world.route(NEW) })).ok).toBe(true);
    const live = await RawConnection.open(portOf(host, 'other'));
    live.write(echoRequest('/sse'));
    await live.until((text) => text.includes(': open'));

    await host.close();
    await removed.untilClosed();
    await live.untilClosed();
    expect(removed.received.endsWith('0\r\n\r\n')).toBe(false);
    expect(live.received.endsWith('0\r\n\r\n')).toBe(false);
    await expect.poll(() => world.upstream.streamCount()).toBe(0);
  });
});

describe('a refused configuration', () => {
  it('leaves the previous configuration in force and reports the failure class without the value', async () => {
    const host = await configured(OLD);
    const port = portOf(host);
    const bad = `${NEW}\r\nx-injected: 1`;
    const outcome = await host.apply({
      llm: world.route(NEW),
      extra: world.route(bad),
    });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failure).toMatchObject({
      errorClass: 'InvalidHeaderValueError',
      code: 'configuration_rejected',
    });
    expect(JSON.stringify(outcome)).not.toContain(NEW);
    expect(host.status().get('llm')).toEqual({
      port,
      url: `http://127.0.0.1:${String(port)}`,
      lastErrorClass: 'InvalidHeaderValueError',
    });
    expect(host.status().has('extra')).toBe(false);

    const res = await request(`http://127.0.0.1:${String(port)}/echo`);
    expect(((await res.body.json()) as { headers: string[] }).headers).toContain(OLD);

    expect((await host.apply({ llm: world.route(NEW) })).ok).toBe(true);
    expect(host.status().get('llm')?.lastErrorClass).toBeUndefined();
  });
});
