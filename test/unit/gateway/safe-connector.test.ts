import type { LookupAddress } from 'node:dns';
import { createServer, type LookupFunction } from 'node:net';
import { describe, expect, it } from 'vitest';
import { upstreamFailureCode } from '../../../gateway/exchange.js';
import { guardLookup, RefusedAddressError, safeConnector } from '../../../gateway/safe-connector.js';

type Answer = string | LookupAddress[];

function lookupOnce(lookup: LookupFunction, all: boolean): Promise<{ error: Error | null; answer: Answer }> {
  return new Promise((resolve) => {
    lookup('upstream.test', { all }, (error, answer) => resolve({ error, answer }));
  });
}

const stub =
  (addresses: string[]): LookupFunction =>
  (_host, options, callback) => {
    const list = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all === true) callback(null, list);
    else callback(null, list[0]?.address ?? '', list[0]?.family ?? 4);
  };

describe('guarded lookup', () => {
  it('refuses a single answer of a refused class', async () => {
    const { error } = await lookupOnce(guardLookup(stub(['169.254.169.254'])), false);
    expect(error).toBeInstanceOf(RefusedAddressError);
    expect((error as RefusedAddressError).addressClass).toBe('metadata');
  });

  it('keeps only the allowed answers of a list, and refuses a list with none', async () => {
    const mixed = await lookupOnce(guardLookup(stub(['::1', '10.0.0.7', 'fe80::1'])), true);
    expect(mixed).toEqual({ error: null, answer: [{ address: '10.0.0.7', family: 4 }] });
    const none = await lookupOnce(guardLookup(stub(['::ffff:127.0.0.1', '0.0.0.0'])), true);
    expect(none.error).toBeInstanceOf(RefusedAddressError);
  });

  it('refuses an address configured as metadata', async () => {
    const { error } = await lookupOnce(guardLookup(stub(['10.9.9.9']), ['10.9.9.9']), false);
    expect(error).toBeInstanceOf(RefusedAddressError);
  });

  it('passes resolver errors through', async () => {
    const failing: LookupFunction = (_h, _o, callback) =>
      callback(Object.assign(new Error('no such name'), { code: 'ENOTFOUND' }), '', 4);
    const { error } = await lookupOnce(guardLookup(failing), false);
    expect((error as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });
});

describe('safe connector', () => {
  it('refuses an IP literal before connecting: a loopback listener sees no connection', async () => {
    let connections = 0;
    const server = createServer(() => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = String((server.address() as { port: number }).port);
    const connect = safeConnector({ connectTimeoutMs: 1_000 });
    for (const hostname of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::1]']) {
      const error = await new Promise<Error | null>((resolve) =>
        connect({ hostname, protocol: 'https:', port }, (...args) => resolve(args[0])),
      );
      expect(error).toBeInstanceOf(RefusedAddressError);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connections).toBe(0);
    server.close();
  });
});

describe('upstream failure codes', () => {
  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', 'upstream_timeout'],
    ['UND_ERR_HEADERS_TIMEOUT', 'upstream_timeout'],
    ['UND_ERR_SOCKET', 'upstream_error'],
    ['ECONNREFUSED', 'upstream_error'],
    ['ERR_GATEWAY_REFUSED_ADDRESS', 'upstream_error'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'upstream_error'],
  ])('%s is %s', (code, expected) => {
    expect(upstreamFailureCode(Object.assign(new Error('x'), { code }))).toBe(expected);
  });

  it('treats anything without a code as upstream_error', () => {
    expect(upstreamFailureCode(null)).toBe('upstream_error');
    expect(upstreamFailureCode(new Error('x'))).toBe('upstream_error');
  });
});
