/**
 * The credential broker's per-sandbox CA (issue 27 item 2): its certificates as Node, OpenSSL and curl
 * read them, a real TLS handshake with a leaf picked by SNI, and no key material in what it shows.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createSecureContext, createServer, type Server } from 'node:tls';
import { inspect, promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CertificateAuthority } from '../../../../daemon/egress/certificate-authority.js';

const run = promisify(execFile);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const SECOND_MS = 1000;

/** The PEM blocks of a chain, in order. */
const pemBlocks = (chain: string): string[] =>
  chain.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----\n/g) ?? [];

const ca = CertificateAuthority.create('sbx-test');
const caCert = new X509Certificate(ca.certificatePem);

describe('the CA certificate', () => {
  it('is a self-signed CA for its label, valid from an hour ago for 30 days', () => {
    const before = Date.now();
    const fresh = CertificateAuthority.create('sbx-1');
    const after = Date.now();
    const cert = new X509Certificate(fresh.certificatePem);
    expect(cert.ca).toBe(true);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.subject).toBe('CN=sandbox sbx-1 egress CA');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.publicKey.asymmetricKeyDetails).toMatchObject({ namedCurve: 'prime256v1' });
    const from = Date.parse(cert.validFrom);
    const to = Date.parse(cert.validTo);
    expect(from).toBeGreaterThanOrEqual(before - HOUR_MS - SECOND_MS);
    expect(from).toBeLessThanOrEqual(after - HOUR_MS);
    expect(to).toBeGreaterThanOrEqual(before + 30 * DAY_MS - SECOND_MS);
    expect(to).toBeLessThanOrEqual(after + 30 * DAY_MS);
    expect(fresh.fingerprint256).toBe(cert.fingerprint256);
  });

  it('takes its lifetime in days, past 2049 as a GeneralizedTime', () => {
    const cert = new X509Certificate(CertificateAuthority.create('long', 365).certificatePem);
    // Back-dated an hour, then `days` long: the certificate's own window, whole seconds.
    const lifetime = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
    expect(Math.abs(lifetime - (365 * DAY_MS + HOUR_MS))).toBeLessThanOrEqual(SECOND_MS);
    const far = new X509Certificate(CertificateAuthority.create('far', 36_500).certificatePem);
    expect(new Date(far.validTo).getUTCFullYear()).toBeGreaterThan(2100);
    expect(far.verify(far.publicKey)).toBe(true);
  });

  it('refuses a bad label or lifetime', () => {
    for (const label of ['', 'x'.repeat(47), 'a\nb', 'tab\there']) {
      expect(() => CertificateAuthority.create(label)).toThrow(TypeError);
    }
    expect(() => CertificateAuthority.create('x'.repeat(46))).not.toThrow();
    for (const days of [0, -1, 1.5, Number.NaN, 36_501]) {
      expect(() => CertificateAuthority.create('x', days)).toThrow(RangeError);
    }
  });
});

