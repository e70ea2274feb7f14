/**
 * The few DER encoders (X.690) the egress CA needs to build X.509 certificates (`certificate-authority.ts`):
 * `node:crypto` makes keys and signatures but no certificates, and sandboxd takes no ASN.1 package for
 * this. Encoders only, each returning one whole TLV; nothing here parses. Every value is encoded the one
 * way DER allows (minimal lengths and integers, sorted SET OF, `0xff` for TRUE), since a verifier such as
 * OpenSSL refuses the other BER forms in a certificate.
 */
import { Buffer } from 'node:buffer';

/** Universal tags used here (X.680 §8.4). */
const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  OBJECT_IDENTIFIER: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

const CONTEXT_PRIMITIVE = 0x80;
const CONTEXT_CONSTRUCTED = 0xa0;
/** The highest tag number that fits the one-byte identifier form (31 and up need the long form). */
const MAX_SHORT_TAG = 30;

/**
 * The length octets of a content of `length` bytes: one byte below 128, else `0x80 | n` and `n` bytes
 * big-endian, no leading zero byte (X.690 §10.1: the fewest octets).
 *
 * @example
 * ```ts
 * encodeLength(127); // <7f>
 * encodeLength(128); // <81 80>
 * encodeLength(256); // <82 01 00>
 * ```
 */
export function encodeLength(length: number): Buffer {
  if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`DER length ${length}`);
  if (length < 0x80) return Buffer.of(length);
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

/** One TLV: the identifier octet `tag`, the length, the content. */
export function tlv(tag: number, content: Uint8Array): Buffer {
  return Buffer.concat([Buffer.of(tag), encodeLength(content.length), content]);
}

/** A SEQUENCE of the given encodings, in order. */
export function sequence(...items: readonly Uint8Array[]): Buffer {
  return tlv(TAG.SEQUENCE, Buffer.concat(items));
}

/** A SET OF the given encodings, sorted by their bytes as DER requires (X.690 §11.6). */
export function setOf(...items: readonly Uint8Array[]): Buffer {
  const sorted = items.map((item) => Buffer.from(item)).sort((a, b) => Buffer.compare(a, b));
  return tlv(TAG.SET, Buffer.concat(sorted));
}

/**
 * A non-negative INTEGER whose magnitude is the big-endian `bytes`: leading zero bytes dropped, then one
 * `0x00` put back when the top bit is set, so the value never reads as negative (X.690 §8.3.2). No bytes
 * (or only zeros) is 0.
 *
 * @example
 * ```ts
 * integer(Buffer.of(0x00, 0x7f)); // <02 01 7f>
 * integer(Buffer.of(0x80));       // <02 02 00 80>
 * ```
 */
export function integer(bytes: Uint8Array): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const magnitude = bytes.length === 0 ? Buffer.of(0) : Buffer.from(bytes.subarray(start));
  const high = (magnitude[0] ?? 0) & 0x80;
  return tlv(TAG.INTEGER, high === 0 ? magnitude : Buffer.concat([Buffer.of(0), magnitude]));
}

/** A small non-negative INTEGER (a version, a path length). */
export function smallInteger(value: number): Buffer {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`DER small integer ${value}`);
  return integer(bigEndian(BigInt(value)));
}

/** `value` (≥ 0) as big-endian bytes, at least one. */
function bigEndian(value: bigint): Buffer {
  const octets: number[] = [];
  let rest = value;
  do {
    octets.unshift(Number(rest & 0xffn));
    rest >>= 8n;
  } while (rest > 0n);
  return Buffer.from(octets);
}

/**
 * An OBJECT IDENTIFIER from its dotted form (`'2.5.4.3'`): the first two arcs as `40 × a + b`, each
 * arc base-128 with the high bit on every byte but its last (X.690 §8.19). Arcs are read as bigints, so
 * none is cut short.
 */
export function objectIdentifier(dotted: string): Buffer {
  if (!/^[0-2](\.(0|[1-9][0-9]*))+$/.test(dotted)) throw new TypeError(`not an OID: ${dotted}`);
  const arcs = dotted.split('.').map((arc) => BigInt(arc));
  const [first = 0n, second = 0n, ...rest] = arcs;
  if (first < 2n && second > 39n) throw new TypeError(`not an OID: ${dotted}`);
  const octets: number[] = [];
  for (const arc of [first * 40n + second, ...rest]) {
    const group: number[] = [Number(arc & 0x7fn)];
    for (let high = arc >> 7n; high > 0n; high >>= 7n) group.unshift(Number(high & 0x7fn) | 0x80);
    octets.push(...group);
  }
  return tlv(TAG.OBJECT_IDENTIFIER, Buffer.from(octets));
}

