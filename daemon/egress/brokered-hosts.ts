/**
 * The credential broker's rules as sandboxd holds them (issue 27 item 2): each host's headers, checked
 * again here as the gateway host checks its routes (names by `rules/header-rules.ts`, values
 * non-empty and free of control characters), each value a `SecretValue` at once. A refusal names the
 * rule's host and the header's name, never a value.
 */
import type { z } from 'zod';
import {
  duplicateHeaderNames,
  headerKey,
  headerNameProblem,
  isSafeHeaderValue,
} from '../../rules/header-rules.js';
import type { InjectedHeader } from '../../gateway/configuration.js';
import { SecretValue } from '../../gateway/secret-value.js';
import type { credentialRuleWire } from '../../protocol/credentials-wire.js';
import { parseCredentialHost } from '../../rules/credential-rules.js';
import { RequestError } from '../request-error.js';

/** One host's credential: the headers injected into every request the broker forwards to it. */
export interface BrokeredHost {
  readonly host: string;
  readonly headers: readonly InjectedHeader[];
  /** `headerKey` of every injected name: incoming and response headers with these keys are dropped. */
  readonly headerKeys: ReadonlySet<string>;
}

function refuse(message: string): never {
  throw new RequestError('invalid_argument', message, 'InvalidCredentialError');
}

function checkRule(rule: z.infer<typeof credentialRuleWire>, index: number): BrokeredHost {
  const parsed = parseCredentialHost(rule.host);
  if ('error' in parsed) refuse(`credentials[${String(index)}].host ${parsed.error}`);
  const { host } = parsed;
  const names = Object.keys(rule.headers);
  if (names.length === 0) refuse(`credential for ${host}: give at least one header`);
  const headers = names.map((name) => {
    const problem = headerNameProblem(name);
    if (problem !== undefined) refuse(`credential for ${host}: header name ${problem}`);
    const value = rule.headers[name] ?? '';
    if (value === '' || !isSafeHeaderValue(value)) {
      refuse(`credential for ${host}: header '${name}' needs a value without control characters`);
    }
    return { name, value: new SecretValue(value) };
  });
  const [duplicate] = duplicateHeaderNames(names);
  if (duplicate !== undefined) refuse(`credential for ${host}: header '${duplicate}' duplicates another one`);
  return { host, headers, headerKeys: new Set(names.map(headerKey)) };
}

/**
 * Checks every rule; the hosts by name.
 *
 * @throws RequestError `invalid_argument` (`InvalidCredentialError`) for a bad host, header name or
 * value, or a host given twice
 */
export function checkCredentialRules(
  rules: readonly z.infer<typeof credentialRuleWire>[],
): ReadonlyMap<string, BrokeredHost> {
  const hosts = new Map<string, BrokeredHost>();
  rules.forEach((rule, index) => {
    const checked = checkRule(rule, index);
    if (hosts.has(checked.host)) refuse(`credentials: host ${checked.host} is given twice`);
    hosts.set(checked.host, checked);
  });
  return hosts;
}