describe('leaves', () => {
  it('names the host, lower-cased, is issued and signed by the CA, and is no CA', () => {
    const before = Date.now();
    const { cert, key } = ca.leaf('Registry.Example.org');
    const after = Date.now();
    const blocks = pemBlocks(cert);
    expect(blocks).toHaveLength(2);
    expect(blocks[1]).toBe(ca.certificatePem);
    const leaf = new X509Certificate(blocks[0] ?? '');
    expect(leaf.checkHost('registry.example.org')).toBe('registry.example.org');
    expect(leaf.checkHost('other.example.org')).toBeUndefined();
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.verify(leaf.publicKey)).toBe(false);
    expect(leaf.ca).toBe(false);
    expect(leaf.subject).toBe('CN=registry.example.org');
    expect(leaf.issuer).toBe(caCert.subject);
    expect(leaf.subjectAltName).toBe('DNS:registry.example.org');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(leaf.serialNumber).toMatch(/^[4-7][0-9A-F]{31}$/);
    // Made between `before` and `after`: back-dated an hour, seven days ahead (the CA lives longer).
    expect(Date.parse(leaf.validTo)).toBeLessThanOrEqual(after + 7 * DAY_MS);
    expect(Date.parse(leaf.validTo)).toBeGreaterThanOrEqual(before + 7 * DAY_MS - SECOND_MS);
    expect(Date.parse(leaf.validFrom)).toBeLessThanOrEqual(after - HOUR_MS);
    expect(Date.parse(leaf.validFrom)).toBeGreaterThanOrEqual(before - HOUR_MS - SECOND_MS);
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(leaf.checkPrivateKey(createPrivateKey(key))).toBe(true);
  });

  it('gives an IPv4 address an IP subjectAltName', () => {
    const leaf = new X509Certificate(pemBlocks(ca.leaf('10.0.2.15').cert)[0] ?? '');
    expect(leaf.checkIP('10.0.2.15')).toBe('10.0.2.15');
    expect(leaf.checkIP('10.0.2.16')).toBeUndefined();
    expect(leaf.subjectAltName).toBe('IP Address:10.0.2.15');
  });

  it('never outlives the CA, and then is kept to the end', () => {
    const short = CertificateAuthority.create('short', 2);
    const shortCa = new X509Certificate(short.certificatePem);
    const first = short.leaf('a.example');
    const leaf = new X509Certificate(pemBlocks(first.cert)[0] ?? '');
    expect(leaf.validTo).toBe(shortCa.validTo);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1.5 * DAY_MS });
    try {
      expect(short.leaf('a.example')).toBe(first); // a new one could not last longer
    } finally {
      vi.useRealTimers();
    }
  });

  it('is made anew within a day of its end', () => {
    const start = Date.now();
    const renewing = CertificateAuthority.create('renewing');
    const first = renewing.leaf('a.example');
    vi.useFakeTimers({ toFake: ['Date'], now: start + 5.9 * DAY_MS });
    try {
      expect(renewing.leaf('a.example')).toBe(first);
      vi.setSystemTime(start + 6.1 * DAY_MS);
      const second = renewing.leaf('a.example');
      expect(second).not.toBe(first);
      const leaf = new X509Certificate(pemBlocks(second.cert)[0] ?? '');
      expect(Date.parse(leaf.validTo)).toBeGreaterThan(start + 13 * DAY_MS);
      expect(Date.parse(leaf.validFrom)).toBeGreaterThan(start + 5 * DAY_MS);
      expect(renewing.leaf('a.example')).toBe(second);
    } finally {
      vi.useRealTimers();
    }
  });

  it('has a fresh key and serial per host, and the same object again for the same host', () => {
    const a = ca.leaf('a.example.com');
    expect(ca.leaf('A.EXAMPLE.COM.')).toBe(a);
    const b = ca.leaf('b.example.com');
    expect(b.key).not.toBe(a.key);
    const serial = (c: { cert: string }) => new X509Certificate(pemBlocks(c.cert)[0] ?? '').serialNumber;
    expect(serial(b)).not.toBe(serial(a));
  });

  it('keeps 256 hosts, dropping the least recently used', () => {
    const cache = CertificateAuthority.create('cache');
    const first = cache.leaf('h0.example');
    const second = cache.leaf('h1.example');
    for (let i = 2; i < 256; i++) cache.leaf(`h${i}.example`);
    expect(cache.leaf('h0.example')).toBe(first); // now the most recently used
    cache.leaf('h256.example'); // drops h1
    expect(cache.leaf('h0.example')).toBe(first);
    expect(cache.leaf('h1.example')).not.toBe(second);
  });

  it('refuses what is no host name or IPv4 address', () => {
    const bad = [
      '',
      '.',
      'a..b',
      '.example.com',
      'under_score.example',
      'space .example',
      'exämple.com',
      'x'.repeat(64) + '.example',
      Array.from({ length: 64 }, () => 'abc').join('.'), // 255 characters
      '1.2.3',
      '256.1.1.1',
      '01.2.3.4',
      'example.123',
      '*.example.com',
      '[::1]',
      '::1',
      'host:443',
    ];
    for (const host of bad) expect(() => ca.leaf(host), host).toThrow(TypeError);
    expect(() => ca.leaf('x'.repeat(63) + '.example')).not.toThrow();
  });

  it('names a host past 64 characters in a critical SAN only', () => {
    const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.example`;
    const leaf = new X509Certificate(pemBlocks(ca.leaf(host).cert)[0] ?? '');
    expect([undefined, '']).toContain(leaf.subject); // Node shows an empty Name as undefined
    expect(leaf.checkHost(host)).toBe(host);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
  });
});

describe('OpenSSL', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'egress-ca-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('verifies the chain strictly, for TLS servers, for the host', async () => {
    const { cert } = ca.leaf('registry.example.org');
    const [leafPem = '', caPem = ''] = pemBlocks(cert);
    await writeFile(join(dir, 'ca.pem'), ca.certificatePem);
    await writeFile(join(dir, 'chain.pem'), cert);
    await writeFile(join(dir, 'leaf.pem'), leafPem);
    expect(caPem).toBe(ca.certificatePem);
    const verify = (host: string) =>
      run('openssl', [
        'verify',
        '-x509_strict',
        '-purpose',
        'sslserver',
        '-verify_hostname',
        host,
        '-CAfile',
        join(dir, 'ca.pem'),
        '-untrusted',
        join(dir, 'chain.pem'),
        join(dir, 'leaf.pem'),
      ]);
    const { stdout } = await verify('registry.example.org');
    expect(stdout.trim()).toBe(`${join(dir, 'leaf.pem')}: OK`);
    await expect(verify('other.example.org')).rejects.toThrow(/hostname mismatch/);

    // Another CA's certificate: the leaf does not chain to it.
    await writeFile(join(dir, 'other.pem'), CertificateAuthority.create('other').certificatePem);
    await expect(
      run('openssl', ['verify', '-CAfile', join(dir, 'other.pem'), join(dir, 'leaf.pem')]),
    ).rejects.toThrow(/unable to get local issuer certificate/);
  });

  it('verifies strictly a leaf whose subject is empty', async () => {
    const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.example`;
    const { cert } = ca.leaf(host);
    await writeFile(join(dir, 'ca.pem'), ca.certificatePem);
    await writeFile(join(dir, 'long.pem'), pemBlocks(cert)[0] ?? '');
    const args = ['-x509_strict', '-purpose', 'sslserver', '-verify_hostname', host];
    const { stdout } = await run('openssl', [
      'verify',
      ...args,
      '-CAfile',
      join(dir, 'ca.pem'),
      join(dir, 'long.pem'),
    ]);
    expect(stdout).toMatch(/: OK\n$/);
    const text = (await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'long.pem')])).stdout;
    expect(text).toMatch(/X509v3 Subject Alternative Name: critical\s+DNS:a{60}\.b{60}\.example\n/);
  });

  it('reads the extensions asked for', async () => {
    await writeFile(join(dir, 'ca-text.pem'), ca.certificatePem);
    await writeFile(join(dir, 'leaf-text.pem'), pemBlocks(ca.leaf('registry.example.org').cert)[0] ?? '');
    const text = async (file: string) =>
      (await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, file)])).stdout;
    const caText = await text('ca-text.pem');
    expect(caText).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(caText).toMatch(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign\n/);
    expect(caText).toMatch(/X509v3 Subject Key Identifier:/);
    expect(caText).toMatch(/Signature Algorithm: ecdsa-with-SHA256/);
    expect(caText).toMatch(/Version: 3 \(0x2\)/);
    const leafText = await text('leaf-text.pem');
    expect(leafText).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(leafText).toMatch(/X509v3 Key Usage: critical\s+Digital Signature\n/);
    expect(leafText).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication\n/);
    expect(leafText).toMatch(/X509v3 Subject Alternative Name:\s+DNS:registry\.example\.org\n/);
    const ski = /X509v3 Subject Key Identifier:\s+([0-9A-F:]+)/.exec(caText)?.[1];
    expect(ski).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(leafText).toMatch(new RegExp(`X509v3 Authority Key Identifier:\\s+(keyid:)?${ski}`));
  });
});

