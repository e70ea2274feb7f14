/**
 * The server name sandboxd reads from a TLS connection's first bytes: from a ClientHello Node's own TLS
 * client sends, from hellos built here field by field, and never from bytes whose lengths lie.
 */
import { Buffer } from 'node:buffer';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readClientHello, TLS_ALERT, tlsAlert } from '../../../../daemon/egress/client-hello.js';

const u8 = (n: number): Buffer => Buffer.of(n);
const u16 = (n: number): Buffer => Buffer.of(n >> 8, n & 0xff);
const u24 = (n: number): Buffer => Buffer.of(n >> 16, (n >> 8) & 0xff, n & 0xff);
const vector8 = (bytes: Buffer): Buffer => Buffer.concat([u8(bytes.length), bytes]);
const vector16 = (bytes: Buffer): Buffer => Buffer.concat([u16(bytes.length), bytes]);

/** An extension: type, then its data as a 16-bit vector. */
const extension = (type: number, data: Buffer): Buffer => Buffer.concat([u16(type), vector16(data)]);
/** A server_name extension with one host_name entry. */
const sni = (name: string | Buffer): Buffer =>
  extension(0, vector16(Buffer.concat([u8(0), vector16(Buffer.from(name))])));

interface HelloFields {
  readonly version?: Buffer;
  readonly sessionId?: Buffer;
  readonly cipherSuites?: Buffer;
  readonly compression?: Buffer;
  /** The extensions block as written, length included; `null` for none at all. */
  readonly extensionBlock?: Buffer | null;
  readonly extensions?: readonly Buffer[];
}

/** A ClientHello body, TLS 1.3 style unless a field says otherwise. */
function helloBody(fields: HelloFields = {}): Buffer {
  const extensionBlock =
    fields.extensionBlock === undefined
      ? vector16(Buffer.concat(fields.extensions ?? [sni('example.org')]))
      : fields.extensionBlock;
  return Buffer.concat([
    fields.version ?? u16(0x0303),
    Buffer.alloc(32, 7),
    fields.sessionId ?? vector8(Buffer.alloc(32, 1)),
    fields.cipherSuites ?? vector16(Buffer.from('13011302c02f', 'hex')),
    fields.compression ?? vector8(u8(0)),
    extensionBlock ?? Buffer.alloc(0),
  ]);
}

/** The handshake message: type 1, 24-bit length, body. */
const handshake = (body: Buffer, type = 1): Buffer => Buffer.concat([u8(type), u24(body.length), body]);

/** `bytes` as handshake records of at most `size` bytes each. */
function records(bytes: Buffer, size = 16384, version = 0x0301): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) {
    const fragment = bytes.subarray(at, at + size);
    parts.push(Buffer.concat([u8(22), u16(version), u16(fragment.length), fragment]));
  }
  return Buffer.concat(parts);
}

const hello = (fields: HelloFields = {}): Buffer => records(handshake(helloBody(fields)));

