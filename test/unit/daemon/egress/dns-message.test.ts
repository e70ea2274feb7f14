/**
 * sandboxd's DNS messages: which queries it reads, the answers it writes (read back by Node's own
 * resolver, c-ares, over UDP), and what it takes from an upstream's responses.
 */
import { Buffer } from 'node:buffer';
import { createSocket, type Socket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildAnswer,
  buildQuery,
  DNS_TYPE,
  dnsName,
  parseAnswerAddresses,
  parseQuery,
  RCODE,
  type DnsQuery,
  type DnsRecord,
} from '../../../../daemon/egress/dns-message.js';

/** A message from hex, spaces ignored. */
const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

/** A query header with these counts and flags. */
function header(id: number, flags: number, counts: [number, number, number, number]): Buffer {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt16BE(id, 0);
  bytes.writeUInt16BE(flags, 2);
  counts.forEach((count, i) => bytes.writeUInt16BE(count, 4 + i * 2));
  return bytes;
}

/** A question of `labels` (raw bytes each), type A, class IN. */
function question(...labels: (string | Buffer)[]): Buffer {
  const parts = labels.map((label) => {
    const bytes = typeof label === 'string' ? Buffer.from(label, 'latin1') : label;
    return Buffer.concat([Buffer.of(bytes.length), bytes]);
  });
  return Buffer.concat([...parts, hex('00 0001 0001')]);
}

const query = (...labels: (string | Buffer)[]): Buffer =>
  Buffer.concat([header(0x1234, 0x0100, [1, 0, 0, 0]), question(...labels)]);

describe('parseQuery', () => {
  it('reads a standard query, lower-casing the name and keeping the question as sent', () => {
    const message = query('PyPI', 'ORG');
    expect(parseQuery(message)).toEqual({
      id: 0x1234,
      recursionDesired: true,
      name: 'pypi.org',
      type: DNS_TYPE.A,
      qclass: 1,
      question: question('PyPI', 'ORG'),
    });
  });

  it('keeps its own copy of the question', () => {
    const message = query('a', 'b');
    const read = parseQuery(message);
    message.fill(0);
    expect(read?.question).toEqual(question('a', 'b'));
  });

  it('reads RD 0 and ignores an EDNS OPT additional record', () => {
    const opt = hex('00 0029 1000 00000000 0000');
    const message = Buffer.concat([header(7, 0x0000, [1, 0, 0, 1]), question('x', 'test'), opt]);
    expect(parseQuery(message)).toMatchObject({ id: 7, recursionDesired: false, name: 'x.test' });
  });

  it.each([
    ['a response (QR 1)', header(1, 0x8100, [1, 0, 0, 0])],
    ['an inverse query (OPCODE 1)', header(1, 0x0900, [1, 0, 0, 0])],
    ['a status query (OPCODE 2)', header(1, 0x1100, [1, 0, 0, 0])],
    ['no question', header(1, 0x0100, [0, 0, 0, 0])],
    ['two questions', header(1, 0x0100, [2, 0, 0, 0])],
    ['an answer record', header(1, 0x0100, [1, 1, 0, 0])],
    ['an authority record', header(1, 0x0100, [1, 0, 1, 0])],
    ['two additional records', header(1, 0x0100, [1, 0, 0, 2])],
  ])('refuses %s', (_, head) => {
    expect(parseQuery(Buffer.concat([head, question('a', 'b')]))).toBeUndefined();
  });

  it.each([
    ['a compression pointer', Buffer.concat([header(1, 0x0100, [1, 0, 0, 0]), hex('c00c 0001 0001')])],
    ['a reserved label type', Buffer.concat([header(1, 0x0100, [1, 0, 0, 0]), hex('41 61 00 0001 0001')])],
    ['a label of 64 bytes', query('a'.repeat(64), 'b')],
    ['a dot inside a label', query('a.b', 'c')],
    ['a space in a label', query('a b', 'c')],
    ['a control byte in a label', query(Buffer.of(0x61, 0x00), 'c')],
    ['a byte above 0x7e', query(Buffer.of(0x61, 0xe9), 'c')],
    ['DEL', query(Buffer.of(0x7f), 'c')],
    ['the root name', query()],
    ['a name of 254 characters', query(...Array<string>(126).fill('a'), 'bb')],
    ['a header cut short', hex('1234 0100 0001 0000 0000')],
    ['a name running off the end', Buffer.concat([header(1, 0x0100, [1, 0, 0, 0]), hex('05 6162')])],
    ['a name with no end', Buffer.concat([header(1, 0x0100, [1, 0, 0, 0]), hex('01 61')])],
    ['no type and class', Buffer.concat([header(1, 0x0100, [1, 0, 0, 0]), hex('01 61 00 0001')])],
    ['nothing', Buffer.alloc(0)],
  ])('refuses %s', (_, message) => {
    expect(parseQuery(message)).toBeUndefined();
  });

  it('takes labels of 63 bytes and a name of 253 characters', () => {
    expect(parseQuery(query('a'.repeat(63), 'b'))?.name).toBe(`${'a'.repeat(63)}.b`);
    const longest = [...Array<string>(126).fill('a'), 'b'];
    expect(parseQuery(query(...longest))?.name).toBe(longest.join('.'));
  });

  it('takes printable ASCII, from ! to ~', () => {
    expect(parseQuery(query('!_*~', 'Z'))?.name).toBe('!_*~.z');
  });
});

