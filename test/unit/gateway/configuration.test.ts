import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkConfiguration, type RouteConfiguration } from '../../../gateway/configuration.js';
import { LIMITS } from '../../../rules/limits.js';

const SECRET = 'sk-planted-secret-value-XYZ';

function route(overrides: Partial<Record<keyof RouteConfiguration, unknown>> = {}): Record<string, unknown> {
  return {
    upstream: 'https://api.vendor.example',
    headers: { 'x-api-key': SECRET },
    allow: [['POST', '/v1/*']],
    ratePerMinute: 0,
    ...overrides,
  };
}

describe('configuration check', () => {
  it('accepts a valid configuration and resolves the default rate', () => {
    const verdict = checkConfiguration({ llm: route(), other: route({ ratePerMinute: 30 }) });
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    const llm = verdict.routes.get('llm');
    expect(llm?.upstream.origin).toBe('https://api.vendor.example');
    expect(llm?.ratePerMinute).toBe(LIMITS.defaultRatePerMinute);
    expect(verdict.routes.get('other')?.ratePerMinute).toBe(30);
    expect([...(llm?.headerKeys ?? [])]).toEqual(['x-api-key']);
    expect(llm?.headers[0]?.value.reveal()).toBe(SECRET);
  });

  it('accepts an empty configuration (no routes)', () => {
    expect(checkConfiguration({})).toMatchObject({ ok: true });
  });

  const many = (n: number, make: (i: number) => [string, unknown]) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => make(i)));

  it.each([
    ['not a map', null, 'MalformedConfigurationError'],
    ['a list', [route()], 'MalformedConfigurationError'],
    ['a bad route name', { LLM: route() }, 'InvalidRouteNameError'],
    ['a route that is not an object', { llm: 'x' }, 'MalformedConfigurationError'],
    ['a loopback upstream', { llm: route({ upstream: 'https://127.0.0.1' }) }, 'InvalidUpstreamError'],
    ['an http upstream', { llm: route({ upstream: 'http://api.example' }) }, 'InvalidUpstreamError'],
    [
      'an upstream with a path',
      { llm: route({ upstream: 'https://api.example/v1' }) },
      'InvalidUpstreamError',
    ],
    ['a transport header', { llm: route({ headers: { host: SECRET } }) }, 'InvalidHeaderNameError'],
    [
      'a header that is not a token',
      { llm: route({ headers: { 'x key': SECRET } }) },
      'InvalidHeaderNameError',
    ],
    [
      'duplicate headers',
      { llm: route({ headers: { 'x-key': SECRET, X_KEY: SECRET } }) },
      'InvalidHeaderNameError',
    ],
    [
      'a value with CR LF',
      { llm: route({ headers: { 'x-key': `${SECRET}\r\nx-b: 1` } }) },
      'InvalidHeaderValueError',
    ],
    ['a value with LF', { llm: route({ headers: { 'x-key': `${SECRET}\n` } }) }, 'InvalidHeaderValueError'],
    ['a value with NUL', { llm: route({ headers: { 'x-key': `${SECRET}\0` } }) }, 'InvalidHeaderValueError'],
    [
      'a value beyond latin-1',
      { llm: route({ headers: { 'x-key': `${SECRET}\u2028` } }) },
      'InvalidHeaderValueError',
    ],
    ['an empty value', { llm: route({ headers: { 'x-key': '' } }) }, 'InvalidHeaderValueError'],
    ['a non-string value', { llm: route({ headers: { 'x-key': 42 } }) }, 'InvalidHeaderValueError'],
    ['an impossible allow path', { llm: route({ allow: [['GET', '/v1/../x']] }) }, 'InvalidAllowPathError'],
    ['a forbidden method', { llm: route({ allow: [['TRACE', '/x']] }) }, 'InvalidAllowPathError'],
    ['a malformed allow rule', { llm: route({ allow: ['GET /x'] }) }, 'MalformedConfigurationError'],
    ['a rate over the maximum', { llm: route({ ratePerMinute: 6001 }) }, 'InvalidRateError'],
    ['a fractional rate', { llm: route({ ratePerMinute: 1.5 }) }, 'InvalidRateError'],
    ['a negative rate', { llm: route({ ratePerMinute: -1 }) }, 'InvalidRateError'],
    [
      'too many routes',
      many(LIMITS.routesPerSandbox + 1, (i) => [`r${String(i)}`, route()]),
      'LimitExceededError',
    ],
    [
      'too many headers',
      { llm: route({ headers: many(LIMITS.headersPerRoute + 1, (i) => [`x-h${String(i)}`, SECRET]) }) },
      'LimitExceededError',
    ],
    [
      'too many allow rules',
      { llm: route({ allow: Array.from({ length: LIMITS.allowRulesPerRoute + 1 }, () => ['GET', '/x']) }) },
      'LimitExceededError',
    ],
  ])('refuses %s with %s, naming no value', (_, configuration, errorClass) => {
    const verdict = checkConfiguration(configuration);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.failure.errorClass).toBe(errorClass);
    expect(verdict.failure.code).toBe(
      errorClass === 'InvalidAllowPathError' ? 'invalid_allow_path' : 'configuration_rejected',
    );
    expect(JSON.stringify(verdict)).not.toContain(SECRET);
    expect(inspect(verdict, { depth: 10 })).not.toContain(SECRET);
  });

  it('accepts exactly the limits', () => {
    const verdict = checkConfiguration(
      many(LIMITS.routesPerSandbox, (i) => [
        `r${String(i)}`,
        route({
          headers: many(LIMITS.headersPerRoute, (j) => [`x-h${String(j)}`, `${SECRET}${String(j)}`]),
          allow: Array.from({ length: LIMITS.allowRulesPerRoute }, () => ['GET', '/x']),
          ratePerMinute: LIMITS.maxRatePerMinute,
        }),
      ]),
    );
    expect(verdict.ok).toBe(true);
  });

  it('keeps values out of util.inspect and JSON of a checked route', () => {
    const verdict = checkConfiguration({ llm: route() });
    expect(verdict.ok).toBe(true);
    expect(inspect(verdict, { depth: 10, showHidden: true })).not.toContain(SECRET);
    expect(JSON.stringify(verdict.ok ? [...verdict.routes.values()] : [])).not.toContain(SECRET);
  });
});