describe('a TLS server serving leaves by SNI', () => {
  let server: Server;
  let port = 0;
  let dir = '';

  beforeAll(async () => {
    server = createServer({
      SNICallback: (servername, done) => {
        try {
          done(null, createSecureContext(ca.leaf(servername)));
        } catch (error) {
          done(error instanceof Error ? error : new Error(String(error)));
        }
      },
    });
    server.on('secureConnection', (socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () =>
        socket.end('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n'),
      );
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    dir = await mkdtemp(join(tmpdir(), 'egress-ca-tls-'));
    await writeFile(join(dir, 'ca.pem'), ca.certificatePem);
    await writeFile(join(dir, 'other.pem'), CertificateAuthority.create('other').certificatePem);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const handshake = (trusted: string) =>
    new Promise<{ authorized: boolean; subject: string }>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, servername: 'registry.example.org', ca: trusted });
      socket.once('secureConnect', () => {
        const subject = socket.getPeerX509Certificate()?.subject ?? '';
        resolve({ authorized: socket.authorized, subject });
        socket.destroy();
      });
      socket.once('error', reject);
    });

  it('completes a handshake a client trusting the CA authorises', async () => {
    await expect(handshake(ca.certificatePem)).resolves.toEqual({
      authorized: true,
      subject: 'CN=registry.example.org',
    });
  });

  it('fails verification for a client trusting another CA', async () => {
    const other = CertificateAuthority.create('other').certificatePem;
    await expect(handshake(other)).rejects.toMatchObject({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  });

  it('is answered through curl trusting the CA, and refused by curl trusting another', async () => {
    const curl = (caFile: string) =>
      run('curl', [
        '--silent',
        '--show-error',
        '--noproxy',
        '*',
        '--max-time',
        '20',
        '--cacert',
        join(dir, caFile),
        '--resolve',
        `registry.example.org:${port}:127.0.0.1`,
        `https://registry.example.org:${port}/`,
      ]);
    const { stdout } = await curl('ca.pem');
    expect(stdout).toBe('ok\n');
    await expect(curl('other.pem')).rejects.toMatchObject({ code: 60 });
  });
});

describe('what the CA shows', () => {
  it('shows the label and fingerprint, never a key', () => {
    const shown = [inspect(ca), inspect(ca, { showHidden: true, depth: 10 }), JSON.stringify(ca), String(ca)];
    for (const text of shown) {
      expect(text).toContain('sbx-test');
      expect(text).toContain(ca.fingerprint256);
      expect(text).not.toMatch(/PRIVATE|KeyObject|BEGIN/);
    }
    expect(JSON.parse(JSON.stringify(ca))).toEqual({
      label: 'sbx-test',
      fingerprint256: caCert.fingerprint256,
    });
    expect(Object.keys(ca)).toEqual([]);
    expect(Object.getOwnPropertyNames(ca)).toEqual([]);
    expect(Object.getOwnPropertySymbols(ca)).toEqual([]);
  });
});