describe('dnsName', () => {
  it.each([
    ['PyPI.ORG.', 'pypi.org'],
    ['a', 'a'],
    ['', undefined],
    ['.', undefined],
    ['a..b', undefined],
    ['.a', undefined],
    ['a.b..', undefined],
    ['a b', undefined],
    ['é.org', undefined],
    [`${'a'.repeat(64)}.org`, undefined],
  ])('%j reads as %j', (text, name) => {
    expect(dnsName(text)).toBe(name);
  });
});

describe('buildQuery', () => {
  it('writes a recursive query of class IN that parseQuery reads back', () => {
    const message = buildQuery(0xbeef, 'Files.PythonHosted.org.', DNS_TYPE.AAAA);
    expect(message.subarray(0, 12)).toEqual(header(0xbeef, 0x0100, [1, 0, 0, 0]));
    expect(parseQuery(message)).toMatchObject({
      id: 0xbeef,
      recursionDesired: true,
      name: 'files.pythonhosted.org',
      type: DNS_TYPE.AAAA,
      qclass: 1,
    });
  });

  it.each([
    [-1, 'a', 1],
    [65536, 'a', 1],
    [1.5, 'a', 1],
    [1, 'a', 65536],
    [1, '', 1],
    [1, 'a..b', 1],
    [1, 'a b', 1],
  ])('refuses id %j, name %j, type %j', (id, name, type) => {
    expect(() => buildQuery(id, name, type)).toThrow(RangeError);
  });
});

const exampleQuery = (): DnsQuery => {
  const parsed = parseQuery(buildQuery(0x4242, 'Example.Test', DNS_TYPE.A));
  if (parsed === undefined) throw new Error('the example query does not parse');
  return parsed;
};

