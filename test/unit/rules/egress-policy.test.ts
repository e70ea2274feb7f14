/**
 * Issue 27's policy rules as data: what an entry may be (and how it is normalised), which combinations
 * a policy may have, and how names and addresses are decided.
 */
import { describe, expect, it } from 'vitest';
import {
  decideAddress,
  decideName,
  denyingEntry,
  egressPolicySchema,
  parseEgressEntry,
  type EgressPolicy,
} from '../../../rules/egress-policy.js';
import { InvalidArgumentError } from '../../../rules/errors.js';
import { parseOptions } from '../../../rules/parse-options.js';

describe('an entry', () => {
  it.each([
    ['PyPI.org.', 'pypi.org'],
    ['  *.NPMJS.org ', '*.npmjs.org'],
    ['10.1.2.3/24', '10.1.2.0/24'],
    ['8.8.8.8', '8.8.8.8/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['registry.internal', 'registry.internal'],
  ])('%j is %j', (raw, text) => {
    const entry = parseEgressEntry(raw);
    expect('error' in entry ? entry.error : entry.text).toBe(text);
  });

  it.each([
    ['a.*.example', 'a wildcard may only be a leading "*."'],
    ['*example.com', 'a wildcard may only be a leading "*."'],
    ['*', 'a wildcard may only be a leading "*."'],
    ['https://pypi.org', 'is a domain or an IPv4 address or CIDR, without a scheme, port or path'],
    ['pypi.org:443', 'is a domain or an IPv4 address or CIDR, without a scheme, port or path'],
    ['pypi.org/simple', 'is a domain or an IPv4 address or CIDR, without a scheme, port or path'],
    ['::1', 'IPv6 is not routed to sandboxes: give IPv4 addresses or domains'],
    ['2001:db8::/32', 'IPv6 is not routed to sandboxes: give IPv4 addresses or domains'],
    ['256.1.1.1', 'is not an IPv4 address or CIDR'],
    ['010.1.1.1', 'is not an IPv4 address or CIDR'],
    ['1.2.3.4/33', 'is not an IPv4 address or CIDR'],
    ['1.2.3.4/08', 'is not an IPv4 address or CIDR'],
    ['1.2.3', 'is not an IPv4 address or a domain name'],
    ['-bad.example', 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)'],
    ['bücher.example', 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)'],
    ['', 'is not a domain name'],
  ])('%j is refused: %s', (raw, error) => {
    expect(parseEgressEntry(raw)).toEqual({ error });
  });
});

describe('a policy', () => {
  const parse = (input: unknown): EgressPolicy => parseOptions(egressPolicySchema, input, 'Sandbox.create');

  it('defaults its lists, normalises and drops repeats', () => {
    expect(parse({ mode: 'open' })).toEqual({ mode: 'open', allow: [], deny: [] });
    expect(parse({ mode: 'allowlist', allow: ['PyPI.org', 'pypi.org.', '10.0.0.1'] })).toEqual({
      mode: 'allowlist',
      allow: ['pypi.org', '10.0.0.1/32'],
      deny: [],
    });
  });

  it.each([
    [{ mode: 'open', allow: ['pypi.org'] }, 'allow'],
    [{ mode: 'closed', deny: ['pypi.org'] }, 'deny'],
    [{ mode: 'everything' }, 'mode'],
    [{ mode: 'allowlist', allow: ['a.*.b'] }, 'allow[0]'],
    [{ mode: 'allowlist', block: [] }, 'block'],
  ])('%j is refused, naming %s', (input, field) => {
    const error = (() => {
      try {
        parse(input);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).field).toBe(field);
  });

  it('holds at most 256 entries in allow and deny together, counted after repeats are dropped', () => {
    const names = (n: number, at = 0): string[] =>
      Array.from({ length: n }, (_, i) => `h${String(i + at)}.example`);
    expect(parse({ mode: 'allowlist', allow: names(200), deny: names(56, 200) }).allow).toHaveLength(200);
    expect(() => parse({ mode: 'allowlist', allow: names(200), deny: names(57, 200) })).toThrow(
      /at most 256 entries/,
    );
    expect(parse({ mode: 'allowlist', allow: [...names(256), ...names(256)] }).allow).toHaveLength(256);
  });

  it('never echoes an entry in its error', () => {
    expect(() => parse({ mode: 'allowlist', allow: ['sk-live-secret:1'] })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('sk-live') as unknown }),
    );
  });
});

describe('decisions', () => {
  const allowlist: EgressPolicy = {
    mode: 'allowlist',
    allow: ['pypi.org', '*.npmjs.org', '10.1.2.0/24'],
    deny: ['evil.npmjs.org', '10.1.2.128/25'],
  };

  it.each([
    ['pypi.org', true, 'pypi.org'],
    ['PYPI.org.', true, 'pypi.org'],
    ['files.pypi.org', false, 'allowlist'],
    ['registry.npmjs.org', true, '*.npmjs.org'],
    ['npmjs.org', false, 'allowlist'], // a wildcard never covers its apex
    ['evil.npmjs.org', false, 'evil.npmjs.org'], // deny wins
    ['pypi.org.attacker.example', false, 'allowlist'],
  ])('allowlist: %s → %s by %s', (name, allowed, rule) => {
    expect(decideName(allowlist, name)).toEqual({ allowed, rule });
  });

  it.each([
    ['10.1.2.3', true, '10.1.2.0/24'],
    ['10.1.2.200', false, '10.1.2.128/25'],
    ['10.1.3.1', false, 'allowlist'],
  ])('allowlist by address: %s → %s by %s', (address, allowed, rule) => {
    expect(decideAddress(allowlist, address)).toEqual({ allowed, rule });
  });

  it('open allows what deny does not name; closed allows nothing', () => {
    const open: EgressPolicy = { mode: 'open', allow: [], deny: ['*.ads.example', '192.0.2.0/24'] };
    expect(decideName(open, 'x.ads.example')).toEqual({ allowed: false, rule: '*.ads.example' });
    expect(decideName(open, 'pypi.org')).toEqual({ allowed: true, rule: 'open' });
    expect(decideAddress(open, '192.0.2.9')).toEqual({ allowed: false, rule: '192.0.2.0/24' });
    expect(denyingEntry(open, '192.0.2.9')).toBe('192.0.2.0/24');
    expect(denyingEntry(open, '198.51.100.1')).toBeUndefined();
    const closed: EgressPolicy = { mode: 'closed', allow: [], deny: [] };
    expect(decideName(closed, 'pypi.org')).toEqual({ allowed: false, rule: 'closed' });
  });
});
