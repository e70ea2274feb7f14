/**
 * The per-sandbox certificate authority of the credential broker (issue 27 item 2): the broker
 * terminates TLS for some hosts, so sandbox code must trust a CA, and a CA of its own sandbox only, made
 * when the sandbox starts. Its private key is a `KeyObject` in a private field of sandboxd's memory:
 * never exported, written to a file, logged or shown by `util.inspect` / `JSON.stringify`; a leaked
 * certificate lets nobody issue, and a sandbox's CA is worth nothing to another sandbox. Certificates
 * are built here with `der.ts` because `node:crypto` signs but cannot make X.509.
 */
import { Buffer } from 'node:buffer';
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import {
  bitString,
  boolean,
  explicit,
  ia5Bytes,
  implicit,
  integer,
  objectIdentifier,
  octetString,
  sequence,
  setOf,
  smallInteger,
  time,
  utf8String,
} from './der.js';

/** What a leaf certificate is served with: a PEM chain (the leaf, then the CA) and the leaf's own key. */
export interface LeafCredentials {
  /** The leaf certificate then the CA certificate, PEM, for `tls.createSecureContext({ cert })`. */
  readonly cert: string;
  /** The leaf's own P-256 private key (PKCS #8 PEM), for `tls.createSecureContext({ key })`. */
  readonly key: string;
}

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Certificates start an hour back, so a sandbox clock a little behind the host's still accepts them. */
const BACKDATE_MS = HOUR_MS;
/** A leaf lives a week at most (and never past the CA). */
const LEAF_LIFETIME_MS = 7 * DAY_MS;
/** A cached leaf this close to its end is made anew, so none served is about to expire. */
const LEAF_RENEW_MS = DAY_MS;
/** Hosts whose leaves are kept; past it the least recently used goes (bounded memory, issue 24). */
const LEAF_CACHE_SIZE = 256;
const DEFAULT_DAYS = 30;
/** A CA's longest life: the broker's CA lives as long as its sandbox, not for ages. */
const MAX_DAYS = 36_500;
/** ub-common-name (RFC 5280 appendix A): a CN of at most 64 characters. */
const MAX_COMMON_NAME = 64;
const CA_NAME_PREFIX = 'sandbox ';
const CA_NAME_SUFFIX = ' egress CA';
const MAX_LABEL = MAX_COMMON_NAME - CA_NAME_PREFIX.length - CA_NAME_SUFFIX.length;
const MAX_HOST = 253;
const MAX_HOST_LABEL = 63;

/** keyUsage bits (RFC 5280 §4.2.1.3), numbered from the first byte's top bit. */
const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;

const SIGNATURE_ALGORITHM = sequence(objectIdentifier(OID.ecdsaWithSha256));

/** A host as the leaf names it: a lower-case DNS name, or an IPv4 address with its four bytes. */
type Host =
  | { readonly kind: 'dns'; readonly name: string }
  | { readonly kind: 'ip'; readonly name: string; readonly bytes: Buffer };

interface CachedLeaf {
  readonly credentials: LeafCredentials;
  readonly notAfter: number;
}

/**
 * A per-sandbox certificate authority: an EC P-256 key held in memory only and its self-signed
 * certificate, issuing a short-lived server certificate per host for the credential broker's TLS.
 *
 * @example
 * ```ts
 * const ca = CertificateAuthority.create(sandboxId);
 * writeTrustBundle(ca.certificatePem); // what the sandbox trusts
 * const server = tls.createServer({
 *   SNICallback: (name, done) => done(null, tls.createSecureContext(ca.leaf(name))),
 * });
 * ```
 */
export class CertificateAuthority {
  readonly #label: string;
  /** The CA's private key: only ever passed to `crypto.sign`. */
  readonly #key: KeyObject;
  readonly #certificatePem: string;
  readonly #fingerprint256: string;
  /** The CA's subject, byte for byte the issuer of every leaf (name chaining compares encodings). */
  readonly #subject: Buffer;
  readonly #keyIdentifier: Buffer;
  readonly #notAfter: number;
  /** Leaves by host, least recently used first. */
  readonly #leaves = new Map<string, CachedLeaf>();

