/**
 * The egress filter's wire readers, as properties: DNS queries and answers read back what was written
 * (answers cut only at the end, to fit 512 bytes); a TLS ClientHello or an HTTP head, however it is cut
 * into arrivals, reads `more` until whole and then the name it carries; no bytes make a reader throw.
 */
import { Buffer } from 'node:buffer';
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { readClientHello } from '../../daemon/egress/client-hello.js';
import {
  buildAnswer,
  buildQuery,
  parseAnswerAddresses,
  parseQuery,
  type DnsRecord,
} from '../../daemon/egress/dns-message.js';
import { readRequestHead } from '../../daemon/egress/request-head.js';

/** Printable ASCII but '.', as a DNS label may hold. */
const labelChar = fc.integer({ min: 0x21, max: 0x7e }).filter((code) => code !== 0x2e);
const dnsLabel = fc
  .array(labelChar, { minLength: 1, maxLength: 63, size: 'small' })
  .map((codes) => String.fromCharCode(...codes));
/** A name of such labels, at most 253 characters (labels dropped from the end until it fits). */
const dnsName = fc.array(dnsLabel, { minLength: 1, maxLength: 12 }).map((labels) => {
  const kept = [...labels];
  while (kept.join('.').length > 253) kept.pop();
  return kept.length > 0 ? kept.join('.') : 'a';
});
const long = fc
  .array(fc.stringMatching(/^[a-zA-Z0-9]{63}$/), { minLength: 3, maxLength: 5 })
  .map((labels) => {
    const kept = [...labels];
    while (kept.join('.').length > 253) kept.pop();
    return kept.join('.');
  });
const anyName = fc.oneof(dnsName, long);
const u16 = fc.integer({ min: 0, max: 0xffff });

test.prop([u16, anyName, fc.boolean(), u16])(
  'buildQuery → parseQuery gives back id, name and type',
  (id, name, dot, type) => {
    const parsed = parseQuery(buildQuery(id, dot ? `${name}.` : name, type));
    expect(parsed).toMatchObject({ id, recursionDesired: true, name: name.toLowerCase(), type, qclass: 1 });
  },
);

/** IPv6 text as the URL standard writes it: what parseAnswerAddresses reads back. */
const canonicalIPv6 = (text: string): string => new URL(`http://[${text}]/`).hostname.slice(1, -1);
const ttl = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
  fc.double(),
);
const record: fc.Arbitrary<DnsRecord> = fc.oneof(
  fc.record({ type: fc.constant('A' as const), address: fc.ipV4(), ttl }),
  fc.record({ type: fc.constant('AAAA' as const), address: fc.ipV6(), ttl }),
);
const clamp = (value: number): number =>
  Number.isNaN(value) ? 0 : Math.min(Math.max(Math.floor(value), 0), 2 ** 31 - 1);

test.prop([u16, anyName, fc.integer({ min: 0, max: 15 }), fc.array(record, { maxLength: 40, size: 'max' })])(
  'buildAnswer → parseAnswerAddresses gives back the longest prefix of the records that fits 512 bytes',
  (id, name, rcode, records) => {
    const query = parseQuery(buildQuery(id, name, 1));
    if (query === undefined) throw new Error('the query does not parse');
    const message = buildAnswer(query, rcode, records);
    expect(message.length).toBeLessThanOrEqual(512);
    const parsed = parseAnswerAddresses(message, id);
    const expected = records.map((r) => ({
      type: r.type,
      address: r.type === 'A' ? r.address : canonicalIPv6(r.address),
      ttl: clamp(r.ttl),
    }));
    expect(parsed?.rcode).toBe(rcode);
    const count = parsed?.records.length ?? -1;
    expect(parsed?.records).toEqual(expected.slice(0, count));
    // Maximal: the next record would not have fitted.
    const next = records[count];
    if (next !== undefined) expect(message.length + (next.type === 'A' ? 16 : 28)).toBeGreaterThan(512);
  },
);

test.prop([fc.uint8Array({ maxLength: 600 })])('parseQuery and parseAnswerAddresses never throw', (bytes) => {
  const buffer = Buffer.from(bytes);
  expect(() => parseQuery(buffer)).not.toThrow();
  expect(() => parseAnswerAddresses(buffer, buffer.length >= 2 ? buffer.readUInt16BE(0) : 0)).not.toThrow();
});

