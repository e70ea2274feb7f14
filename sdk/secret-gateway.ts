/**
 * `SecretGateway`: one gateway route's definition (SPEC "SecretGateway"). It names secrets, never holds
 * their values; every rule is checked here, at construction, before any call.
 */
import { z } from 'zod';
import { parseAllowRule, type AllowMethod } from '../rules/allow-rule.js';
import { duplicateHeaderNames, headerNameProblem } from '../rules/header-rules.js';
import { parseUpstream } from '../rules/upstream.js';
import type { PresetBinding } from '../presets/builders.js';
import { LIMITS } from '../rules/limits.js';
import { NAME_RULES, ROUTE_NAME } from '../rules/names.js';
import { ALLOW_PATH_ISSUE, parseOptions } from '../rules/parse-options.js';
import { ratePerMinuteSchema } from '../rules/rate-per-minute.js';
import { SECRET_NAME, SECRET_NAME_RULE, SecretRef } from './secret-ref.js';

export type { PresetBinding };

/** A header's secret: a secret name or a `SecretRef`. */
export type SecretSource = string | SecretRef;

/** Schema of a header's secret: a secret name or a `SecretRef`. */
export const secretSourceSchema = z.union([
  z.string().regex(SECRET_NAME, SECRET_NAME_RULE),
  z.instanceof(SecretRef, { message: SECRET_NAME_RULE }),
]);

/** Schema of injected headers: header name to its secret, names checked as SPEC "SecretGateway" says. */
export const secretHeadersSchema = z.record(z.string(), secretSourceSchema).superRefine((map, ctx) => {
  const names = Object.keys(map);
  if (names.length > LIMITS.headersPerRoute) {
    ctx.addIssue({ code: 'custom', message: `at most ${LIMITS.headersPerRoute} headers` });
  }
  for (const name of names) {
    const problem = headerNameProblem(name);
    if (problem !== undefined)
      ctx.addIssue({ code: 'custom', path: [name], message: `header name ${problem}` });
  }
  for (const name of duplicateHeaderNames(names)) {
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: 'duplicates another header ignoring case, _ and .',
    });
  }
});

const allowRule = z.tuple([z.string(), z.string()]).superRefine(([method, path], ctx) => {
  const verdict = parseAllowRule(method, path);
  if (!verdict.ok)
    ctx.addIssue({ code: 'custom', message: verdict.reason, params: { code: ALLOW_PATH_ISSUE } });
});

const secretGatewayOptions = z.strictObject({
  upstream: z.string().superRefine((text, ctx) => {
    const verdict = parseUpstream(text);
    if (!verdict.ok) ctx.addIssue({ code: 'custom', message: verdict.reason });
  }),
  headers: secretHeadersSchema.default({}),
  allow: z
    .array(allowRule)
    .max(LIMITS.allowRulesPerRoute, `at most ${LIMITS.allowRulesPerRoute} allow rules`)
    .default([]),
  ratePerMinute: ratePerMinuteSchema,
});

/** Options of `SecretGateway`. */
export type SecretGatewayOptions = z.input<typeof secretGatewayOptions>;

/**
 * One gateway route: the fixed https upstream, the headers to inject (each naming a secret), the
 * method/path allowlist and the per-minute rate.
 *
 * @example
 * ```ts
 * const llm = new SecretGateway({
 *   upstream: 'https://api.vendor-b.example',
 *   headers: { 'x-api-key': 'vendor-b-key' },
 *   allow: [['POST', '/v1/messages']],
 * });
 * ```
 */
export class SecretGateway {
  /** Canonical upstream origin, `https://host[:port]`. */
  readonly upstream: string;
  /** Header name to secret name (or `SecretRef`); never a value. */
  readonly headers: Readonly<Record<string, SecretSource>>;
  /** Allowed (METHOD, path) pairs; none (the default) admits no request. */
  readonly allow: readonly (readonly [AllowMethod, string])[];
  /** As given: 0 means the default. */
  readonly ratePerMinute: number;
  /** The preset that built this gateway, if any. */
  readonly preset: PresetBinding | undefined;

  /**
   * @param preset - set by the preset builders only
   */
  constructor(options: SecretGatewayOptions, preset?: PresetBinding) {
    const parsed = parseOptions(secretGatewayOptions, options, 'SecretGateway');
    const upstream = parseUpstream(parsed.upstream);
    this.upstream = upstream.ok ? upstream.upstream.origin : parsed.upstream;
    this.headers = Object.freeze({ ...parsed.headers });
    this.allow = Object.freeze(
      parsed.allow.map(([method, path]) => Object.freeze([method as AllowMethod, path] as const)),
    );
    this.ratePerMinute = parsed.ratePerMinute;
    this.preset = preset === undefined ? undefined : Object.freeze({ ...preset });
    Object.freeze(this);
  }

  /** Requests per minute the token bucket admits: `ratePerMinute`, or 600 when it is 0. */
  get effectiveRatePerMinute(): number {
    return this.ratePerMinute === 0 ? LIMITS.defaultRatePerMinute : this.ratePerMinute;
  }
}

/** Schema of a sandbox's gateway map: route name to `SecretGateway`, at most 8 routes. */
export const gatewayMapSchema = z
  .record(
    z.string().regex(ROUTE_NAME, `route name must be ${NAME_RULES.route}`),
    z.instanceof(SecretGateway, { message: 'must be a SecretGateway' }),
  )
  .refine(
    (map) => Object.keys(map).length <= LIMITS.routesPerSandbox,
    `at most ${LIMITS.routesPerSandbox} routes`,
  );
