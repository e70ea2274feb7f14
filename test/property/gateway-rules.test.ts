import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { ALLOWED_METHODS, isAllowed, parseAllowRule, type AllowRule } from '../../rules/allow-rule.js';
import { checkConfiguration, type CheckedRoute } from '../../gateway/configuration.js';
import { TRANSPORT_HEADERS, headerKey } from '../../rules/header-rules.js';
import { InjectedValues } from '../../gateway/injected-values.js';
import { buildUpstreamHeaders } from '../../gateway/request-headers.js';
import { filterResponseHeaders } from '../../gateway/response-headers.js';
import { TokenBucket } from '../../gateway/token-bucket.js';

const segment = fc.constantFrom('v1', 'v2', 'a', 'models', 'x%20y', '');
const path = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`);
const method = fc.constantFrom(...ALLOWED_METHODS);
const rule = fc
  .tuple(method, path, fc.boolean())
  .map(([m, p, prefix]) => parseAllowRule(m, prefix ? `${p.replace(/\/$/, '')}/*` : p))
  .filter((verdict) => verdict.ok)
  .map((verdict) => (verdict as { ok: true; rule: AllowRule }).rule);

test.prop([fc.array(rule, { maxLength: 6 }), method, path])(
  'a request is admitted exactly when a rule of its method names its path or a prefix of it',
  (rules, m, p) => {
    const witness = rules.some(
      (r) => r.method === m && (r.path.endsWith('/*') ? p.startsWith(r.path.slice(0, -1)) : p === r.path),
    );
    expect(isAllowed(rules, m, p)).toBe(witness);
  },
);

test.prop([fc.array(rule, { maxLength: 6 }), rule, method, path])(
  'adding a rule never takes an admission away',
  (rules, extra, m, p) => {
    if (isAllowed(rules, m, p)) expect(isAllowed([...rules, extra], m, p)).toBe(true);
  },
);

test.prop([path, fc.string({ maxLength: 8 }), method])(
  'a /* rule admits everything under its prefix and never the prefix without its slash',
  (p, rest, m) => {
    const base = p.replace(/\/$/, '');
    const verdict = parseAllowRule(m, `${base}/*`);
    if (!verdict.ok) return;
    expect(isAllowed([verdict.rule], m, `${base}/${rest}`)).toBe(true);
    expect(isAllowed([verdict.rule], m, base)).toBe(false);
    const other = m === 'GET' ? 'HEAD' : 'GET';
    expect(isAllowed([verdict.rule], other, `${base}/${rest}`)).toBe(false);
  },
);

const step = fc.record({
  advanceMs: fc.integer({ min: 0, max: 5_000 }),
  attempts: fc.integer({ min: 0, max: 20 }),
});

test.prop([fc.integer({ min: 1, max: 6000 }), fc.array(step, { maxLength: 40 })])(
  'the bucket never admits more than its burst plus the rate over the elapsed time',
  (rate, steps) => {
    let now = 0;
    const bucket = new TokenBucket(rate, () => now);
    let admitted = 0;
    for (const { advanceMs, attempts } of steps) {
      now += advanceMs;
      for (let i = 0; i < attempts; i++) if (bucket.take()) admitted++;
      const bound = Math.max(1, rate / 60) + (rate * now) / 60_000;
      expect(admitted).toBeLessThanOrEqual(Math.floor(bound + 1e-9));
    }
  },
);

test.prop([
  fc.integer({ min: 1, max: 6000 }),
  fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 20 }),
])('after waiting msUntilNextToken a request is always admitted', (rate, gaps) => {
  let now = 0;
  const bucket = new TokenBucket(rate, () => now);
  for (const gap of gaps) {
    now += gap;
    while (bucket.take());
    now += bucket.msUntilNextToken();
    expect(bucket.take()).toBe(true);
  }
});

const CONFIGURED = ['X-Api-Key', 'authorization'];
const VALUES = ['sk-value-aaaaaaaaaaaa', 'Bearer token-bbbbbbbbbbbb'];

function route(): CheckedRoute {
  const verdict = checkConfiguration({
    llm: {
      upstream: 'https://api.example',
      headers: Object.fromEntries(CONFIGURED.map((name, i) => [name, VALUES[i]])),
      allow: [['POST', '/*']],
    },
  });
  const checked = verdict.ok ? verdict.routes.get('llm') : undefined;
  if (checked === undefined) throw new Error('route did not check');
  return checked;
}

/** A header name spelled like a configured one: any case, `-` as `_` or `.`. */
const configuredSpelling = fc
  .tuple(
    fc.constantFrom(...CONFIGURED),
    fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
    fc.constantFrom('-', '_', '.'),
  )
  .map(([name, upper, dash]) =>
    Array.from(name, (c) => c) // header names are ASCII
      .map((c, i) => (c === '-' ? dash : upper[i] === true ? c.toUpperCase() : c.toLowerCase()))
      .join(''),
  );
