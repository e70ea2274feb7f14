import { describe, expect, it } from 'vitest';
import { classifyAddress, isLocalhostName } from '../../../rules/address-rules.js';
import { isAllowed, matchesAllowRule, parseAllowRule } from '../../../rules/allow-rule.js';
import {
  duplicateHeaderNames,
  headerNameProblem,
  isSafeHeaderValue,
  TRANSPORT_HEADERS,
} from '../../../rules/header-rules.js';
import { checkRequestPath } from '../../../rules/request-path.js';
import { parseUpstream } from '../../../rules/upstream.js';

describe('request path', () => {
  it.each([
    '/',
    '/v1/messages',
    '/v1/',
    '/v1/a%20b',
    "/x/-._~:@!$&'()*+,=",
    '/v1/%EF%BB%BF',
    '/v1/%EF%BF%BF',
    '/v1/%ef%bc%8e%ef%bc%8e',
    '/v1/...',
    '/model/a%3A0/converse',
    '/v1/%C3%A9',
  ])('accepts %s', (path) => expect(checkRequestPath(path)).toEqual({ ok: true }));

  it.each([
    ['', 'must start with /'],
    ['v1', 'must start with /'],
    ['/v1//x', 'empty segment'],
    ['//', 'empty segment'],
    ['/v1/../x', 'dot segment'],
    ['/v1/./x', 'dot segment'],
    ['/v1/..', 'dot segment'],
    ['/v1/%2e%2e/x', 'dot segment'],
    ['/v1/%2E./x', 'dot segment'],
    ['/v1/%2e', 'dot segment'],
    ['/v1/..;/x', 'character outside the allowed path characters'],
    ['/v1/x;a=b', 'character outside the allowed path characters'],
    ['/v1/%252e%252e/x', 'encoded slash, backslash, percent or semicolon'],
    ['/v1/%2F/x', 'encoded slash, backslash, percent or semicolon'],
    ['/v1/%5C', 'encoded slash, backslash, percent or semicolon'],
    ['/v1/%3B', 'encoded slash, backslash, percent or semicolon'],
    ['/v1/%00', 'control character once decoded'],
    ['/v1/%1F', 'control character once decoded'],
    ['/v1/%7F', 'control character once decoded'],
    ['/v1/%C2%80', 'control character once decoded'],
    ['/v1/%C2%9F', 'control character once decoded'],
    ['/v1/%C0%AE', 'segment is not valid UTF-8 once decoded'],
    ['/v1/%ED%A0%80', 'segment is not valid UTF-8 once decoded'],
    ['/v1/%FF', 'segment is not valid UTF-8 once decoded'],
    ['/v1/%zz', 'malformed percent escape'],
    ['/v1/%4', 'malformed percent escape'],
    ['/v1/%', 'malformed percent escape'],
    ['/v1/a b', 'character outside the allowed path characters'],
    ['/v1/\\x', 'character outside the allowed path characters'],
    ['/v1/é', 'character outside the allowed path characters'],
    ['/v1?x', 'character outside the allowed path characters'],
    ['/v1#x', 'character outside the allowed path characters'],
  ])('refuses %j (%s)', (path, reason) => expect(checkRequestPath(path)).toEqual({ ok: false, reason }));
});

describe('allow rules', () => {
  const rule = (method: string, path: string) => {
    const verdict = parseAllowRule(method, path);
    if (!verdict.ok) throw new Error(verdict.reason);
    return verdict.rule;
  };

  it('matches exact paths exactly and prefix rules from their slash on', () => {
    const prefix = rule('POST', '/v1/*');
    expect(matchesAllowRule(prefix, 'POST', '/v1/')).toBe(true);
    expect(matchesAllowRule(prefix, 'POST', '/v1/a/b')).toBe(true);
    expect(matchesAllowRule(prefix, 'POST', '/v1')).toBe(false);
    expect(matchesAllowRule(prefix, 'POST', '/v10/a')).toBe(false);
    const exact = rule('POST', '/v1/messages');
    expect(matchesAllowRule(exact, 'POST', '/v1/messages')).toBe(true);
    expect(matchesAllowRule(exact, 'POST', '/v1/messages/')).toBe(false);
    expect(matchesAllowRule(rule('GET', '/*'), 'GET', '/anything')).toBe(true);
  });

  it('matches methods exactly (HEAD is not GET)', () => {
    expect(isAllowed([rule('GET', '/x')], 'HEAD', '/x')).toBe(false);
    expect(isAllowed([rule('GET', '/x')], 'get', '/x')).toBe(false);
    expect(isAllowed([rule('GET', '/y'), rule('GET', '/x')], 'GET', '/x')).toBe(true);
  });

  it.each([
    ['POST', '/v1//*'],
    ['POST', '/v1/../*'],
    ['POST', 'v1/*'],
    ['POST', '/v1;x'],
    ['POST', '/v1?q=1'],
    ['POST', ''],
    ['post', '/v1'],
    ['CONNECT', '/v1'],
    ['TRACE', '/v1'],
    ['FETCH', '/v1'],
  ])('refuses %s %j, which no request could use', (method, path) =>
    expect(parseAllowRule(method, path).ok).toBe(false),
  );
});

