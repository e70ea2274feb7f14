import { describe, expect, it } from 'vitest';
import { useGatewayWorld } from '../support/gateway-world.js';
import { RawConnection } from '../support/raw-http.js';

const world = useGatewayWorld(4);

/** Requests whose framing is ambiguous or malformed; each hides a second request for /smuggled. */
const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: gw\r\n\r\n';
const CASES: [string, string][] = [
  [
    'Content-Length with Transfer-Encoding',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  [
    'Transfer-Encoding then Content-Length',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  [
    'two different Content-Length values',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nContent-Length: 1\r\nContent-Length: 40\r\n\r\nx${SMUGGLED}`,
  ],
  [
    'chunked not last in Transfer-Encoding',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  [
    'a coding before chunked',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  ['bare LF line endings', `GET /echo HTTP/1.1\nHost: gw\n\n${SMUGGLED}`],
  ['a bare LF inside the headers', `GET /echo HTTP/1.1\r\nHost: gw\nX-A: 1\r\n\r\n${SMUGGLED}`],
  [
    'an obs-fold continuation line',
    `GET /echo HTTP/1.1\r\nHost: gw\r\nX-A: 1\r\n Transfer-Encoding: chunked\r\n\r\n${SMUGGLED}`,
  ],
  [
    'white space before the colon',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n${SMUGGLED}`,
  ],
  ['a NUL in a header value', `GET /echo HTTP/1.1\r\nHost: gw\r\nX-A: a\u0000b\r\n\r\n${SMUGGLED}`],
  ['an absolute-form target', `GET https://elsewhere.example/echo HTTP/1.1\r\nHost: gw\r\n\r\n${SMUGGLED}`],
  [
    'a malformed chunk size',
    `POST /echo HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n${SMUGGLED}`,
  ],
];

describe('request framing', () => {
  it.each(CASES)('%s: 400 or a closed connection, and never two upstream requests', async (_, bytes) => {
    const host = world.host();
    expect((await host.apply({ llm: world.route('sk-framing-12345') })).ok).toBe(true);
    await world.upstream.reset();
    const client = await RawConnection.open(host.status().get('llm')?.port ?? 0);
    client.write(bytes);
    const received = await client.until((text, closed) => closed || /^HTTP\/1\.1 400/.test(text));
    expect(received === '' || received.startsWith('HTTP/1.1 400')).toBe(true);
    expect(received).not.toMatch(/HTTP\/1\.1 [^4]/);
    client.destroy();
    const forwarded = await world.upstream.requests();
    expect(forwarded.length).toBeLessThanOrEqual(1);
    expect(forwarded).not.toContain('GET /smuggled');
  });
});
