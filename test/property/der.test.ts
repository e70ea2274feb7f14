/**
 * The egress CA's DER encoders (`daemon/egress/der.ts`), as properties: INTEGERs and lengths match a
 * reference written from X.690 by other means (bigints, arithmetic) and read back through OpenSSL, which
 * refuses a padded INTEGER in a certificate and re-encodes an ECDSA signature to compare it, so only the
 * one DER form passes; times of either encoding read back to the second; and any host name or IPv4
 * address gets a leaf Node parses and matches.
 */
import { Buffer } from 'node:buffer';
import { generateKeyPairSync, sign, verify, X509Certificate } from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { CertificateAuthority } from '../../daemon/egress/certificate-authority.js';
import {
  bitString,
  encodeLength,
  explicit,
  integer,
  objectIdentifier,
  sequence,
  setOf,
  smallInteger,
  time,
  utf8String,
} from '../../daemon/egress/der.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ECDSA_SHA256 = sequence(objectIdentifier('1.2.840.10045.4.3.2'));
const SPKI = publicKey.export({ type: 'spki', format: 'der' });

/** A name of one common name. */
const name = (commonName: string) =>
  sequence(setOf(sequence(objectIdentifier('2.5.4.3'), utf8String(commonName))));

/** A minimal signed v1-style certificate (with a v3 version field) around the given parts. */
function certificate(parts: {
  serial?: Buffer;
  commonName?: string;
  notBefore?: Date;
  notAfter?: Date;
}): X509Certificate {
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    parts.serial ?? integer(Buffer.of(1)),
    ECDSA_SHA256,
    name('der test'),
    sequence(time(parts.notBefore ?? new Date(0)), time(parts.notAfter ?? new Date(0))),
    name(parts.commonName ?? 'der test'),
    SPKI,
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  return new X509Certificate(sequence(tbs, ECDSA_SHA256, bitString(signature)));
}

/** X.690's length octets, by arithmetic on the number's hex digits. */
function referenceLength(length: number): Buffer {
  if (length < 128) return Buffer.of(length);
  let hex = length.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.concat([Buffer.of(0x80 + hex.length / 2), Buffer.from(hex, 'hex')]);
}

/** X.690's INTEGER of a non-negative bigint: its fewest two's complement octets. */
function referenceInteger(value: bigint): Buffer {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  if (parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  const content = Buffer.from(hex, 'hex');
  return Buffer.concat([Buffer.of(0x02), referenceLength(content.length), content]);
}

const toBigInt = (bytes: Uint8Array): bigint =>
  bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);

/** Byte strings often led by zeros or a high bit, of lengths around the one- and two-octet length edges. */
const magnitude = fc
  .tuple(
    fc.integer({ min: 0, max: 3 }),
    fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      fc
        .constantFrom(125, 126, 127, 128, 253, 254, 255, 256)
        .chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
    ),
  )
  .map(([zeros, bytes]) => Buffer.concat([Buffer.alloc(zeros), bytes]));

const BOUNDARIES = [
  0, 1, 126, 127, 128, 129, 254, 255, 256, 257, 65_534, 65_535, 65_536, 65_537, 16_777_215, 16_777_216,
];

test.prop([fc.oneof(fc.constantFrom(...BOUNDARIES), fc.integer({ min: 0, max: 2 ** 32 }))], { numRuns: 300 })(
  'a length has its fewest octets',
  (length) => {
    expect(encodeLength(length).toString('hex')).toBe(referenceLength(length).toString('hex'));
  },
);

test.prop([magnitude], { numRuns: 300 })('an INTEGER is its value in its fewest octets', (bytes) => {
  expect(integer(bytes).toString('hex')).toBe(referenceInteger(toBigInt(bytes)).toString('hex'));
});

test('INTEGERs of small values match hand-written DER', () => {
  const cases: readonly (readonly [number[], string])[] = [
    [[], '020100'],
    [[0], '020100'],
    [[0, 0, 0], '020100'],
    [[1], '020101'],
    [[0x7f], '02017f'],
    [[0x80], '02020080'],
    [[0, 0x80], '02020080'],
    [[0xff], '020200ff'],
    [[0x01, 0x00], '02020100'],
    [[0, 0, 0x7f, 0xff], '02027fff'],
  ];
  for (const [bytes, hex] of cases) expect(integer(Buffer.from(bytes)).toString('hex'), hex).toBe(hex);
  expect(smallInteger(0).toString('hex')).toBe('020100');
  expect(smallInteger(256).toString('hex')).toBe('02020100');
});