describe('buildAnswer', () => {
  it('writes the header, echoes the question and points each answer at it', () => {
    const q = exampleQuery();
    const answer = buildAnswer(q, RCODE.NOERROR, [{ type: 'A', address: '192.0.2.7', ttl: 300 }]);
    expect(answer.subarray(0, 12)).toEqual(header(0x4242, 0x8180, [1, 1, 0, 0]));
    expect(answer.subarray(12, 12 + q.question.length)).toEqual(q.question);
    expect(answer.subarray(12 + q.question.length)).toEqual(hex('c00c 0001 0001 0000012c 0004 c0000207'));
  });

  it('copies RD 0 and writes the rcode', () => {
    const q = { ...exampleQuery(), recursionDesired: false };
    expect(buildAnswer(q, RCODE.NXDOMAIN, []).subarray(0, 12)).toEqual(header(0x4242, 0x8083, [1, 0, 0, 0]));
    expect(buildAnswer(q, RCODE.REFUSED, []).readUInt16BE(2)).toBe(0x8085);
  });

  it.each([
    ['::1', '00000000000000000000000000000001'],
    ['::', '00000000000000000000000000000000'],
    ['2001:DB8::8:800:200C:417A', '20010db8000000000008080020 0c417a'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
    ['1::', '00010000000000000000000000000000'],
    ['::ffff:192.0.2.1', '00000000000000000000ffffc0000201'],
    ['64:ff9b::10.1.2.3', '0064ff9b0000000000000000 0a010203'],
    ['1:2:3:4:5:6:1.2.3.4', '000100020003000400050006 01020304'],
  ])('writes AAAA %s as its 16 bytes', (address, bytes) => {
    const answer = buildAnswer(exampleQuery(), 0, [{ type: 'AAAA', address, ttl: 1 }]);
    expect(answer.subarray(-28, -16)).toEqual(hex('c00c 001c 0001 00000001 0010'));
    expect(answer.subarray(-16)).toEqual(hex(bytes));
  });

  it.each([
    [-5, 0],
    [0, 0],
    [2.9, 2],
    [2 ** 31 - 1, 2 ** 31 - 1],
    [2 ** 31, 2 ** 31 - 1],
    [Infinity, 2 ** 31 - 1],
    [NaN, 0],
  ])('clamps TTL %j to %j', (ttl, written) => {
    const answer = buildAnswer(exampleQuery(), 0, [{ type: 'A', address: '1.2.3.4', ttl }]);
    expect(answer.readUInt32BE(answer.length - 10)).toBe(written);
  });

  it('drops trailing records to stay within 512 bytes, never setting TC', () => {
    const q = exampleQuery(); // 12 + 17 bytes before the answers: 30 A records (16 bytes) fit 512
    const records: DnsRecord[] = Array.from({ length: 40 }, (_, i) => ({
      type: 'A',
      address: `10.0.0.${i}`,
      ttl: 60,
    }));
    const answer = buildAnswer(q, 0, records);
    expect(answer.length).toBeLessThanOrEqual(512);
    expect(answer.readUInt16BE(6)).toBe(30);
    expect(answer.readUInt16BE(2) & 0x0200).toBe(0);
    expect(parseAnswerAddresses(answer, q.id)?.records).toEqual(records.slice(0, 30));
  });

  it('stops at the first record that does not fit, so the answers are a prefix', () => {
    const q = exampleQuery();
    // 29 A (464 bytes) leave 19: an AAAA (28) does not fit, a later A (16) would.
    const records: DnsRecord[] = [
      ...Array.from({ length: 29 }, (_, i): DnsRecord => ({ type: 'A', address: `10.0.1.${i}`, ttl: 1 })),
      { type: 'AAAA', address: '::2', ttl: 1 },
      { type: 'A', address: '10.0.2.0', ttl: 1 },
    ];
    expect(parseAnswerAddresses(buildAnswer(q, 0, records), q.id)?.records).toEqual(records.slice(0, 29));
  });

  it.each([
    [{ type: 'A', address: '::1', ttl: 1 }],
    [{ type: 'A', address: '1.2.3', ttl: 1 }],
    [{ type: 'A', address: '1.2.3.256', ttl: 1 }],
    [{ type: 'A', address: '01.2.3.4', ttl: 1 }],
    [{ type: 'AAAA', address: '1.2.3.4', ttl: 1 }],
    [{ type: 'AAAA', address: '1::2::3', ttl: 1 }],
    [{ type: 'AAAA', address: '1:2:3:4:5:6:7:8:9', ttl: 1 }],
    [{ type: 'AAAA', address: '1:2:3:4:5:6:7', ttl: 1 }],
    [{ type: 'AAAA', address: '1:2:3:4:5:6:7:8::', ttl: 1 }],
    [{ type: 'AAAA', address: 'fe80::1%eth0', ttl: 1 }],
    [{ type: 'AAAA', address: '1.2.3.4::', ttl: 1 }],
    [{ type: 'AAAA', address: '12345::', ttl: 1 }],
  ] as const)('refuses %j', (record) => {
    expect(() => buildAnswer(exampleQuery(), 0, [record])).toThrow(RangeError);
  });

  it('refuses an rcode outside 0..15', () => {
    expect(() => buildAnswer(exampleQuery(), 16, [])).toThrow(RangeError);
    expect(() => buildAnswer(exampleQuery(), -1, [])).toThrow(RangeError);
  });
});

/** A response with id 0x4242 holding the question `example.test A` and these answer bytes. */
function response(flags: number, answers: readonly Buffer[], ancount = answers.length): Buffer {
  return Buffer.concat([header(0x4242, flags, [1, ancount, 0, 0]), question('example', 'test'), ...answers]);
}

describe('parseAnswerAddresses', () => {
  it('reads A and AAAA records, skipping a CNAME and a record of another class', () => {
    // 0x0c: example.test; 0x0c + 8: test.
    const cname = hex('c00c 0005 0001 00000e10 0006 03 6e6f77 c014'); // example.test CNAME now.test
    const a = hex('c02a 0001 0001 0000003c 0004 5db8d822'); // now.test (at 0x2a) A 93.184.216.34
    const chaos = hex('c02a 0001 0003 0000003c 0004 01020304');
    const aaaa = hex('c02a 001c 0001 00000078 0010 20010db8000000000000000000000001');
    const message = response(0x8180, [cname, a, chaos, aaaa]);
    expect(parseAnswerAddresses(message, 0x4242)).toEqual({
      rcode: 0,
      records: [
        { type: 'A', address: '93.184.216.34', ttl: 60 },
        { type: 'AAAA', address: '2001:db8::1', ttl: 120 },
      ],
    });
  });

  it('reads the rcode of a response without answers', () => {
    expect(parseAnswerAddresses(response(0x8183, []), 0x4242)).toEqual({ rcode: 3, records: [] });
  });

  it('reads a TTL above 2^31-1 as 0 (RFC 2181)', () => {
    const a = hex('c00c 0001 0001 80000000 0004 01020304');
    expect(parseAnswerAddresses(response(0x8180, [a]), 0x4242)?.records).toEqual([
      { type: 'A', address: '1.2.3.4', ttl: 0 },
    ]);
  });

  it('writes IPv6 as RFC 5952 text', () => {
    const cases = [
      ['00000000000000000000000000000000', '::'],
      ['00010000000000000000000000000000', '1::'],
      ['00010000000100000000000000000001', '1:0:1::1'],
      ['00010000000000010000000000010001', '1::1:0:0:1:1'],
      ['00010002000300040005000600070008', '1:2:3:4:5:6:7:8'],
      ['0001000200030004000500060000ABCD', '1:2:3:4:5:6:0:abcd'],
    ];
    for (const [bytes, text] of cases) {
      const aaaa = hex(`c00c 001c 0001 00000001 0010 ${bytes}`);
      expect(parseAnswerAddresses(response(0x8180, [aaaa]), 0x4242)?.records[0]?.address).toBe(text);
    }
  });

  it('reads a name written out in full and one pointing into another answer', () => {
    const full = hex('03 6f6e65 04 74657374 00 0001 0001 00000001 0004 0a000001'); // one.test, at 0x1e
    const pointer = hex('03 747776 c01e 0001 0001 00000001 0004 0a000002'); // two.one.test
    expect(parseAnswerAddresses(response(0x8180, [full, pointer]), 0x4242)?.records).toHaveLength(2);
  });

  it.each([
    ['a query (QR 0)', response(0x0100, [])],
    ['an inverse query response (OPCODE 1)', response(0x8900, [])],
    ['a header cut short', hex('4242 8180 0001')],
    ['an answer count beyond the answers', response(0x8180, [], 1)],
    ['a record cut in its fixed part', response(0x8180, [hex('c00c 0001 0001 0000')])],
    ['an RDLENGTH beyond the message', response(0x8180, [hex('c00c 0001 0001 00000001 0008 01020304')])],
    ['an A of 5 bytes', response(0x8180, [hex('c00c 0001 0001 00000001 0005 0102030405')])],
    ['an AAAA of 4 bytes', response(0x8180, [hex('c00c 001c 0001 00000001 0004 01020304')])],
    ['a pointer to itself', response(0x8180, [hex('c01e 0001 0001 00000001 0004 01020304')])],
    ['a pointer forwards', response(0x8180, [hex('c0ff 0001 0001 00000001 0004 01020304')])],
    ['a pointer cut in half', response(0x8180, [hex('c0')])],
    ['a reserved label type', response(0x8180, [hex('4001 0001 0001 00000001 0004 01020304')])],
    ['a name running off the end', response(0x8180, [hex('05 6162')])],
    ['a question cut short', Buffer.concat([header(0x4242, 0x8180, [1, 0, 0, 0]), hex('07 6578616d706c65')])],
  ])('refuses %s', (_, message) => {
    expect(parseAnswerAddresses(message, 0x4242)).toBeUndefined();
  });

  it('refuses a loop of pointers between two answers', () => {
    // Each answer's name points at the other's: the second points backwards, the first forwards.
    const first = hex('c02e 0001 0001 00000001 0004 01020304'); // at 0x1e, points at 0x2e
    const second = hex('c01e 0001 0001 00000001 0004 01020304'); // at 0x2e
    expect(parseAnswerAddresses(response(0x8180, [first, second]), 0x4242)).toBeUndefined();
  });

  it('refuses a name longer than 255 octets made of pointers to pointers', () => {
    // Labels of 63 bytes, each ending in a pointer to the one before: the fourth name is 257 octets.
    const label = (previous: number | undefined): Buffer =>
      Buffer.concat([
        Buffer.of(63),
        Buffer.alloc(63, 0x61),
        previous === undefined ? Buffer.of(0) : Buffer.of(0xc0 | (previous >> 8), previous & 0xff),
      ]);
    const parts: Buffer[] = [];
    let at = 0x1e;
    let previous: number | undefined;
    for (let i = 0; i < 4; i++) {
      const part = Buffer.concat([label(previous), hex('0005 0001 00000001 0002 c00c')]); // CNAME records
      parts.push(part);
      previous = at;
      at += part.length;
    }
    expect(parseAnswerAddresses(response(0x8180, parts.slice(0, 3)), 0x4242)).toEqual({
      rcode: 0,
      records: [],
    });
    expect(parseAnswerAddresses(response(0x8180, parts), 0x4242)).toBeUndefined();
  });

  it('refuses a response to another query', () => {
    expect(parseAnswerAddresses(response(0x8180, []), 0x4243)).toBeUndefined();
  });

  it('reads back what buildAnswer wrote', () => {
    const records: DnsRecord[] = [
      { type: 'AAAA', address: '2001:db8::8:800:200c:417a', ttl: 5 },
      { type: 'A', address: '203.0.113.9', ttl: 86400 },
    ];
    const q = exampleQuery();
    expect(parseAnswerAddresses(buildAnswer(q, RCODE.NOERROR, records), q.id)).toEqual({
      rcode: 0,
      records,
    });
  });
});

describe("answers as Node's resolver reads them", () => {
  const zone: Record<string, DnsRecord[]> = {
    'pypi.test': [
      { type: 'A', address: '192.0.2.10', ttl: 60 },
      { type: 'A', address: '192.0.2.11', ttl: 60 },
      { type: 'AAAA', address: '2001:db8::10', ttl: 60 },
    ],
    'mapped.test': [{ type: 'AAAA', address: '::ffff:192.0.2.1', ttl: 60 }],
  };
  let server: Socket;
  let port = 0;
  const seen: DnsQuery[] = [];

  beforeAll(async () => {
    server = createSocket('udp4');
    server.on('message', (message, peer) => {
      const q = parseQuery(message);
      if (q === undefined) return;
      seen.push(q);
      const found = zone[q.name];
      const type = q.type === DNS_TYPE.A ? 'A' : 'AAAA';
      const reply =
        q.name === 'refused.test'
          ? buildAnswer(q, RCODE.REFUSED, [])
          : found === undefined
            ? buildAnswer(q, RCODE.NXDOMAIN, [])
            : buildAnswer(
                q,
                RCODE.NOERROR,
                found.filter((record) => record.type === type),
              );
      server.send(reply, peer.port, peer.address);
    });
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    port = server.address().port;
  });

  afterAll(() => {
    server.close();
  });

  const resolver = (): dns.Resolver => {
    const r = new dns.Resolver({ timeout: 2000, tries: 2 });
    r.setServers([`127.0.0.1:${port}`]);
    return r;
  };

  it('resolve4 and resolve6 return the addresses', async () => {
    await expect(resolver().resolve4('PyPI.test')).resolves.toEqual(['192.0.2.10', '192.0.2.11']);
    await expect(resolver().resolve6('pypi.test')).resolves.toEqual(['2001:db8::10']);
    await expect(resolver().resolve6('mapped.test')).resolves.toEqual(['::ffff:192.0.2.1']);
    expect(seen.some((q) => q.name === 'pypi.test' && q.type === DNS_TYPE.AAAA)).toBe(true);
  });

  it('the TTL arrives', async () => {
    await expect(resolver().resolve4('pypi.test', { ttl: true })).resolves.toEqual([
      { address: '192.0.2.10', ttl: 60 },
      { address: '192.0.2.11', ttl: 60 },
    ]);
  });

  it('NXDOMAIN is ENOTFOUND', async () => {
    await expect(resolver().resolve4('blocked.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('an answer of no records for the type is ENODATA, REFUSED is EREFUSED', async () => {
    await expect(resolver().resolve4('mapped.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver().resolve4('refused.test')).rejects.toMatchObject({ code: 'EREFUSED' });
  });
});