describe('readClientHello', () => {
  it('reads the server name, lower case, trailing dot dropped', () => {
    expect(readClientHello(hello({ extensions: [sni('API.Example.ORG.')] }))).toEqual({
      state: 'done',
      serverName: 'api.example.org',
    });
  });

  it('finds server_name among other extensions', () => {
    const extensions = [extension(0x0a0a, Buffer.alloc(0)), extension(43, Buffer.from('0403040303', 'hex'))];
    const bytes = hello({ extensions: [...extensions, sni('pypi.org'), extension(0xff01, u8(0))] });
    expect(readClientHello(bytes)).toEqual({ state: 'done', serverName: 'pypi.org' });
  });

  it('reads no name from a hello without server_name or without extensions', () => {
    expect(readClientHello(hello({ extensions: [extension(43, Buffer.from('020304', 'hex'))] }))).toEqual({
      state: 'done',
      serverName: undefined,
    });
    expect(readClientHello(hello({ extensions: [] }))).toEqual({ state: 'done', serverName: undefined });
    expect(readClientHello(hello({ extensionBlock: null }))).toEqual({
      state: 'done',
      serverName: undefined,
    });
  });

  it('reads a hello spread over records of one byte, and waits for the last', () => {
    const bytes = records(handshake(helloBody({ extensions: [sni('a.example')] })), 1, 0x0303);
    expect(readClientHello(bytes)).toEqual({ state: 'done', serverName: 'a.example' });
    for (const cut of [0, 1, 4, 5, 6, 11, bytes.length - 6, bytes.length - 1]) {
      expect(readClientHello(bytes.subarray(0, cut))).toEqual({ state: 'more' });
    }
  });

  it('does not read what follows the hello', () => {
    const bytes = hello({ extensions: [sni('x.test')] });
    const after = Buffer.concat([bytes, Buffer.from('170303000501020304ff', 'hex'), Buffer.from('junk')]);
    expect(readClientHello(after)).toEqual({ state: 'done', serverName: 'x.test' });
    // More handshake bytes in the hello's own record (a second message) are not read either.
    const message = handshake(helloBody({ extensions: [sni('x.test')] }));
    const shared = records(Buffer.concat([message, Buffer.from('0b000000ffff', 'hex')]));
    expect(readClientHello(shared)).toEqual({ state: 'done', serverName: 'x.test' });
  });

  it('takes any 0x03xx record version', () => {
    for (const version of [0x0300, 0x0301, 0x0303, 0x03ff]) {
      expect(readClientHello(records(handshake(helloBody()), 16384, version))).toMatchObject({
        state: 'done',
      });
    }
  });

  it('refuses what is not TLS from its first byte', () => {
    expect(readClientHello(Buffer.from('G'))).toEqual({ state: 'invalid' });
    expect(readClientHello(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ state: 'invalid' });
    expect(readClientHello(Buffer.from('SSH-2.0-OpenSSH_9.6\r\n'))).toEqual({ state: 'invalid' });
    expect(readClientHello(Buffer.of(22, 2))).toEqual({ state: 'invalid' });
    expect(readClientHello(Buffer.of(22, 3))).toEqual({ state: 'more' });
  });

  it.each([
    ['application data', Buffer.from('1703030005', 'hex')],
    ['an alert', Buffer.from('150303000202', 'hex')],
    ['change_cipher_spec', Buffer.from('140303000101', 'hex')],
    ['an empty handshake record', Buffer.from('1603010000', 'hex')],
    ['a record longer than 2^14', Buffer.from('1603014001', 'hex')],
    ['a ServerHello', Buffer.from('160303000402', 'hex')],
    ['a Certificate', Buffer.from('16030300040b000000', 'hex')],
  ])('refuses %s before the rest arrives', (_, bytes) => {
    expect(readClientHello(bytes)).toEqual({ state: 'invalid' });
  });

  it('refuses a record of another type before the hello is whole', () => {
    const bytes = records(handshake(helloBody()), 20);
    const cut = 25 * 3; // three whole records of 20
    const ccs = Buffer.from('140303000101', 'hex');
    expect(readClientHello(Buffer.concat([bytes.subarray(0, cut), ccs]))).toEqual({ state: 'invalid' });
  });

  it('takes a hello of 64 KiB and refuses one byte more, as soon as its length is in', () => {
    const fixed = helloBody({ extensions: [sni('big.test')] }).length + 4 + 4; // header, padding's own
    const padding = (size: number): Buffer => extension(21, Buffer.alloc(size));
    const exact = handshake(helloBody({ extensions: [sni('big.test'), padding(65536 - fixed)] }));
    expect(exact.length).toBe(65536);
    expect(readClientHello(records(exact))).toEqual({ state: 'done', serverName: 'big.test' });
    const over = handshake(helloBody({ extensions: [sni('big.test'), padding(65537 - fixed)] }));
    expect(readClientHello(records(over).subarray(0, 9))).toEqual({ state: 'invalid' });
  });

  it.each([
    [
      'a handshake length past the records',
      (b: Buffer) => records(Buffer.concat([u8(1), u24(b.length + 1), b])),
    ],
    ['a handshake length short of the body', (b: Buffer) => records(handshake(b.subarray(0, b.length - 1)))],
  ])('%s is more or invalid, never done', (_, make) => {
    const bytes = make(helloBody());
    expect(readClientHello(bytes).state).not.toBe('done');
  });

  it.each([
    ['a legacy_version of 2.0', { version: u16(0x0200) }],
    ['a session id of 33 bytes', { sessionId: vector8(Buffer.alloc(33)) }],
    [
      'a session id length past the body',
      {
        sessionId: u8(200),
        cipherSuites: Buffer.alloc(0),
        compression: Buffer.alloc(0),
        extensionBlock: null,
      },
    ],
    ['no cipher suites', { cipherSuites: vector16(Buffer.alloc(0)) }],
    ['an odd cipher suites length', { cipherSuites: vector16(Buffer.alloc(3)) }],
    [
      'a cipher suites length past the body',
      { cipherSuites: u16(0xfffe), compression: Buffer.alloc(0), extensionBlock: null },
    ],
    ['no compression method', { compression: vector8(Buffer.alloc(0)) }],
    ['an extensions length short of the rest', { extensionBlock: Buffer.concat([u16(0), sni('a.b')]) }],
    ['an extensions length past the rest', { extensionBlock: Buffer.concat([u16(100), sni('a.b')]) }],
    ['one byte of extensions length', { extensionBlock: u8(0) }],
    [
      'an extension length past the block',
      { extensionBlock: vector16(Buffer.concat([u16(0), u16(10), u8(0)])) },
    ],
    ['an extension cut in its header', { extensionBlock: vector16(Buffer.of(0, 0, 0)) }],
    ['server_name twice', { extensions: [sni('a.test'), sni('a.test')] }],
    ['server_name twice, apart', { extensions: [sni('a.test'), extension(43, u8(0)), sni('b.test')] }],
    ['an empty server_name', { extensions: [extension(0, Buffer.alloc(0))] }],
    ['an empty server name list', { extensions: [extension(0, vector16(Buffer.alloc(0)))] }],
    [
      'a list length past the data',
      { extensions: [extension(0, Buffer.concat([u16(9), u8(0), vector16(Buffer.from('a.b'))]))] },
    ],
    [
      'a list length short of the data',
      { extensions: [extension(0, Buffer.concat([u16(3), u8(0), vector16(Buffer.from('a.b'))]))] },
    ],
    [
      'a name length past the list',
      { extensions: [extension(0, vector16(Buffer.concat([u8(0), u16(9), Buffer.from('a.b')])))] },
    ],
    [
      'a name type other than host_name',
      { extensions: [extension(0, vector16(Buffer.concat([u8(1), vector16(Buffer.from('a.b'))])))] },
    ],
    [
      'two host names',
      {
        extensions: [
          extension(
            0,
            vector16(
              Buffer.concat([u8(0), vector16(Buffer.from('a.b')), u8(0), vector16(Buffer.from('c.d'))]),
            ),
          ),
        ],
      },
    ],
    ['an empty name', { extensions: [sni('')] }],
    ['the root name', { extensions: [sni('.')] }],
    ['an empty label', { extensions: [sni('a..b')] }],
    ['a space', { extensions: [sni('a b.test')] }],
    ['a NUL byte', { extensions: [sni(Buffer.from('good.test\0.evil.test', 'latin1'))] }],
    ['a byte above 0x7e', { extensions: [sni(Buffer.from('caf\xe9.test', 'latin1'))] }],
    ['a label of 64 bytes', { extensions: [sni(`${'a'.repeat(64)}.test`)] }],
    ['a name of 254 characters', { extensions: [sni(`${'a.'.repeat(126)}bb`)] }],
  ] as [string, HelloFields][])('refuses %s', (_, fields) => {
    expect(readClientHello(hello(fields))).toEqual({ state: 'invalid' });
  });

  it('takes labels of 63 bytes and a name of 253 characters', () => {
    const name = `${'a.'.repeat(126)}b`;
    expect(readClientHello(hello({ extensions: [sni(`${'x'.repeat(63)}.test`)] }))).toMatchObject({
      serverName: `${'x'.repeat(63)}.test`,
    });
    expect(readClientHello(hello({ extensions: [sni(name)] }))).toEqual({ state: 'done', serverName: name });
  });

  it('takes an empty session id and a TLS 1.0 legacy_version', () => {
    const bytes = hello({ version: u16(0x0301), sessionId: vector8(Buffer.alloc(0)) });
    expect(readClientHello(bytes)).toEqual({ state: 'done', serverName: 'example.org' });
  });
});

