/**
 * DNS messages (RFC 1035 §4) as sandboxd's stub resolver reads and writes them: it answers sandbox code's
 * queries itself, deciding on the name asked for, and forwards the ones it allows. Parsing is strict
 * where sandbox code writes (a query is one plain question, its name uncompressed printable labels) and
 * careful where an upstream writes (every length checked, compression pointers only backwards). Answers
 * carry A and AAAA records only, and always fit 512 bytes: sandboxd never sets TC, so a client never
 * retries over TCP, which the filter does not serve.
 */
import { Buffer } from 'node:buffer';

/** Record types sandboxd reads or writes. */
export const DNS_TYPE = { A: 1, AAAA: 28, CNAME: 5 } as const;

/** Response codes (RFC 1035 §4.1.1). */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** A query as sandbox code sent it. */
export interface DnsQuery {
  readonly id: number;
  readonly recursionDesired: boolean;
  /** The name asked for: lower case, no trailing dot. */
  readonly name: string;
  readonly type: number;
  readonly qclass: number;
  /** The raw question section, echoed in answers as sent (case included: some clients check it). */
  readonly question: Buffer;
}

/** An address record of an answer. */
export interface DnsRecord {
  readonly type: 'A' | 'AAAA';
  /** Dotted IPv4, or IPv6 text (read back compressed, lower-case hex). */
  readonly address: string;
  /** Seconds. */
  readonly ttl: number;
}

/** The largest DNS message over UDP without EDNS (RFC 1035 §4.2.1). */
const MAX_UDP_MESSAGE = 512;
const HEADER_LENGTH = 12;
const CLASS_IN = 1;
const MAX_LABEL = 63;
/** The longest name as text, without its trailing dot (255 octets on the wire). */
const MAX_NAME = 253;
/** The TTL field is unsigned, but RFC 2181 §8 reads values above 2^31-1 as 0. */
const MAX_TTL = 0x7fffffff;
/** Where the question's name starts: the pointer every answer record's name is. */
const QUESTION_NAME_POINTER = 0xc000 | HEADER_LENGTH;

// Header flag bits (RFC 1035 §4.1.1).
const QR = 0x8000;
const OPCODE_MASK = 0x7800;
const RD = 0x0100;
const RA = 0x0080;
const RCODE_MASK = 0x000f;

/**
 * `text` as a name the filter compares: lower case, trailing dot dropped, or undefined unless its labels
 * are 1 to 63 bytes of printable ASCII (0x21–0x7e) and the whole is at most 253 characters. The name a
 * DNS question, a TLS server_name and a policy entry are held to alike.
 *
 * @example
 * ```ts
 * dnsName('PyPI.org.'); // 'pypi.org'
 * dnsName('a..b');      // undefined
 * ```
 */
export function dnsName(text: string): string | undefined {
  const name = text.endsWith('.') ? text.slice(0, -1) : text;
  if (name.length === 0 || name.length > MAX_NAME) return undefined;
  for (const label of name.split('.')) {
    if (label.length === 0 || label.length > MAX_LABEL || !/^[\x21-\x7e]+$/.test(label)) return undefined;
  }
  return name.toLowerCase();
}

/**
 * Reads sandbox code's query, or undefined unless it is a standard query (QR 0, OPCODE 0) with one
 * question, no answer or authority records and at most one additional record (an EDNS OPT, not read),
 * whose name is plain labels: a compression pointer is refused (a query has nothing to point to), as is
 * a name `dnsName` refuses. The root name is refused too: sandbox code has nothing to ask it.
 */
export function parseQuery(message: Buffer): DnsQuery | undefined {
  if (message.length < HEADER_LENGTH) return undefined;
  const flags = message.readUInt16BE(2);
  if ((flags & QR) !== 0 || (flags & OPCODE_MASK) !== 0) return undefined;
  const [qdcount, ancount, nscount, arcount] = [4, 6, 8, 10].map((at) => message.readUInt16BE(at));
  if (qdcount !== 1 || ancount !== 0 || nscount !== 0 || (arcount !== 0 && arcount !== 1)) return undefined;
  const labels: string[] = [];
  let at = HEADER_LENGTH;
  for (;;) {
    const length = message[at];
    if (length === undefined || length > MAX_LABEL) return undefined; // also pointers (0xc0) and 0x40/0x80
    at += 1;
    if (length === 0) break;
    if (at + length > message.length) return undefined;
    const label = message.toString('latin1', at, at + length);
    // A '.' inside a label would read as two labels once the name is text.
    if (label.includes('.')) return undefined;
    labels.push(label);
    at += length;
  }
  const name = dnsName(labels.join('.'));
  if (name === undefined || labels.length === 0 || at + 4 > message.length) return undefined;
  return {
    id: message.readUInt16BE(0),
    recursionDesired: (flags & RD) !== 0,
    name,
    type: message.readUInt16BE(at),
    qclass: message.readUInt16BE(at + 2),
    question: Buffer.from(message.subarray(HEADER_LENGTH, at + 4)), // a copy: the caller may reuse its buffer
  };
}

