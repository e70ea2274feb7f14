/**
 * The server name a TLS connection asks for (RFC 8446 §4.1.2, RFC 6066 §3), read from the first bytes
 * sandbox code sends, before sandboxd decides whether to connect it anywhere. Only the ClientHello is
 * read, never decrypted traffic; every length is checked against what holds it, so bytes that lie read
 * as `invalid`, never as a read past the end. A connection that is not TLS is `invalid` from its first
 * byte, so the filter need not wait for a timeout to refuse it.
 */
import { Buffer } from 'node:buffer';
import { dnsName } from './dns-message.js';

/** What the bytes so far say: wait for more, the name asked for (none without SNI), or not a hello. */
export type HelloRead =
  | { readonly state: 'more' }
  | { readonly state: 'done'; readonly serverName: string | undefined }
  | { readonly state: 'invalid' };

/** Alert descriptions the filter sends (RFC 8446 §6). */
export const TLS_ALERT = { ACCESS_DENIED: 49, UNRECOGNIZED_NAME: 112, HANDSHAKE_FAILURE: 40 } as const;

const CONTENT_HANDSHAKE = 22;
const CONTENT_ALERT = 21;
const HANDSHAKE_CLIENT_HELLO = 1;
const RECORD_HEADER = 5;
/** The largest record plaintext (RFC 8446 §5.1). */
const MAX_RECORD = 16384;
/** The largest ClientHello sandboxd waits for, header included: real ones are a few KiB at most. */
const MAX_HELLO = 65536;
const EXTENSION_SERVER_NAME = 0;
const NAME_TYPE_HOST = 0;

const MORE: HelloRead = { state: 'more' };
const INVALID: HelloRead = { state: 'invalid' };

/**
 * Reads the ClientHello at the start of `bytes` (all received so far on a connection): `more` while
 * it is incomplete, `done` with its server_name (lower case, trailing dot dropped) once whole, `invalid`
 * when the bytes are not TLS handshake records starting with a ClientHello of at most 64 KiB, or its
 * server_name is repeated, not one host_name entry, or not a DNS name. The hello may span records; what
 * follows it is not read.
 *
 * @example
 * ```ts
 * readClientHello(firstBytes); // { state: 'done', serverName: 'pypi.org' }
 * readClientHello(Buffer.from('GET / HTTP/1.1\r\n')); // { state: 'invalid' }
 * ```
 */
export function readClientHello(bytes: Buffer): HelloRead {
  const fragments: Buffer[] = [];
  let gathered = 0;
  let total: number | undefined; // the hello's length, header included, once its header is in
  let at = 0;
  // Gather the handshake bytes the records carry, a partial last record included, until the hello's
  // own length says it is whole.
  for (;;) {
    const type = bytes[at];
    const major = bytes[at + 1];
    if (type !== undefined && type !== CONTENT_HANDSHAKE) return INVALID;
    if (major !== undefined && major !== 3) return INVALID;
    if (at + RECORD_HEADER > bytes.length) return MORE;
    const length = bytes.readUInt16BE(at + 3);
    // Empty handshake records are forbidden (RFC 8446 §5.1), and would let a peer make us loop for free.
    if (length === 0 || length > MAX_RECORD) return INVALID;
    const fragment = bytes.subarray(at + RECORD_HEADER, Math.min(at + RECORD_HEADER + length, bytes.length));
    fragments.push(fragment);
    gathered += fragment.length;
    if ((fragments[0]?.[0] ?? HANDSHAKE_CLIENT_HELLO) !== HANDSHAKE_CLIENT_HELLO) return INVALID;
    if (total === undefined && gathered >= 4) {
      total = 4 + Buffer.concat(fragments, 4).readUIntBE(1, 3);
      if (total > MAX_HELLO) return INVALID;
    }
    if (total !== undefined && gathered >= total) {
      return readHello(Buffer.concat(fragments, total).subarray(4));
    }
    if (fragment.length < length) return MORE;
    at += RECORD_HEADER + length;
  }
}

/** A cursor over `bytes` whose reads return undefined instead of running past the end. */
class Reader {
  readonly #bytes: Buffer;
  #at = 0;

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }

  get left(): number {
    return this.#bytes.length - this.#at;
  }

  /** The next `length` bytes, or undefined if fewer are left. */
  take(length: number): Buffer | undefined {
    if (length > this.left) return undefined;
    const taken = this.#bytes.subarray(this.#at, this.#at + length);
    this.#at += length;
    return taken;
  }

  /** A big-endian unsigned number of `size` bytes. */
  number(size: 1 | 2): number | undefined {
    const taken = this.take(size);
    return taken === undefined ? undefined : taken.readUIntBE(0, size);
  }

  /** The bytes after a length of `size` bytes: a vector (RFC 8446 §3.4). */
  vector(size: 1 | 2): Buffer | undefined {
    const length = this.number(size);
    return length === undefined ? undefined : this.take(length);
  }
}

/** The server name of a whole ClientHello body (after its 4-byte header). */
function readHello(body: Buffer): HelloRead {
  const reader = new Reader(body);
  const version = reader.take(2);
  if (version?.[0] !== 3 || reader.take(32) === undefined) return INVALID; // legacy_version, random
  const sessionId = reader.vector(1);
  const cipherSuites = reader.vector(2);
  const compression = reader.vector(1);
  if (sessionId === undefined || sessionId.length > 32) return INVALID;
  if (cipherSuites === undefined || cipherSuites.length < 2 || cipherSuites.length % 2 !== 0) return INVALID;
  if (compression === undefined || compression.length < 1) return INVALID;
  // Hellos before TLS 1.2 may end here, without extensions.
  if (reader.left === 0) return { state: 'done', serverName: undefined };
  const extensions = reader.vector(2);
  if (extensions === undefined || reader.left !== 0) return INVALID;
  const list = new Reader(extensions);
  let serverName: string | undefined;
  while (list.left > 0) {
    const type = list.number(2);
    const data = list.vector(2);
    if (type === undefined || data === undefined) return INVALID;
    if (type !== EXTENSION_SERVER_NAME) continue;
    // Two names would let the filter read one and the server the other.
    if (serverName !== undefined) return INVALID;
    serverName = hostName(data);
    if (serverName === undefined) return INVALID;
  }
  return { state: 'done', serverName };
}

/** The host_name of a server_name extension's data: exactly one entry, of type host_name. */
function hostName(data: Buffer): string | undefined {
  const outer = new Reader(data);
  const entries = outer.vector(2);
  if (entries === undefined || outer.left !== 0) return undefined;
  const entry = new Reader(entries);
  const nameType = entry.number(1);
  const name = entry.vector(2);
  if (nameType !== NAME_TYPE_HOST || name === undefined || entry.left !== 0) return undefined;
  return dnsName(name.toString('latin1'));
}

/**
 * One fatal alert record (TLS 1.2 framing, which every version reads before keys are agreed) with
 * `description`, one of `TLS_ALERT`'s, sent before closing a connection the filter refuses.
 */
export function tlsAlert(description: number): Buffer {
  const fatal = 2;
  return Buffer.of(CONTENT_ALERT, 3, 3, 0, 2, fatal, description & 0xff);
}