describe("a ClientHello from Node's TLS client", () => {
  let server: Server;
  let port = 0;

  beforeAll(async () => {
    server = createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** The first TLS record a `tls.connect` with `servername` sends (undefined: none given). */
  async function capture(servername: string | undefined): Promise<Buffer> {
    const received = new Promise<Buffer>((resolve, reject) => {
      server.once('connection', (socket) => {
        let bytes = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          bytes = Buffer.concat([bytes, chunk]);
          if (bytes.length >= 5 && bytes.length >= 5 + bytes.readUInt16BE(3)) {
            resolve(bytes);
            socket.destroy();
          }
        });
        socket.on('close', () => reject(new Error('closed before a whole record')));
      });
    });
    const client = connect({ host: '127.0.0.1', port, ...(servername === undefined ? {} : { servername }) });
    client.on('error', () => undefined); // the server hangs up mid-handshake
    try {
      return await received;
    } finally {
      client.destroy();
    }
  }

  it('reads its server name, lower case, and wants more for every strict prefix', async () => {
    const bytes = await capture('Registry.Example.ORG');
    expect(readClientHello(bytes)).toEqual({ state: 'done', serverName: 'registry.example.org' });
    for (let cut = 0; cut < bytes.length; cut++) {
      expect(readClientHello(bytes.subarray(0, cut))).toEqual({ state: 'more' });
    }
  });

  it('reads no name when the client sends none (an IP address)', async () => {
    const bytes = await capture(undefined);
    expect(readClientHello(bytes)).toEqual({ state: 'done', serverName: undefined });
  });

  it('reads the name from the same hello cut into records of 7 bytes', async () => {
    const bytes = await capture('registry.example.org');
    const message = bytes.subarray(5, 5 + bytes.readUInt16BE(3));
    expect(readClientHello(records(message, 7))).toEqual({
      state: 'done',
      serverName: 'registry.example.org',
    });
  });
});

describe('tlsAlert', () => {
  it('is one fatal alert record', () => {
    expect(tlsAlert(TLS_ALERT.ACCESS_DENIED)).toEqual(Buffer.from('15030300020231', 'hex'));
    expect(tlsAlert(TLS_ALERT.UNRECOGNIZED_NAME)).toEqual(Buffer.from('15030300020270', 'hex'));
    expect(tlsAlert(TLS_ALERT.HANDSHAKE_FAILURE)).toEqual(Buffer.from('15030300020228', 'hex'));
  });

  it('is itself not a hello', () => {
    expect(readClientHello(tlsAlert(TLS_ALERT.ACCESS_DENIED))).toEqual({ state: 'invalid' });
  });
});