// A synthetic ClientHello: random session id, suites and extensions around a server_name.
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((array) => Buffer.from(array));
const vector = (size: 1 | 2, body: Buffer): Buffer => {
  const length = Buffer.alloc(size);
  length.writeUIntBE(body.length, 0, size);
  return Buffer.concat([length, body]);
};
const extension = (type: number, data: Buffer): Buffer => {
  const head = Buffer.alloc(2);
  head.writeUInt16BE(type);
  return Buffer.concat([head, vector(2, data)]);
};
const sniExtension = (name: string): Buffer =>
  extension(0, vector(2, Buffer.concat([Buffer.of(0), vector(2, Buffer.from(name, 'latin1'))])));

const randomCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => upper.map((up, i) => (up ? name.charAt(i).toUpperCase() : name.charAt(i))).join(''));

interface Hello {
  readonly message: Buffer;
  readonly serverName: string | undefined;
}

const helloMessage: fc.Arbitrary<Hello> = fc
  .record({
    name: fc.option(
      anyName.chain((name) => fc.tuple(fc.constant(name), randomCase(name), fc.boolean())),
      { nil: undefined },
    ),
    sessionId: bytes(32),
    suites: fc.array(u16, { minLength: 1, maxLength: 30 }),
    others: fc.array(fc.tuple(fc.integer({ min: 1, max: 0xffff }), bytes(64)), { maxLength: 8 }),
    position: fc.nat(),
    legacy: fc.boolean(),
  })
  .map(({ name, sessionId, suites, others, position, legacy }) => {
    const suiteBytes = Buffer.alloc(suites.length * 2);
    suites.forEach((suite, i) => suiteBytes.writeUInt16BE(suite, i * 2));
    const list = others.map(([type, data]) => extension(type, data));
    if (name !== undefined) {
      const [, written, dot] = name;
      list.splice(position % (list.length + 1), 0, sniExtension(dot ? `${written}.` : written));
    }
    // A hello before TLS 1.2 may have no extensions block at all.
    const block = legacy && list.length === 0 ? Buffer.alloc(0) : vector(2, Buffer.concat(list));
    const body = Buffer.concat([
      Buffer.of(3, 3),
      Buffer.alloc(32, 0xab),
      vector(1, sessionId),
      vector(2, suiteBytes),
      vector(1, Buffer.of(0)),
      block,
    ]);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    header[0] = 1;
    return { message: Buffer.concat([header, body]), serverName: name?.[0].toLowerCase() };
  });

/** `message` as handshake records whose sizes cycle through `sizes`, of record versions 0x03xx. */
function fragment(message: Buffer, sizes: readonly number[], minor: number): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < message.length; i++) {
    const piece = message.subarray(at, at + (sizes[i % sizes.length] ?? 16384));
    parts.push(Buffer.of(22, 3, minor, piece.length >> 8, piece.length & 0xff), piece);
    at += piece.length;
  }
  return Buffer.concat(parts);
}

const sizes = fc.array(fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 16384 })), {
  minLength: 1,
  maxLength: 6,
});
const minor = fc.integer({ min: 0, max: 255 });

test.prop([helloMessage, sizes, minor, bytes(20)])(
  'a ClientHello in any records reads back its server name, and every strict prefix reads more',
  (hello, cut, version, after) => {
    const wire = fragment(hello.message, cut, version);
    expect(readClientHello(Buffer.concat([wire, after]))).toEqual({
      state: 'done',
      serverName: hello.serverName,
    });
    for (let end = 0; end < wire.length; end++) {
      expect(readClientHello(wire.subarray(0, end))).toEqual({ state: 'more' });
    }
  },
);

const STATES = ['more', 'done', 'invalid'];

test.prop([bytes(400)])('readClientHello never throws on arbitrary bytes', (input) => {
  expect(STATES).toContain(readClientHello(input).state);
  // The same bytes behind a plausible record header, to reach the hello's fields.
  const header = Buffer.of(
    22,
    3,
    1,
    input.length >> 8,
    input.length & 0xff,
    1,
    0,
    input.length >> 8,
    input.length & 0xff,
  );
  expect(STATES).toContain(readClientHello(Buffer.concat([header, input])).state);
});

const mutations = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), {
  minLength: 1,
  maxLength: 6,
});

