import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { GatewayHostOptions, RouteConfiguration } from '../../../gateway/index.js';
import { UPSTREAM_NAME, useGatewayWorld } from '../support/gateway-world.js';
import { countSyns, type SynCounter } from '../support/syn-counter.js';

const world = useGatewayWorld(3);
const DROPPED_PORT = 8445;

async function call(route: RouteConfiguration, path: string, options: GatewayHostOptions = {}) {
  const host = world.host(options);
  const outcome = await host.apply({ llm: route });
  if (!outcome.ok) throw new Error(outcome.failure.message);
  return request(`${host.status().get('llm')?.url ?? ''}${path}`);
}

async function expectRejection(res: Awaited<ReturnType<typeof request>>, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(await res.body.json()).toEqual({ code });
}

/** A resolver answering every name with `answers()` (called once per lookup). */
function stubResolver(answers: () => readonly string[]): LookupFunction {
  return ((_host: string, options: LookupOptions, callback: (...args: unknown[]) => void) => {
    const list: LookupAddress[] = answers().map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    if (options.all === true) callback(null, list);
    else callback(null, list[0]?.address, list[0]?.family);
  }) as LookupFunction;
}

describe('upstream failures', () => {
  beforeAll(() => {
    world.network.nftInNamespace(`table inet sdkt_drop {
  chain input { type filter hook input priority 0; policy accept; tcp dport ${String(DROPPED_PORT)} drop; }
}`);
  });

  it('answers 504 upstream_timeout when the connect is not accepted in time', async () => {
    const upstream = `https://${world.network.nsAddress}:${String(DROPPED_PORT)}`;
    await expectRejection(
      await call(world.route('k-12345678', { upstream }), '/echo', { connectTimeoutMs: 300 }),
      504,
      'upstream_timeout',
    );
  });

  it('answers 504 upstream_timeout when no response headers arrive in time', async () => {
    await expectRejection(
      await call(world.route('k-12345678'), '/hang', { headersTimeoutMs: 300 }),
      504,
      'upstream_timeout',
    );
  });

  it('answers 502 upstream_error when the upstream certificate is not trusted', async () => {
    const route = world.route('k-12345678', { upstream: world.upstream.untrustedOrigin });
    await expectRejection(await call(route, '/echo'), 502, 'upstream_error');
  });

  it('answers 502 upstream_error for a response that is not HTTP', async () => {
    await expectRejection(await call(world.route('k-12345678'), '/malformed'), 502, 'upstream_error');
  });

  it('cuts a response already started instead of ending it cleanly', async () => {
    const res = await call(world.route('k-12345678'), '/cut');
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
  });

  it('returns a redirect unchanged and never follows it', async () => {
    await world.upstream.reset();
    const res = await call(world.route('k-12345678'), '/redirect');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/echo?redirected');
    await res.body.dump();
    expect(await world.upstream.requests()).toEqual(['GET /redirect']);
  });
});

const REFUSED = [
  '127.0.0.1',
  '127.1.2.3',
  '0.0.0.0',
  '169.254.169.254',
  '169.254.7.7',
  '224.0.0.1',
  '255.255.255.255',
  '100.100.100.200',
  '::1',
  '::',
  'fe80::1',
  'ff02::1',
  'fd00:ec2::254',
  '::ffff:127.0.0.1',
  '::ffff:169.254.169.254',
  '::127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b:1::a9fe:a9fe',
  '2002:7f00:1::1',
];

describe('addresses the connector refuses', () => {
  let syns: SynCounter;
  beforeAll(() => {
    syns = countSyns(world.upstream.port);
  });
  afterAll(() => syns.remove());

  const byName = (): RouteConfiguration =>
    world.route('k-12345678', { upstream: `https://${UPSTREAM_NAME}:${String(world.upstream.port)}` });

  it.each(REFUSED)('refuses a DNS answer of %s with 502 and sends no SYN', async (address) => {
    const before = syns.count();
    const res = await call(byName(), '/echo', { lookup: stubResolver(() => [address]) });
    await expectRejection(res, 502, 'upstream_error');
    expect(syns.count()).toBe(before);
  });

  it('uses only the allowed addresses of a mixed answer', async () => {
    const before = syns.count();
    const lookup = stubResolver(() => ['127.0.0.1', world.network.nsAddress, '169.254.169.254']);
    const res = await call(byName(), '/echo', { lookup });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(syns.count()).toBe(before);
  });

  it('refuses an answer that changes to loopback on a later lookup (rebinding)', async () => {
    const before = syns.count();
    let lookups = 0;
    const lookup = stubResolver(() => (++lookups === 1 ? [world.network.nsAddress] : ['127.0.0.1']));
    const host = world.host({ lookup });
    expect((await host.apply({ llm: byName() })).ok).toBe(true);
    const url = host.status().get('llm')?.url ?? '';
    const first = await request(`${url}/close`);
    expect(first.statusCode).toBe(200);
    await first.body.dump();
    await expectRejection(await request(`${url}/echo`), 502, 'upstream_error');
    expect(lookups).toBe(2);
    expect(syns.count()).toBe(before);
  });

  it('refuses a configured metadata address even in a private range', async () => {
    await world.upstream.reset();
    const res = await call(world.route('k-12345678'), '/echo', {
      metadataAddresses: [world.network.nsAddress],
    });
    await expectRejection(res, 502, 'upstream_error');
    expect(await world.upstream.requests()).toEqual([]);
  });
});
