/**
 * Where a request to the egress proxy asks to go (issue 27): names normalised as egress entries are,
 * only dotted-decimal IPv4 addresses (every other spelling of an address is what hides a forbidden
 * one), no IPv6, ports 1 to 65535, and absolute-form targets of plain `http://` only.
 */
import { describe, expect, it } from 'vitest';
import { absoluteTarget, connectTarget } from '../../../../daemon/egress/proxy-target.js';

describe('a CONNECT target', () => {
  it('is a name or a dotted-decimal IPv4 address with a port', () => {
    expect(connectTarget('API.Example.test.:443')).toEqual({
      kind: 'name',
      host: 'api.example.test',
      port: 443,
    });
    expect(connectTarget('10.1.2.3:8443')).toEqual({ kind: 'address', host: '10.1.2.3', port: 8443 });
  });

  it('refuses other spellings of addresses, IPv6, wildcards and missing or bad ports', () => {
    for (const authority of [
      '0x7f.1:443',
      '2130706433:443',
      '127.1:443',
      '010.0.0.1:443',
      '[::1]:443',
      '[::ffff:127.0.0.1]:443',
      '*.example.test:443',
      'example.test',
      'example.test:0',
      'example.test:65536',
      'example.test:44x',
      ':443',
      'a b.test:443',
    ]) {
      expect(connectTarget(authority).kind, authority).toBe('invalid');
    }
  });
});

describe('an absolute-form target', () => {
  it('is plain http, its path and query kept, port 80 by default', () => {
    expect(absoluteTarget('http://Mirror.test/debian/dists?x=1')).toEqual({
      target: { kind: 'name', host: 'mirror.test', port: 80 },
      path: '/debian/dists?x=1',
    });
  });

  it('refuses https (which goes by CONNECT), a user or password, and an origin-form target', () => {
    for (const url of [
      'https://a.test/',
      'http://u:p@a.test/',
      'http://u@a.test/',
      '/path',
      'ftp://a.test/',
    ]) {
      expect(absoluteTarget(url).target.kind, url).toBe('invalid');
    }
  });
});
