/**
 * The configuration a gateway host applies, and its check. The host checks everything the SDK checked
 * (SPEC "SecretGateway": "the daemon checks again") plus the resolved values, and turns each route
 * into the form the listener serves. Values become `SecretValue`s at once.
 */
import { LIMITS } from '../rules/limits.js';
import { ROUTE_NAME } from '../rules/names.js';
import { parseAllowRule, type AllowRule } from '../rules/allow-rule.js';
import { configurationFailure, type ConfigurationFailure } from './configuration-failure.js';
import {
  duplicateHeaderNames,
  headerKey,
  headerNameProblem,
  isSafeHeaderValue,
} from '../rules/header-rules.js';
import { SecretValue } from './secret-value.js';
import { parseUpstream, type Upstream } from '../rules/upstream.js';

/** One route as the host receives it: header values already resolved from the secret store. */
export interface RouteConfiguration {
  /** `https://host[:port]`. */
  readonly upstream: string;
  /** Header name to the whole header value. */
  readonly headers: Readonly<Record<string, string>>;
  /** (METHOD, path) pairs. */
  readonly allow: readonly (readonly [string, string])[];
  /** 0 (= 600) or 1..6000; absent means 0. */
  readonly ratePerMinute?: number;
}

/** A whole configuration: route name to route. */
export type GatewayConfiguration = Readonly<Record<string, RouteConfiguration>>;

/** One header the route injects. */
export interface InjectedHeader {
  readonly name: string;
  readonly value: SecretValue;
}

/** A checked route, ready to serve. */
export interface CheckedRoute {
  readonly name: string;
  readonly upstream: Upstream;
  readonly headers: readonly InjectedHeader[];
  /** `headerKey` of every injected name: incoming and response headers with these keys are dropped. */
  readonly headerKeys: ReadonlySet<string>;
  readonly allow: readonly AllowRule[];
  /** Resolved rate: 1..6000. */
  readonly ratePerMinute: number;
}

/** The outcome of a check. */
export type ConfigurationVerdict =
  | { readonly ok: true; readonly routes: ReadonlyMap<string, CheckedRoute> }
  | { readonly ok: false; readonly failure: ConfigurationFailure };

/** Carries a failure out of the nested checks; caught in `checkConfiguration`, never escapes it. */
class Refusal extends Error {
  constructor(readonly failure: ConfigurationFailure) {
    super(failure.message);
  }
}

function refuse(...args: Parameters<typeof configurationFailure>): never {
  throw new Refusal(configurationFailure(...args));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkHeaders(route: string, headers: unknown): InjectedHeader[] {
  if (!isRecord(headers)) refuse('MalformedConfigurationError', `route '${route}': headers must be a map`);
  const names = Object.keys(headers);
  if (names.length > LIMITS.headersPerRoute) {
    refuse('LimitExceededError', `route '${route}': at most ${LIMITS.headersPerRoute} headers`);
  }
  const injected = names.map((name) => {
    const problem = headerNameProblem(name);
    if (problem !== undefined) refuse('InvalidHeaderNameError', `route '${route}': header name ${problem}`);
    const value = headers[name];
    if (typeof value !== 'string' || value === '') {
      refuse('InvalidHeaderValueError', `route '${route}': header '${name}' needs a non-empty string value`);
    }
    if (!isSafeHeaderValue(value)) {
      refuse(
        'InvalidHeaderValueError',
        `route '${route}': header '${name}' value contains CR, LF, NUL or another control character`,
      );
    }
    return { name, value: new SecretValue(value) };
  });
  const [duplicate] = duplicateHeaderNames(names);
  if (duplicate !== undefined) {
    refuse('InvalidHeaderNameError', `route '${route}': header '${duplicate}' duplicates another one`);
  }
  return injected;
}

function checkAllow(route: string, allow: unknown): AllowRule[] {
  if (!Array.isArray(allow)) refuse('MalformedConfigurationError', `route '${route}': allow must be a list`);
  if (allow.length > LIMITS.allowRulesPerRoute) {
    refuse('LimitExceededError', `route '${route}': at most ${LIMITS.allowRulesPerRoute} allow rules`);
  }
  return allow.map((pair: unknown, i) => {
    const [method, path] = Array.isArray(pair) ? (pair as unknown[]) : [];
    if (typeof method !== 'string' || typeof path !== 'string') {
      refuse('MalformedConfigurationError', `route '${route}': allow[${String(i)}] must be [method, path]`);
    }
    const verdict = parseAllowRule(method, path);
    if (!verdict.ok)
      refuse('InvalidAllowPathError', `route '${route}': allow[${String(i)}] ${verdict.reason}`);
    return verdict.rule;
  });
}

function checkRate(route: string, rate: unknown): number {
  const value = rate ?? 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > LIMITS.maxRatePerMinute) {
    refuse(
      'InvalidRateError',
      `route '${route}': ratePerMinute must be 0 (= ${String(LIMITS.defaultRatePerMinute)}) or 1..${String(LIMITS.maxRatePerMinute)}`,
    );
  }
  return value === 0 ? LIMITS.defaultRatePerMinute : value;
}

function checkRoute(name: string, route: unknown): CheckedRoute {
  if (!ROUTE_NAME.test(name)) refuse('InvalidRouteNameError', 'route name must be 1-64 characters [a-z0-9-]');
  if (!isRecord(route)) refuse('MalformedConfigurationError', `route '${name}' must be an object`);
  const upstream = typeof route.upstream === 'string' ? parseUpstream(route.upstream) : undefined;
  if (upstream === undefined || !upstream.ok) {
    refuse('InvalidUpstreamError', `route '${name}': upstream ${upstream?.reason ?? 'must be a string'}`);
  }
  const headers = checkHeaders(name, route.headers);
  return {
    name,
    upstream: upstream.upstream,
    headers,
    headerKeys: new Set(headers.map((h) => headerKey(h.name))),
    allow: checkAllow(name, route.allow),
    ratePerMinute: checkRate(name, route.ratePerMinute),
  };
}

/**
 * Checks a whole configuration. It never throws and never puts a value in a message.
 *
 * @example
 * ```ts
 * const verdict = checkConfiguration({
 *   llm: { upstream: 'https://api.example', headers: { 'x-api-key': key }, allow: [['POST', '/v1/*']] },
 * });
 * if (!verdict.ok) console.log(verdict.failure.errorClass);
 * ```
 */
export function checkConfiguration(configuration: unknown): ConfigurationVerdict {
  try {
    if (!isRecord(configuration))
      refuse('MalformedConfigurationError', 'configuration must be a map of routes');
    const names = Object.keys(configuration);
    if (names.length > LIMITS.routesPerSandbox) {
      refuse('LimitExceededError', `at most ${String(LIMITS.routesPerSandbox)} routes`);
    }
    return { ok: true, routes: new Map(names.map((name) => [name, checkRoute(name, configuration[name])])) };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, failure: error.failure };
    throw error;
  }
}
