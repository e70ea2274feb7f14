/**
 * Allow rules: (METHOD, path) pairs, the path exact or ending with `/*` (SPEC "SecretGateway"). A rule
 * that no request could satisfy is refused with code `invalid_allow_path`.
 */
import { checkRequestPath } from './request-path.js';

/**
 * Methods a rule may name. CONNECT never carries a path and TRACE echoes the request (with the injected
 * credential) back, so neither can be allowed.
 */
export const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** A method a rule may name. */
export type AllowMethod = (typeof ALLOWED_METHODS)[number];

/** A checked allow rule. `prefix` is set for `/*` rules: the path must start with it. */
export interface AllowRule {
  readonly method: AllowMethod;
  readonly path: string;
  readonly prefix: string | undefined;
}

/** A parsed rule, or why it was refused. */
export type AllowRuleVerdict =
  { readonly ok: true; readonly rule: AllowRule } | { readonly ok: false; readonly reason: string };

function isAllowMethod(method: string): method is AllowMethod {
  return (ALLOWED_METHODS as readonly string[]).includes(method);
}

/**
 * Parses one rule. `/v1/*` matches every path that starts with `/v1/`, `/v1/` included, never `/v1`.
 *
 * @example
 * ```ts
 * parseAllowRule('POST', '/v1/*');  // { ok: true, rule: { method: 'POST', path: '/v1/*', prefix: '/v1/' } }
 * parseAllowRule('POST', '/a//b');  // { ok: false, reason: 'empty segment' }
 * ```
 */
export function parseAllowRule(method: string, path: string): AllowRuleVerdict {
  if (!isAllowMethod(method)) {
    return { ok: false, reason: `method must be one of ${ALLOWED_METHODS.join(', ')}` };
  }
  const prefix = path.endsWith('/*') ? path.slice(0, -1) : undefined;
  // A prefix rule is satisfiable exactly when its prefix is itself an acceptable path.
  const verdict = checkRequestPath(prefix ?? path);
  if (!verdict.ok) return { ok: false, reason: `no request could match this path: ${verdict.reason}` };
  return { ok: true, rule: { method, path, prefix } };
}

/** True when the rule admits this method and path (the query takes no part). */
export function matchesAllowRule(rule: AllowRule, method: string, path: string): boolean {
  if (rule.method !== method) return false;
  return rule.prefix === undefined ? path === rule.path : path.startsWith(rule.prefix);
}

/** True when any rule admits this method and path. */
export function isAllowed(rules: readonly AllowRule[], method: string, path: string): boolean {
  return rules.some((rule) => matchesAllowRule(rule, method, path));
}
