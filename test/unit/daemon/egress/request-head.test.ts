/**
 * The host sandboxd reads from a plain HTTP request's head: one Host, read strictly, agreeing with an
 * absolute-form target; nothing else that could make the filter and the server read different hosts.
 */
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { readRequestHead } from '../../../../daemon/egress/request-head.js';

const read = (text: string) => readRequestHead(Buffer.from(text, 'latin1'));
const head = (line: string, ...headers: string[]) =>
  `${line}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
const get = (...headers: string[]) => head('GET / HTTP/1.1', ...headers);

describe('readRequestHead', () => {
  it('reads the host, lower case, trailing dot dropped', () => {
    expect(read(get('Host: PyPI.Org.', 'Accept: */*'))).toEqual({
      state: 'done',
      host: 'pypi.org',
      port: undefined,
    });
  });

  it.each([
    ['pypi.org:8080', 'pypi.org', 8080],
    ['203.0.113.5', '203.0.113.5', undefined],
    ['203.0.113.5:80', '203.0.113.5', 80],
    ['[2001:DB8::1]', '2001:db8::1', undefined],
    ['[2001:db8:0:0:0:0:0:1]:443', '2001:db8::1', 443],
    ['[::ffff:192.0.2.1]', '::ffff:c000:201', undefined],
    ['a_b-c.example', 'a_b-c.example', undefined],
    ['localhost:65535', 'localhost', 65535],
    ['x:1', 'x', 1],
  ])('Host %s is %s, port %s', (value, host, port) => {
    expect(read(get(`Host: ${value}`))).toEqual({ state: 'done', host, port });
  });

  it('finds Host by any case and trims the blanks around its value', () => {
    expect(read(get('User-Agent: t', 'hOsT:\t example.test \t'))).toMatchObject({ host: 'example.test' });
    expect(read(get('HOST:example.test'))).toMatchObject({ host: 'example.test' });
  });

  it('reads HTTP/1.0 and any token method', () => {
    expect(read(head('HEAD /x?y HTTP/1.0', 'Host: a.test'))).toMatchObject({ state: 'done', host: 'a.test' });
    expect(read(head('M-SEARCH * HTTP/1.1', 'Host: a.test'))).toMatchObject({ state: 'done' });
  });

  it('waits for the blank line, and reads no further than it', () => {
    const text = get('Host: a.test');
    for (let cut = 0; cut < text.length; cut++) expect(read(text.slice(0, cut))).toEqual({ state: 'more' });
    expect(read(`${text}POST / HTTP/1.1\r\nHost: b.test\r\nHost: c.test\r\n\r\n`)).toMatchObject({
      host: 'a.test',
    });
  });

  it.each([
    ['two Host headers', get('Host: a.test', 'Host: a.test'), 'duplicate host'],
    ['two Host headers of two cases', get('Host: a.test', 'host: b.test'), 'duplicate host'],
    ['no Host', get('Accept: */*'), 'no host'],
    ['no header at all', 'GET / HTTP/1.1\r\n\r\n', 'no host'],
    ['HTTP/1.0 without Host', head('GET / HTTP/1.0'), 'no host'],
    ['an obs-fold line', get('Host: a.test', 'X-A: 1', ' continued'), 'obs-fold'],
    ['an obs-fold line by a tab', get('X-A: 1', '\tHost: b.test', 'Host: a.test'), 'obs-fold'],
    ['a space before the colon', get('Host : a.test'), 'bad header'],
    ['a header without a colon', get('Host a.test'), 'bad header'],
    ['a control byte in a value', get('Host: a.test', 'X-A: a\x01b'), 'bad header'],
    ['a bare CR in a value', get('Host: a.test', 'X-A: a\rb'), 'bad header'],
    ['a bare LF between headers', get('X-A: 1\nHost: b.test', 'Host: a.test'), 'bad header'],
    ['an empty Host', get('Host: '), 'bad host'],
    ['a Host with a path', get('Host: a.test/x'), 'bad host'],
    ['a Host with userinfo', get('Host: user@a.test'), 'bad host'],
    ['a Host with a space', get('Host: a test'), 'bad host'],
    ['a Host of two names', get('Host: a.test, b.test'), 'bad host'],
    ['a Host with an empty label', get('Host: a..test'), 'bad host'],
    ['a Host with a label of 64', get(`Host: ${'a'.repeat(64)}.test`), 'bad host'],
    ['a Host of 254 characters', get(`Host: ${'a.'.repeat(126)}bb`), 'bad host'],
    ['a Host of non-ASCII', get('Host: caf\xe9.test'), 'bad host'],
    ['a Host with an empty port', get('Host: a.test:'), 'bad host'],
    ['a Host with port 0', get('Host: a.test:0'), 'bad host'],
    ['a Host with port 65536', get('Host: a.test:65536'), 'bad host'],
    ['a Host with two ports', get('Host: a.test:1:2'), 'bad host'],
    ['a Host with a signed port', get('Host: a.test:+80'), 'bad host'],
    ['a Host of an IPv4 number', get('Host: 2130706433'), 'bad host'],
    ['a Host of hex IPv4', get('Host: 0x7f.1'), 'bad host'],
    ['a Host of short IPv4', get('Host: 127.1'), 'bad host'],
    ['a Host of IPv4 with a leading zero', get('Host: 127.0.0.01'), 'bad host'],
    ['a Host of IPv4 past 255', get('Host: 1.2.3.256'), 'bad host'],
    ['a Host of IPv6 without brackets', get('Host: ::1'), 'bad host'],
    ['a Host of IPv4 in brackets', get('Host: [1.2.3.4]'), 'bad host'],
    ['a Host of IPv6 with a zone', get('Host: [fe80::1%25eth0]'), 'bad host'],
    ['a Host of bad IPv6', get('Host: [1::2::3]'), 'bad host'],
    ['a Host of an unclosed bracket', get('Host: [::1'), 'bad host'],
    ['HTTP/2 on the request line', head('GET / HTTP/2.0', 'Host: a.test'), 'bad request line'],
    ['HTTP/1.2', head('GET / HTTP/1.2', 'Host: a.test'), 'bad request line'],
    ['a lower-case version', head('GET / http/1.1', 'Host: a.test'), 'bad request line'],
    ['two spaces', head('GET  / HTTP/1.1', 'Host: a.test'), 'bad request line'],
    ['no target', head('GET HTTP/1.1', 'Host: a.test'), 'bad request line'],
    ['a tab for a space', head('GET\t/ HTTP/1.1', 'Host: a.test'), 'bad request line'],
    ['a blank line first', `\r\n${get('Host: a.test')}`, 'bad request line'],
    ['a relative target', head('GET a/b HTTP/1.1', 'Host: a.test'), 'bad target'],
    ['a target of another scheme', head('GET ftp://a.test/ HTTP/1.1', 'Host: a.test'), 'bad target'],
    ['a target with userinfo', head('GET http://a.test@b.test/ HTTP/1.1', 'Host: b.test'), 'bad target'],
    ['a target without a host', head('GET http:///x HTTP/1.1', 'Host: a.test'), 'bad target'],
    ['a target with a backslash', head('GET http://a.test\\@b.test/ HTTP/1.1', 'Host: a.test'), 'bad target'],
    ['CONNECT to no port host', head('CONNECT / HTTP/1.1', 'Host: a.test'), 'bad target'],
  ])('refuses %s', (_, text, reason) => {
    expect(read(text)).toEqual({ state: 'invalid', reason });
  });

  it.each([
    ['http://a.test/x', 'Host: b.test'],
    ['http://a.test:8080/x', 'Host: a.test'],
    ['http://a.test/x', 'Host: a.test:80'],
    ['http://a.test.evil.example/', 'Host: a.test'],
    ['HTTP://[::1]:8080/', 'Host: [::1]'],
  ])('refuses target %s with %s: host mismatch', (target, host) => {
    expect(read(head(`GET ${target} HTTP/1.1`, host))).toEqual({ state: 'invalid', reason: 'host mismatch' });
  });

  it('refuses CONNECT to another host than Host', () => {
    const text = head('CONNECT b.test:443 HTTP/1.1', 'Host: a.test:443');
    expect(read(text)).toEqual({ state: 'invalid', reason: 'host mismatch' });
  });

  it.each([
    ['http://A.test/x?y#z', 'Host: a.test'],
    ['http://a.test', 'Host: a.test.'],
    ['https://a.test:8443?q', 'Host: a.test:8443'],
    ['HTTP://[0:0::1]:8080/', 'Host: [::1]:8080'],
  ])('takes target %s with %s', (target, host) => {
    expect(read(head(`GET ${target} HTTP/1.1`, host))).toMatchObject({ state: 'done' });
  });

  it('takes CONNECT naming the Host', () => {
    expect(read(head('CONNECT a.test:443 HTTP/1.1', 'Host: a.test:443'))).toEqual({
      state: 'done',
      host: 'a.test',
      port: 443,
    });
  });

  it('refuses a request line that cannot be HTTP before the head ends', () => {
    expect(read('\x16\x03\x01\x02\x00')).toEqual({ state: 'invalid', reason: 'bad request line' });
    expect(read('SSH-2.0-OpenSSH_9.6\r\n')).toEqual({ state: 'invalid', reason: 'bad request line' });
    expect(read('GET / HTTP/1.1\n')).toEqual({ state: 'invalid', reason: 'bad request line' });
    expect(read('GET / HTTP/1.1\rX')).toEqual({ state: 'invalid', reason: 'bad request line' });
    expect(read('GET / HTTX')).toEqual({ state: 'invalid', reason: 'bad request line' });
    expect(read('GET / HTTP/1.1 \r\nHost: a.test\r\n')).toEqual({
      state: 'invalid',
      reason: 'bad request line',
    });
    expect(read('GET / HTTP/1.1\r\nHost: a.test\r\n')).toEqual({ state: 'more' });
  });

  it('takes a head of 16 KiB and refuses one byte more', () => {
    const filler = (length: number) => `X: ${'a'.repeat(length - 5)}`; // a header line of `length` with CRLF
    const base = get('Host: a.test').length;
    const exact = get('Host: a.test', filler(16384 - base));
    expect(exact.length).toBe(16384);
    expect(read(exact)).toMatchObject({ state: 'done', host: 'a.test' });
    const over = get('Host: a.test', filler(16385 - base));
    expect(read(over)).toEqual({ state: 'invalid', reason: 'head too large' });
    expect(read(over.slice(0, 16384))).toEqual({ state: 'invalid', reason: 'head too large' });
    expect(read(over.slice(0, 16383))).toEqual({ state: 'more' });
  });

  it('never repeats the request in its reason', () => {
    const secret = 'sk-secret-0123456789';
    const cases = [
      get(`Host: ${secret}/x`),
      get(`Host: ${secret}`, `Host: ${secret}`),
      `GET /${secret} HTTP/9\r\n\r\n`,
    ];
    for (const text of cases) {
      const result = read(text);
      expect(result.state).toBe('invalid');
      expect(JSON.stringify(result)).not.toContain('secret');
    }
  });
});
