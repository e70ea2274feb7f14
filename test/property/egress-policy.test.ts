/**
 * Issue 27's decision rules over generated policies and names: deny always wins, `closed` allows
 * nothing, `open` everything deny does not name, `allowlist` exactly what an allow entry covers (a
 * wildcard its subdomains, never its apex); normalising an entry twice changes nothing.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { decideName, EGRESS_MODES, parseEgressEntry, type EgressPolicy } from '../../rules/egress-policy.js';

const label = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
const domain = fc.array(label, { minLength: 1, maxLength: 3 }).map((labels) => `${labels.join('.')}.test`);
const entry = fc.oneof(
  domain,
  domain.map((d) => `*.${d}`),
);
const policy: fc.Arbitrary<EgressPolicy> = fc
  .record({
    mode: fc.constantFrom(...EGRESS_MODES),
    allow: fc.array(entry, { maxLength: 4 }),
    deny: fc.array(entry, { maxLength: 4 }),
  })
  .map((p) => ({
    ...p,
    allow: p.mode === 'allowlist' ? p.allow : [],
    deny: p.mode === 'closed' ? [] : p.deny,
  }));
// Names near the entries: an entry's own name, a subdomain of it, or another.
const nameFor = (p: EgressPolicy): fc.Arbitrary<string> => {
  const bases = [...p.allow, ...p.deny].map((e) => e.replace(/^\*\./, ''));
  return fc.oneof(
    domain,
    ...(bases.length === 0
      ? []
      : [fc.constantFrom(...bases), fc.tuple(label, fc.constantFrom(...bases)).map(([l, b]) => `${l}.${b}`)]),
  );
};

const covers = (entry: string, name: string): boolean =>
  entry.startsWith('*.') ? name.endsWith(entry.slice(1)) : name === entry;

test.prop([policy.chain((p) => fc.tuple(fc.constant(p), nameFor(p)))])(
  'a name is decided by the rules',
  ([p, name]) => {
    const { allowed } = decideName(p, name);
    const denied = p.deny.some((e) => covers(e, name));
    const listed = p.allow.some((e) => covers(e, name));
    const expected = p.mode === 'open' ? !denied : p.mode === 'allowlist' ? listed && !denied : false;
    expect(allowed).toBe(expected);
    // Case and a trailing dot never change a decision.
    expect(decideName(p, `${name.toUpperCase()}.`).allowed).toBe(allowed);
  },
);

test.prop([
  fc.oneof(
    entry,
    fc.ipV4(),
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([a, n]) => `${a}/${String(n)}`),
    fc.string(),
  ),
])('normalising an entry twice gives what once gave', (raw) => {
  const once = parseEgressEntry(raw);
  if ('error' in once) return;
  const twice = parseEgressEntry(once.text);
  expect(twice).toEqual(once);
});