test.prop([magnitude], { numRuns: 100 })(
  "an INTEGER reads back as a certificate's serial (OpenSSL refuses padding there)",
  (bytes) => {
    const cert = certificate({ serial: integer(bytes) });
    const hex = toBigInt(bytes).toString(16).toUpperCase();
    expect(BigInt(`0x${cert.serialNumber}`)).toBe(toBigInt(bytes));
    expect(cert.serialNumber.replace(/^0+(?=.)/, '')).toBe(hex);
    expect(cert.verify(publicKey)).toBe(true);
    // The same value with a redundant leading zero octet: OpenSSL refuses it, so the check above has teeth.
    const padded = Buffer.concat([Buffer.of(0x02), encodeLength(bytes.length + 2), Buffer.of(0, 0), bytes]);
    expect(() => certificate({ serial: padded })).toThrow();
  },
);

test.prop([fc.uint8Array({ maxLength: 64 }), fc.nat(3), fc.nat(3)], { numRuns: 200 })(
  'an ECDSA signature re-encoded from r and s with leading zeros verifies (OpenSSL compares its own DER)',
  (message, zerosR, zerosS) => {
    const raw = sign('sha256', message, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    const r = Buffer.concat([Buffer.alloc(zerosR), raw.subarray(0, 32)]);
    const s = Buffer.concat([Buffer.alloc(zerosS), raw.subarray(32)]);
    const der = sequence(integer(r), integer(s));
    expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, der)).toBe(true);
    const padded = sequence(Buffer.concat([Buffer.of(0x02, 34, 0, 0), raw.subarray(0, 32)]), integer(s));
    expect(verify('sha256', message, { key: publicKey, dsaEncoding: 'der' }, padded)).toBe(false);
  },
);

test.prop([fc.constantFrom(1, 126, 127, 128, 129, 254, 255, 256, 257, 65_534, 65_535, 65_536, 65_537)], {
  numRuns: 40,
})('a common name of a length at a length edge reads back whole', (length) => {
  const commonName = 'a'.repeat(length);
  const cert = certificate({ commonName });
  expect(cert.subject).toBe(`CN=${commonName}`);
  expect(cert.verify(publicKey)).toBe(true);
});

test.prop(
  [
    fc.date({
      min: new Date('1950-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59Z'),
      noInvalidDate: true,
    }),
  ],
  { numRuns: 300 },
)('a time reads back to the second, UTCTime before 2050 and GeneralizedTime after', (date) => {
  const encoded = time(date);
  expect(encoded[0]).toBe(date.getUTCFullYear() < 2050 ? 0x17 : 0x18);
  const cert = certificate({ notBefore: date, notAfter: date });
  expect(Date.parse(cert.validFrom)).toBe(Math.floor(date.getTime() / 1000) * 1000);
});

const ca = CertificateAuthority.create('property');
const caCert = new X509Certificate(ca.certificatePem);

/** LDH labels (any case), joined; at most 253 characters; the last label not all digits. */
const hostName = fc
  .array(fc.stringMatching(/^[a-zA-Z0-9-]{1,63}$/), { minLength: 1, maxLength: 6 })
  .map((labels) => {
    const kept = [...labels];
    while (kept.join('.').length > 253) kept.pop();
    return kept.join('.');
  })
  .filter((host) => !/(^|\.)[0-9]+$/.test(host));
const longHostName = fc
  .array(fc.stringMatching(/^[a-z0-9]{63}$/), { minLength: 2, maxLength: 4 })
  .map((labels) => labels.join('.').slice(0, 253).replace(/\.$/, ''))
  .filter((host) => !/(^|\.)[0-9]+$/.test(host));

const leafOf = (host: string) =>
  new X509Certificate(ca.leaf(host).cert.split(/(?<=-----END CERTIFICATE-----\n)/)[0] ?? '');

test.prop([fc.oneof(hostName, longHostName)], { numRuns: 150 })(
  'any host name gets a leaf Node parses, matches and chains to the CA',
  (host) => {
    const leaf = leafOf(host);
    expect(leaf.checkHost(host.toLowerCase())).toBe(host.toLowerCase());
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
  },
);

test.prop([fc.ipV4()], { numRuns: 100 })('any IPv4 address gets a leaf with an IP SAN', (address) => {
  const leaf = leafOf(address);
  expect(leaf.checkIP(address)).toBe(address);
  expect(leaf.verify(caCert.publicKey)).toBe(true);
});