const otherName = fc.constantFrom('Accept', 'Content-Type', 'X-Trace', 'x-request-id', 'X-Hop', 'user-agent');
const anyName = fc.oneof(configuredSpelling, otherName, fc.constantFrom(...TRANSPORT_HEADERS));
const rawHeaders = fc
  .array(fc.tuple(anyName, fc.constantFrom('v1', 'mine', 'X-Hop', 'close')), { maxLength: 12 })
  .map((pairs) => pairs.flat());

test.prop([rawHeaders])(
  'upstream headers carry each configured value exactly once and nothing the client sent under that name',
  (raw) => {
    const checked = route();
    const out = buildUpstreamHeaders(raw, checked);
    const names = out.filter((_, i) => i % 2 === 0);
    const keys = names.map(headerKey);
    for (const [i, name] of CONFIGURED.entries()) {
      const at = keys.flatMap((key, j) => (key === headerKey(name) ? [j] : []));
      expect(at).toHaveLength(1);
      expect(out[(at[0] ?? 0) * 2 + 1]).toBe(VALUES[i]);
    }
    for (const key of keys) {
      if (key !== 'content-length') expect(TRANSPORT_HEADERS.has(key)).toBe(false);
    }
    expect(keys.filter((key) => key === 'content-length').length).toBeLessThanOrEqual(1);
    // Every other client header survives in order unless Connection nominated it.
    const nominated = new Set(
      raw.flatMap((v, i) =>
        i % 2 === 1 && raw[i - 1]?.toLowerCase() === 'connection'
          ? v.split(',').map((t) => headerKey(t.trim()))
          : [],
      ),
    );
    const expectedOthers = raw.flatMap((v, i) => {
      if (i % 2 === 0) return [];
      const key = headerKey(raw[i - 1] ?? '');
      const dropped = TRANSPORT_HEADERS.has(key) || checked.headerKeys.has(key) || nominated.has(key);
      return dropped ? [] : [raw[i - 1], v];
    });
    const others = out.slice(0, out.length - CONFIGURED.length * 2).filter((_, i, list) => {
      const name = i % 2 === 0 ? list[i] : list[i - 1];
      return headerKey(name ?? '') !== 'content-length';
    });
    expect(others).toEqual(expectedOthers);
  },
);

const responseValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc
    .tuple(fc.string({ maxLength: 4 }), fc.constantFrom(...VALUES), fc.string({ maxLength: 4 }))
    .map((p) => p.join('')),
);
const responseHeaders = fc.dictionary(
  fc.oneof(
    fc.constantFrom('x-echo', 'set-cookie', 'x-a', 'x-b', 'authorization', 'x-api-key'),
    otherName.map((n) => n.toLowerCase()),
  ),
  fc.oneof(responseValue, fc.array(responseValue, { minLength: 1, maxLength: 3 })),
);

test.prop([responseHeaders])(
  'no returned header carries an injected value or a configured name',
  (headers) => {
    const checked = route();
    const injected = new InjectedValues();
    injected.hold(checked.headers.map((h) => h.value));
    const out = filterResponseHeaders(headers, checked, injected);
    for (let i = 0; i < out.length; i += 2) {
      const name = out[i] ?? '';
      const value = out[i + 1] ?? '';
      expect(checked.headerKeys.has(headerKey(name))).toBe(false);
      for (const secret of VALUES) expect(value).not.toContain(secret);
    }
    // Values without an injected value under other names survive.
    for (const [name, value] of Object.entries(headers)) {
      if (checked.headerKeys.has(headerKey(name))) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (!VALUES.some((secret) => item.includes(secret))) expect(out).toContain(item);
      }
    }
  },
);