describe('header rules', () => {
  it.each([...TRANSPORT_HEADERS])('refuses the transport header %s in any spelling', (name) => {
    expect(headerNameProblem(name)).toBe('is a transport header the gateway sets itself');
    expect(headerNameProblem(name.toUpperCase().replace(/-/g, '_'))).toBe(
      'is a transport header the gateway sets itself',
    );
  });

  it('accepts tokens and refuses non-tokens', () => {
    expect(headerNameProblem('x-vendor_d-api-key')).toBeUndefined();
    expect(headerNameProblem('authorization')).toBeUndefined();
    for (const bad of ['', 'x api', 'x:y', 'é', 'x\r\ny', '(x)'])
      expect(headerNameProblem(bad)).toBe('must be an RFC 9110 token');
  });

  it('finds duplicates ignoring case, _ and .', () => {
    expect(duplicateHeaderNames(['X-Api-Key', 'x_api_key', 'x.api.key', 'api-key'])).toEqual([
      'x_api_key',
      'x.api.key',
    ]);
  });

  it('refuses values that could split a header', () => {
    expect(isSafeHeaderValue('Bearer abc\tdef ~')).toBe(true);
    for (const bad of ['a\rb', 'a\nb', 'a\0b', 'a\x7fb', 'a\u0100b'])
      expect(isSafeHeaderValue(bad)).toBe(false);
  });
});

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b:1::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['not-an-ip', 'unspecified'],
    ['10.0.0.1', 'allowed'],
    ['192.168.1.1', 'allowed'],
    ['172.16.0.1', 'allowed'],
    ['203.0.113.7', 'allowed'],
    ['2001:db8::1', 'allowed'],
    ['fd12::1', 'allowed'],
    ['::ffff:10.0.0.1', 'allowed'],
  ])('%s is %s', (address, cls) => expect(classifyAddress(address)).toBe(cls));

  it('refuses configured metadata addresses too', () => {
    expect(classifyAddress('10.9.9.9', ['10.9.9.9'])).toBe('metadata');
  });

  it('knows the loopback names', () => {
    for (const name of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      'a.localhost',
      'localhost.localdomain',
      'ip6-localhost',
    ]) {
      expect(isLocalhostName(name)).toBe(true);
    }
    expect(isLocalhostName('localhost.example')).toBe(false);
  });
});

describe('upstream', () => {
  it.each([
    ['https://api.example', 'https://api.example', 443],
    ['https://API.Example:8443', 'https://api.example:8443', 8443],
    ['https://api.example:443', 'https://api.example', 443],
    ['HTTPS://api.example', 'https://api.example', 443],
    ['https://10.1.2.3', 'https://10.1.2.3', 443],
    ['https://[2001:db8::1]:9443', 'https://[2001:db8::1]:9443', 9443],
  ])('accepts %s', (text, origin, port) => {
    const verdict = parseUpstream(text);
    expect(verdict.ok && verdict.upstream.origin).toBe(origin);
    expect(verdict.ok && verdict.upstream.port).toBe(port);
  });

  it.each([
    'http://api.example',
    'ftp://api.example',
    'api.example',
    'https://',
    'https://api.example/',
    'https://api.example/v1',
    'https://api.example?x=1',
    'https://api.example#f',
    'https://user:pass@api.example',
    'https://user@api.example',
    'https://api.example:0',
    'https://api.example:65536',
    'https://api .example',
    'https://api.example\n',
    ' https://api.example',
    'https://-api.example',
    'https://api-.example',
    'https://a..example',
    'https://%61pi.example',
    'https://ápi.example',
    'https://localhost',
    'https://LOCALHOST:8443',
    'https://localhost.',
    'https://x.localhost',
    'https://127.0.0.1',
    'https://127.1',
    'https://0x7f.1',
    'https://0x7f000001',
    'https://2130706433',
    'https://0177.0.0.1',
    'https://127.000.000.001',
    'https://[::1]',
    'https://[::ffff:127.0.0.1]',
    'https://[0:0:0:0:0:ffff:7f00:1]',
    'https://0.0.0.0',
    'https://0',
    'https://[::]',
    'https://169.254.10.10',
    'https://[fe80::1]',
    'https://169.254.169.254',
    'https://224.0.0.1',
  ])('refuses %j', (text) => expect(parseUpstream(text).ok).toBe(false));
});
