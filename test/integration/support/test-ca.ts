/**
 * A certificate authority made at test time with openssl, and a server certificate it signs. Each call
 * makes a fresh CA, so certificates of one call are not trusted by the CA of another.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A CA and one server certificate. */
export interface TestPki {
  /** The CA certificate, PEM. */
  readonly caPem: string;
  /** Server certificate and key files. */
  readonly certFile: string;
  readonly keyFile: string;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/**
 * Makes a CA and a server certificate for `ips` and `dnsNames` in `dir`, file names prefixed by `name`.
 */
export function makeTestPki(
  dir: string,
  name: string,
  ips: readonly string[],
  dnsNames: readonly string[] = [],
): TestPki {
  const file = (suffix: string): string => join(dir, `${name}-${suffix}`);
  const run = (args: readonly string[]): void => {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  run([
    'req',
    '-x509',
    ...EC,
    '-days',
    '2',
    '-subj',
    `/CN=${name} test CA`,
    '-keyout',
    file('ca-key.pem'),
    '-out',
    file('ca.pem'),
  ]);
  run(['req', ...EC, '-subj', `/CN=${name} upstream`, '-keyout', file('key.pem'), '-out', file('csr.pem')]);
  const san = [...ips.map((ip) => `IP:${ip}`), ...dnsNames.map((dns) => `DNS:${dns}`)].join(',');
  writeFileSync(file('ext.cnf'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  run([
    'x509',
    '-req',
    '-in',
    file('csr.pem'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca-key.pem'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    file('ext.cnf'),
    '-out',
    file('cert.pem'),
  ]);
  return {
    caPem: readFileSync(file('ca.pem'), 'utf8'),
    certFile: file('cert.pem'),
    keyFile: file('key.pem'),
  };
}