test.prop([helloMessage, sizes, mutations, fc.nat()])(
  'readClientHello never throws on a mutated or truncated hello',
  (hello, cut, changes, keep) => {
    const wire = Buffer.from(fragment(hello.message, cut, 3));
    for (const [at, value] of changes) wire[at % wire.length] = value;
    expect(STATES).toContain(readClientHello(wire).state);
    expect(STATES).toContain(readClientHello(wire.subarray(0, keep % (wire.length + 1))).state);
  },
);

// A generated valid HTTP head.
const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);
const hostLabel = fc.stringMatching(/^[a-zA-Z0-9_-]{1,20}$/);
const hostName = fc
  .array(hostLabel, { minLength: 1, maxLength: 5 })
  .filter((labels) => !/^(?:\d+|0x[0-9a-f]*)$/i.test(labels.at(-1) ?? ''))
  .map((labels) => labels.join('.'));

interface HostForm {
  readonly written: string;
  readonly host: string;
}
const host: fc.Arbitrary<HostForm> = fc.oneof(
  fc
    .tuple(hostName, fc.boolean())
    .map(([name, dot]) => ({ written: dot ? `${name}.` : name, host: name.toLowerCase() })),
  fc.ipV4().map((ip) => ({ written: ip, host: ip })),
  fc.ipV6().map((ip) => ({ written: `[${ip}]`, host: canonicalIPv6(ip) })),
);
const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined });
const headerName = token.filter((name) => name.toLowerCase() !== 'host');
const headerValue = fc.stringMatching(/^[\x21-\x7e]([\x20-\x7e]{0,30}[\x21-\x7e])?$/);
const blank = fc.constantFrom('', ' ', '\t', '  ');

const validHead = fc
  .record({
    method: token,
    path: fc.stringMatching(/^\/[\x21-\x7e]{0,30}$/),
    version: fc.constantFrom('1.0', '1.1'),
    host,
    port,
    absolute: fc.boolean(),
    hostCase: fc.constantFrom('Host', 'host', 'HOST', 'hOsT'),
    blanks: fc.tuple(blank, blank),
    others: fc.array(fc.tuple(headerName, headerValue), { maxLength: 6 }),
    position: fc.nat(),
  })
  .map((h) => {
    const authority = h.port === undefined ? h.host.written : `${h.host.written}:${h.port}`;
    // CONNECT takes only authority-form: a generated CONNECT uses an origin-form-free method instead.
    const method = h.method === 'CONNECT' ? 'GET' : h.method;
    const target = h.absolute ? `http://${authority}${h.path}` : h.path;
    const lines = h.others.map(([name, value]) => `${name}: ${value}`);
    lines.splice(
      h.position % (lines.length + 1),
      0,
      `${h.hostCase}:${h.blanks[0]}${authority}${h.blanks[1]}`,
    );
    const text = `${method} ${target} HTTP/${h.version}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
    return { text, host: h.host.host, port: h.port };
  });

test.prop([validHead, bytes(40)])(
  'a valid head reads more for every strict prefix, then its host and port',
  ({ text, host: expectedHost, port: expectedPort }, after) => {
    const wire = Buffer.from(text, 'latin1');
    expect(readRequestHead(Buffer.concat([wire, after]))).toEqual({
      state: 'done',
      host: expectedHost,
      port: expectedPort,
    });
    for (let end = 0; end < wire.length; end++) {
      expect(readRequestHead(wire.subarray(0, end))).toEqual({ state: 'more' });
    }
  },
);

test.prop([
  fc.oneof(
    bytes(600),
    fc.string({ unit: 'binary-ascii' }).map((s) => Buffer.from(s, 'latin1')),
  ),
])('readRequestHead never throws on arbitrary bytes', (input) => {
  expect(STATES).toContain(readRequestHead(input).state);
  expect(STATES).toContain(readRequestHead(Buffer.concat([Buffer.from('GET / HTTP/1.1\r\n'), input])).state);
});

test.prop([validHead, mutations])('readRequestHead never throws on a mutated head', ({ text }, changes) => {
  const wire = Buffer.from(text, 'latin1');
  for (const [at, value] of changes) wire[at % wire.length] = value;
  const result = readRequestHead(wire);
  expect(STATES).toContain(result.state);
  if (result.state === 'invalid') expect(result.reason).toMatch(/^[a-z -]+$/);
});