  private constructor(label: string, days: number) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const now = Date.now();
    const notBefore = now - BACKDATE_MS;
    this.#label = label;
    this.#key = privateKey;
    this.#subject = commonNameOnly(`${CA_NAME_PREFIX}${label}${CA_NAME_SUFFIX}`);
    this.#keyIdentifier = keyIdentifier(publicKey);
    this.#notAfter = wholeSecond(now + days * DAY_MS);
    const der = this.#issue({
      subject: this.#subject,
      publicKey,
      notBefore,
      notAfter: this.#notAfter,
      extensions: [
        extension(OID.basicConstraints, true, sequence(boolean(true), smallInteger(0))),
        extension(OID.keyUsage, true, keyUsage(KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign)),
        extension(OID.subjectKeyIdentifier, false, octetString(this.#keyIdentifier)),
      ],
    });
    this.#certificatePem = pem(der);
    this.#fingerprint256 = fingerprint(der);
  }

  /**
   * A new CA: a fresh P-256 key pair and a self-signed certificate valid from an hour ago for `days` days
   * (default 30), subject CN `sandbox <label> egress CA`, basicConstraints CA:TRUE pathLen 0 and keyUsage
   * keyCertSign, cRLSign (both critical), and a subjectKeyIdentifier. Throws a TypeError for a label that
   * is empty, longer than 46 characters or holds a control character, a RangeError for `days` not an
   * integer from 1 to 36,500.
   */
  static create(label: string, days: number = DEFAULT_DAYS): CertificateAuthority {
    // The CN must fit ub-common-name, and a control character has no business in a name shown to users.
    if (label.length === 0 || label.length > MAX_LABEL || /[\p{Cc}]/u.test(label)) {
      throw new TypeError(`CA label must be 1 to ${MAX_LABEL} characters without control characters`);
    }
    if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
      throw new RangeError(`CA days must be an integer from 1 to ${MAX_DAYS}`);
    }
    return new CertificateAuthority(label, days);
  }

  /** The label the CA was made with (the sandbox it belongs to). */
  get label(): string {
    return this.#label;
  }

  /** The CA certificate, PEM: what the sandbox trusts. */
  get certificatePem(): string {
    return this.#certificatePem;
  }

  /** SHA-256 of the CA certificate, as `X509Certificate.fingerprint256` shows it (`AB:CD:…`). */
  get fingerprint256(): string {
    return this.#fingerprint256;
  }

  /**
   * The certificate chain and key to serve `host` with: a DNS name (lower-cased, a trailing dot dropped)
   * or a dotted IPv4 address, which gets an IP subjectAltName. The leaf has its own new P-256 key, a random
   * 16-byte serial, validity from an hour ago to the earlier of the CA's end and a week on, subject CN the
   * host (none past 64 characters, the SAN then critical), subjectAltName, basicConstraints CA:FALSE,
   * keyUsage digitalSignature (critical), extKeyUsage serverAuth and the CA's key identifier, signed
   * ecdsa-with-SHA256. Kept per host (256 hosts, least recently used dropped) and made anew within a day
   * of its end (unless it ends with the CA), so the same host gets the same object meanwhile. Throws a
   * TypeError for any other host: labels of `[a-z0-9-]`, 1 to 63 each, at most 253 in all, the last not
   * all digits.
   */
  leaf(host: string): LeafCredentials {
    const parsed = parseHost(host);
    const now = Date.now();
    const cached = this.#leaves.get(parsed.name);
    // Near its end a leaf is made anew, unless it already ends with the CA (a new one could not last longer).
    if (
      cached !== undefined &&
      (cached.notAfter - now > LEAF_RENEW_MS || cached.notAfter >= this.#notAfter)
    ) {
      this.#leaves.delete(parsed.name);
      this.#leaves.set(parsed.name, cached);
      return cached.credentials;
    }
    const made = this.#makeLeaf(parsed, now);
    this.#leaves.delete(parsed.name);
    this.#leaves.set(parsed.name, made);
    while (this.#leaves.size > LEAF_CACHE_SIZE) {
      const oldest = this.#leaves.keys().next();
      if (oldest.done === true) break;
      this.#leaves.delete(oldest.value);
    }
    return made.credentials;
  }

  #makeLeaf(host: Host, now: number): CachedLeaf {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const notAfter = Math.min(this.#notAfter, wholeSecond(now + LEAF_LIFETIME_MS));
    // A CN is at most 64 characters; past that the subject is empty and the SAN must be critical
    // (RFC 5280 §4.2.1.6). Clients match on the SAN either way.
    const named = host.name.length <= MAX_COMMON_NAME;
    const altName = host.kind === 'ip' ? implicit(7, host.bytes) : implicit(2, ia5Bytes(host.name));
    const der = this.#issue({
      subject: named ? commonNameOnly(host.name) : sequence(),
      publicKey,
      notBefore: now - BACKDATE_MS,
      notAfter,
      extensions: [
        extension(OID.basicConstraints, true, sequence()),
        extension(OID.keyUsage, true, keyUsage(KEY_USAGE.digitalSignature)),
        extension(OID.extKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
        extension(OID.subjectAltName, !named, sequence(altName)),
        extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(publicKey))),
        extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, this.#keyIdentifier))),
      ],
    });
    const credentials: LeafCredentials = Object.freeze({
      cert: pem(der) + this.#certificatePem,
      key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    return { credentials, notAfter };
  }

  /** A v3 certificate this CA signs: the TBSCertificate (RFC 5280 §4.1), its algorithm, its signature. */
  #issue(fields: {
    readonly subject: Buffer;
    readonly publicKey: KeyObject;
    readonly notBefore: number;
    readonly notAfter: number;
    readonly extensions: readonly Buffer[];
  }): Buffer {
    const tbs = sequence(
      explicit(0, smallInteger(2)), // v3
      integer(serialNumber()),
      SIGNATURE_ALGORITHM,
      this.#subject,
      sequence(time(new Date(fields.notBefore)), time(new Date(fields.notAfter))),
      fields.subject,
      fields.publicKey.export({ type: 'spki', format: 'der' }),
      explicit(3, sequence(...fields.extensions)),
    );
    const signature = sign('sha256', tbs, { key: this.#key, dsaEncoding: 'der' });
    return sequence(tbs, SIGNATURE_ALGORITHM, bitString(signature));
  }

  /** What `util.inspect` shows: the label and the certificate's fingerprint, no key. */
  [inspect.custom](): string {
    return `CertificateAuthority { label: ${JSON.stringify(this.#label)}, fingerprint256: '${this.#fingerprint256}' }`;
  }

  /** What `JSON.stringify` shows: the label and the certificate's fingerprint, no key. */
  toJSON(): { readonly label: string; readonly fingerprint256: string } {
    return { label: this.#label, fingerprint256: this.#fingerprint256 };
  }

  /** The label and fingerprint, as in logs. */
  toString(): string {
    return `CertificateAuthority(${this.#label}, ${this.#fingerprint256})`;
  }
}

/** `host` checked and normalised, or a TypeError. */
function parseHost(host: string): Host {
  const ip = ipv4(host);
  if (ip !== undefined) return { kind: 'ip', name: host, bytes: ip };
  const name = (host.endsWith('.') ? host.slice(0, -1) : host).toLowerCase();
  const labels = name.split('.');
  const valid =
    name.length > 0 &&
    name.length <= MAX_HOST &&
    labels.every((label) => label.length <= MAX_HOST_LABEL && /^[a-z0-9-]+$/.test(label)) &&
    // An all-digit last label is no DNS name (RFC 3696 §2): `1.2.3` or `10.0.0.256` is a bad address.
    !/^[0-9]+$/.test(labels[labels.length - 1] ?? '');
  if (!valid) throw new TypeError(`not a host name or IPv4 address: ${JSON.stringify(host.slice(0, 300))}`);
  return { kind: 'dns', name };
}

/** The four bytes of a dotted-decimal IPv4 address (no leading zeros, which some read as octal). */
function ipv4(text: string): Buffer | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9][0-9]{0,2})$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? Buffer.from(bytes) : undefined;
}