/**
 * A response to `query`: its id, QR 1, OPCODE 0, AA 0, RD as asked, RA 1, `rcode`; the question echoed
 * and `records` as answers (name a pointer to the question's, class IN, TTL clamped to 0..2^31-1). No
 * authority or additional records. Records that would take the message past 512 bytes are dropped from
 * the end; TC is never set.
 *
 * @throws RangeError when `rcode` is not 0..15 or a record's address is not of its type
 */
export function buildAnswer(query: DnsQuery, rcode: number, records: readonly DnsRecord[]): Buffer {
  if (!Number.isInteger(rcode) || rcode < 0 || rcode > RCODE_MASK) throw new RangeError('rcode out of range');
  const answers: Buffer[] = [];
  let length = HEADER_LENGTH + query.question.length;
  for (const record of records) {
    const answer = answerRecord(record);
    if (length + answer.length > MAX_UDP_MESSAGE) break;
    answers.push(answer);
    length += answer.length;
  }
  const header = Buffer.alloc(HEADER_LENGTH);
  header.writeUInt16BE(query.id & 0xffff, 0);
  header.writeUInt16BE(QR | (query.recursionDesired ? RD : 0) | RA | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  return Buffer.concat([header, query.question, ...answers]);
}

/** One answer record of `record`. */
function answerRecord(record: DnsRecord): Buffer {
  const rdata = record.type === 'A' ? ipv4Bytes(record.address) : ipv6Bytes(record.address);
  if (rdata === undefined) throw new RangeError(`not an ${record.type} address`);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(QUESTION_NAME_POINTER, 0);
  fixed.writeUInt16BE(record.type === 'A' ? DNS_TYPE.A : DNS_TYPE.AAAA, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(clampTtl(record.ttl), 6);
  fixed.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([fixed, rdata]);
}

function clampTtl(ttl: number): number {
  if (Number.isNaN(ttl)) return 0;
  return Math.min(Math.max(Math.floor(ttl), 0), MAX_TTL);
}

/**
 * A standard recursive query (RD 1, one question of class IN, no EDNS) for `name` (a trailing dot is
 * allowed); `parseQuery` reads it back.
 *
 * @throws RangeError when `id` or `type` is not 0..65535 or `name` is not one `dnsName` accepts
 */
export function buildQuery(id: number, name: string, type: number): Buffer {
  for (const value of [id, type]) {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff) throw new RangeError('not a 16-bit value');
  }
  if (dnsName(name) === undefined) throw new RangeError('not a DNS name');
  const labels = (name.endsWith('.') ? name.slice(0, -1) : name).split('.');
  const header = Buffer.alloc(HEADER_LENGTH);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(RD, 2);
  header.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(CLASS_IN, 2);
  const encoded = labels.map((label) => {
    const bytes = Buffer.from(label, 'latin1');
    return Buffer.concat([Buffer.of(bytes.length), bytes]);
  });
  return Buffer.concat([header, ...encoded, Buffer.of(0), tail]);
}

/**
 * The response code and the A and AAAA records (class IN) of an upstream's response to the query `id`,
 * or undefined unless it is a response (QR 1, OPCODE 0) with that id whose questions and answer records
 * are all well formed. Other answer records (CNAME…) are skipped; authority and additional sections are
 * not read. Names may be compressed: pointers must point backwards, so following them ends.
 */
export function parseAnswerAddresses(
  message: Buffer,
  id: number,
): { rcode: number; records: DnsRecord[] } | undefined {
  if (message.length < HEADER_LENGTH || message.readUInt16BE(0) !== id) return undefined;
  const flags = message.readUInt16BE(2);
  if ((flags & QR) === 0 || (flags & OPCODE_MASK) !== 0) return undefined;
  const qdcount = message.readUInt16BE(4);
  const ancount = message.readUInt16BE(6);
  let at: number | undefined = HEADER_LENGTH;
  for (let i = 0; i < qdcount; i++) {
    at = skipName(message, at);
    if (at === undefined || at + 4 > message.length) return undefined;
    at += 4;
  }
  const records: DnsRecord[] = [];
  for (let i = 0; i < ancount; i++) {
    at = skipName(message, at);
    if (at === undefined || at + 10 > message.length) return undefined;
    const type = message.readUInt16BE(at);
    const qclass = message.readUInt16BE(at + 2);
    const rawTtl = message.readUInt32BE(at + 4);
    const rdlength = message.readUInt16BE(at + 8);
    const rdata = at + 10;
    at = rdata + rdlength;
    if (at > message.length) return undefined;
    if (qclass !== CLASS_IN || (type !== DNS_TYPE.A && type !== DNS_TYPE.AAAA)) continue;
    const ttl = rawTtl > MAX_TTL ? 0 : rawTtl;
    // An address of the wrong size is a broken answer, not one to guess at.
    if (type === DNS_TYPE.A) {
      if (rdlength !== 4) return undefined;
      records.push({ type: 'A', address: ipv4Text(message.subarray(rdata, at)), ttl });
    } else {
      if (rdlength !== 16) return undefined;
      records.push({ type: 'AAAA', address: ipv6Text(message.subarray(rdata, at)), ttl });
    }
  }
  return { rcode: flags & RCODE_MASK, records };
}

/**
 * Where the name at `start` ends in `message` (after its terminating zero or its first pointer), or
 * undefined when it runs out of the message, uses a reserved label type, points forwards or to itself,
 * or is longer than 255 octets. Pointers strictly backwards cannot loop.
 */
function skipName(message: Buffer, start: number): number | undefined {
  let at = start;
  let end: number | undefined; // after the first pointer, where the record goes on
  let octets = 0;
  for (;;) {
    const length = message[at];
    if (length === undefined) return undefined;
    if (length >= 0xc0) {
      const second = message[at + 1];
      if (second === undefined) return undefined;
      const target = ((length & 0x3f) << 8) | second;
      if (target >= at) return undefined;
      end ??= at + 2;
      at = target;
      continue;
    }
    if (length > MAX_LABEL) return undefined; // 0x40 and 0x80: reserved label types
    octets += length + 1;
    if (octets > 255) return undefined;
    if (length === 0) return end ?? at + 1;
    at += 1 + length;
  }
}

/** The 4 bytes of a dotted IPv4 address (no leading zeros), or undefined. */
function ipv4Bytes(text: string): Buffer | undefined {
  const parts = text.split('.');
  if (
    parts.length !== 4 ||
    !parts.every((part) => /^(?:0|[1-9]\d{0,2})$/.test(part) && Number(part) <= 255)
  ) {
    return undefined;
  }
  return Buffer.from(parts.map(Number));
}

/**
 * The 16 bytes of IPv6 text: hex groups, at most one `::`, perhaps a dotted IPv4 tail; no zone id
 * (an answer's address has none). Undefined otherwise.
 */
function ipv6Bytes(text: string): Buffer | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups: number[] = [];
    const pieces = part.split(':');
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = ipv4Bytes(piece);
        if (v4 === undefined) return undefined;
        groups.push(v4.readUInt16BE(0), v4.readUInt16BE(2));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) groups.push(parseInt(piece, 16));
      else return undefined;
    }
    return groups;
  };
  const head = groupsOf(halves[0] ?? '');
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return undefined;
  // A dotted tail only ends the address.
  if (halves.length === 2 && head.length > 0 && halves[0]?.includes('.') === true) return undefined;
  const zeros = 8 - head.length - tail.length;
  if (halves.length === 2 ? zeros < 1 : zeros !== 0) return undefined;
  const bytes = Buffer.alloc(16);
  [...head, ...Array<number>(zeros).fill(0), ...tail].forEach((group, i) =>
    bytes.writeUInt16BE(group, i * 2),
  );
  return bytes;
}

function ipv4Text(bytes: Buffer): string {
  return [...bytes].join('.');
}

/** RFC 5952 text: lower-case hex, the first longest run of two or more zero groups as `::`. */
function ipv6Text(bytes: Buffer): string {
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2));
  let [bestStart, bestLength] = [-1, 1];
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (list: number[]): string => list.map((group) => group.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}