/** A UTF8String. */
export function utf8String(text: string): Buffer {
  return tlv(TAG.UTF8_STRING, Buffer.from(text, 'utf8'));
}

/** A PrintableString; throws a TypeError for a character outside its set (X.680 §41.4). */
export function printableString(text: string): Buffer {
  if (!/^[A-Za-z0-9 '()+,\-./:=?]*$/.test(text)) throw new TypeError('not a PrintableString');
  return tlv(TAG.PRINTABLE_STRING, Buffer.from(text, 'latin1'));
}

/** The content of an IA5String (ASCII), for the implicitly tagged names of a subjectAltName. */
export function ia5Bytes(text: string): Buffer {
  if (!/^\p{ASCII}*$/u.test(text)) throw new TypeError('not an IA5String');
  return Buffer.from(text, 'latin1');
}

/** A BIT STRING of `bytes` whose last `unusedBits` (0–7) bits are not part of it. */
export function bitString(bytes: Uint8Array, unusedBits = 0): Buffer {
  if (
    !Number.isInteger(unusedBits) ||
    unusedBits < 0 ||
    unusedBits > 7 ||
    (bytes.length === 0 && unusedBits !== 0)
  ) {
    throw new RangeError(`BIT STRING unused bits ${unusedBits}`);
  }
  return tlv(TAG.BIT_STRING, Buffer.concat([Buffer.of(unusedBits), bytes]));
}

/** An OCTET STRING. */
export function octetString(bytes: Uint8Array): Buffer {
  return tlv(TAG.OCTET_STRING, bytes);
}

/** A BOOLEAN: TRUE is `0xff` in DER (X.690 §11.1). */
export function boolean(value: boolean): Buffer {
  return tlv(TAG.BOOLEAN, Buffer.of(value ? 0xff : 0x00));
}

/**
 * A certificate time (RFC 5280 §4.1.2.5): UTCTime `YYMMDDHHMMSSZ` for the years 1950 to 2049,
 * GeneralizedTime `YYYYMMDDHHMMSSZ` otherwise; whole seconds (milliseconds dropped), always UTC.
 */
export function time(date: Date): Buffer {
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 0 || year > 9999) throw new RangeError('time out of range');
  const two = (n: number) => String(n).padStart(2, '0');
  const rest =
    two(date.getUTCMonth() + 1) +
    two(date.getUTCDate()) +
    two(date.getUTCHours()) +
    two(date.getUTCMinutes()) +
    two(date.getUTCSeconds()) +
    'Z';
  return year >= 1950 && year < 2050
    ? tlv(TAG.UTC_TIME, Buffer.from(two(year % 100) + rest, 'latin1'))
    : tlv(TAG.GENERALIZED_TIME, Buffer.from(String(year).padStart(4, '0') + rest, 'latin1'));
}

function contextTag(tagNumber: number, base: number): number {
  if (!Number.isInteger(tagNumber) || tagNumber < 0 || tagNumber > MAX_SHORT_TAG) {
    throw new RangeError(`context tag [${tagNumber}]`);
  }
  return base | tagNumber;
}

/** `[tagNumber] EXPLICIT`: a constructed context-specific TLV around the whole encoding `inner`. */
export function explicit(tagNumber: number, inner: Uint8Array): Buffer {
  return tlv(contextTag(tagNumber, CONTEXT_CONSTRUCTED), inner);
}

/**
 * `[tagNumber] IMPLICIT`: the context-specific tag in place of the underlying type's, over that type's
 * content octets only (`[2]` dNSName, `[7]` iPAddress, `[0]` keyIdentifier). Constructed when the
 * underlying type is (a SEQUENCE's content).
 */
export function implicit(tagNumber: number, content: Uint8Array, constructed = false): Buffer {
  return tlv(contextTag(tagNumber, constructed ? CONTEXT_CONSTRUCTED : CONTEXT_PRIMITIVE), content);
}