/** A Name of one RDN, the common name. */
function commonNameOnly(commonName: string): Buffer {
  return sequence(setOf(sequence(objectIdentifier(OID.commonName), utf8String(commonName))));
}

/** An Extension; `critical` is left out when false, as DER leaves out a DEFAULT value. */
function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  return sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** A keyUsage BIT STRING with the given bits set, trailing zero bits left out (X.690 §11.2.2). */
function keyUsage(...bits: readonly number[]): Buffer {
  const bytes = Buffer.alloc(2);
  for (const bit of bits) bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) | (0x80 >> (bit & 7));
  const highest = Math.max(...bits);
  const used = bytes.subarray(0, (highest >> 3) + 1);
  return bitString(used, 7 - (highest & 7));
}

/**
 * A key identifier: the first 160 bits of SHA-256 over the subjectPublicKey bits (RFC 7093 §2 method
 * 1), here the uncompressed P-256 point.
 */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const { x, y } = publicKey.export({ format: 'jwk' });
  if (x === undefined || y === undefined) throw new TypeError('not an EC public key');
  const point = Buffer.concat([Buffer.of(0x04), Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')]);
  return createHash('sha256').update(point).digest().subarray(0, 20);
}

/** 16 random bytes, top bit clear and the next set: positive, never zero, always 16 bytes long. */
function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes;
}

/** `ms` rounded down to a whole second, as the certificate holds it. */
function wholeSecond(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

function pem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function fingerprint(der: Buffer): string {
  return (createHash('sha256').update(der).digest('hex').toUpperCase().match(/../g) ?? []).join(':');
}
