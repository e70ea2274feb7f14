/**
 * E2B's `network` option of `Sandbox.create`, its `updateNetwork`, and the `network` of its sandbox info,
 * on the native egress policy (`rules/egress-policy.ts`). E2B's names and types as its SDK exports them
 * (JS SDK 2.7 to 2.51, `packages/js-sdk/src/sandbox/network.ts` and `sandboxApi.ts`).
 *
 * E2B's rules: `denyOut` blocks, `allowOut` takes precedence over `denyOut`, and `ALL_TRAFFIC`
 * (`0.0.0.0/0`) in `denyOut` blocks everything `allowOut` does not name. So `denyOut: [ALL_TRAFFIC]` with
 * `allowOut` is our mode `allowlist` (`allow` = `allowOut`); a `denyOut` without `ALL_TRAFFIC` is mode
 * `open` with `deny` = `denyOut` less what `allowOut` covers; `allowOut` alone restricts nothing (open).
 * `allowInternetAccess: false` is `denyOut: [ALL_TRAFFIC]` in E2B: at create it is our mode `closed`, so a
 * `network` with it must leave nothing reachable (an `allowOut` is refused); in `updateNetwork` it is
 * the allowlist above. Entries go through the native checks (IPv6, a port or a path are refused);
 * inbound options (`allowPublicTraffic: false`, `maskRequestHost`, `httpsPorts`) are about E2B's own
 * proxy to sandbox ports, which the preview URLs here do not copy (a token per port, `Host:
 * localhost:<port>`, plain HTTP), and `rules` and `egressProxy` are E2B's egress proxy: refused.
 */
import type { EgressPolicy } from '../../../rules/egress-policy.js';
import { parseEgressEntry } from '../../../rules/egress-policy.js';
import type { EgressPolicyInput } from '../../sandbox-egress.js';
import { givenKeys } from './connection.js';
import { NotSupportedError, invalidArgument } from './errors.js';

/** E2B's CIDR range of all traffic: in `denyOut`, everything `allowOut` does not name is blocked. */
export const ALL_TRAFFIC = '0.0.0.0/0';

/** Headers a rule would set on matching requests (E2B's egress proxy; refused here). */
export interface SandboxNetworkTransform {
  headers?: Record<string, string>;
}

/** What a `transform` callback receives in E2B (workload identity placeholders). */
export interface SandboxNetworkTransformContext {
  iam: { tokens: Readonly<Record<string, string>> };
}

/** A `transform` given as a callback. */
export type SandboxNetworkTransformResolver = (
  ctx: SandboxNetworkTransformContext,
) => SandboxNetworkTransform;

/** One per-host rule of E2B's egress proxy (refused here). */
export interface SandboxNetworkRule {
  transform?: SandboxNetworkTransform | SandboxNetworkTransformResolver;
}

/** A rule as E2B's sandbox info shows it. */
export interface SandboxNetworkRuleInfo {
  transform?: SandboxNetworkTransform;
}

/** Host → rules, a plain object or a `Map`: only an empty one is accepted here. */
export type SandboxNetworkRules = Record<string, SandboxNetworkRule[]> | Map<string, SandboxNetworkRule[]>;

/** What an `allowOut` / `denyOut` callback receives: `allTraffic` is `ALL_TRAFFIC`, `rules` empty. */
export interface SandboxNetworkSelectorContext {
  allTraffic: string;
  rules: Map<string, SandboxNetworkRule[]>;
}

/** Entries (IPv4 addresses, CIDRs, domains, `*.` wildcards), or a callback returning them. */
export type SandboxNetworkSelector = string[] | ((ctx: SandboxNetworkSelectorContext) => string[]);

/** E2B's SOCKS5 egress proxy (refused here). */
export interface SandboxEgressProxyOpts {
  address: string;
  username?: string;
  password?: string;
}

/** E2B's egress proxy as its info shows it (never set here). */
export interface SandboxEgressProxyInfo {
  address: string;
  username?: string;
}

/** E2B's `network` option of `Sandbox.create`. */
export interface SandboxNetworkOpts {
  /** Reachable despite `denyOut` (with `denyOut: [ALL_TRAFFIC]`: the only reachable destinations). */
  allowOut?: SandboxNetworkSelector;
  /** Blocked destinations; `ALL_TRAFFIC` blocks everything `allowOut` does not name. */
  denyOut?: SandboxNetworkSelector;
  /** Refused unless empty: per-host transforms are E2B's egress proxy. */
  rules?: SandboxNetworkRules;
  /** Refused: E2B's SOCKS5 tunnelling. */
  egressProxy?: SandboxEgressProxyOpts;
  /**
   * Accepted when `true` (E2B's default; ports stay private until `sbx.native.ports.expose`); `false` is
   * refused: E2B's sandbox-wide traffic token has no equivalent (preview tokens are per port).
   */
  allowPublicTraffic?: boolean;
  /** Refused: previews reach a port as `Host: localhost:<port>`, always. */
  maskRequestHost?: string;
  /** Refused unless empty: previews reach a port over plain HTTP. */
  httpsPorts?: number[];
}

/** The `network` of E2B's sandbox info: here `allowOut` / `denyOut` from the egress policy. */
export interface SandboxNetworkInfo {
  allowOut?: string[];
  denyOut?: string[];
  rules?: Record<string, SandboxNetworkRuleInfo[]>;
  egressProxy?: SandboxEgressProxyInfo;
  allowPublicTraffic?: boolean;
  maskRequestHost?: string;
  httpsPorts?: number[];
}

/** What `updateNetwork` takes: the whole new configuration (what is left out is cleared, as in E2B). */
export interface SandboxNetworkUpdate {
  allowOut?: SandboxNetworkSelector;
  denyOut?: SandboxNetworkSelector;
  /** Refused unless empty. */
  rules?: SandboxNetworkRules;
  /** Refused. */
  egressProxy?: SandboxEgressProxyOpts;
  /** `false` is `denyOut: [ALL_TRAFFIC]`, as in E2B. */
  allowInternetAccess?: boolean;
}

const CREATE_KEYS = [
  'allowOut',
  'denyOut',
  'rules',
  'egressProxy',
  'allowPublicTraffic',
  'maskRequestHost',
  'httpsPorts',
];
const UPDATE_KEYS = ['allowOut', 'denyOut', 'rules', 'egressProxy', 'allowInternetAccess'];

/** Why E2B's traffic access token (and `allowPublicTraffic: false`, which gives one) is refused. */
export const NO_TRAFFIC_TOKEN =
  "E2B's traffic access token opens every port of a sandbox; preview tokens here are per port (sbx.native.ports.token(port), in the x-sdk-preview-token header), and a port is private until sbx.native.ports.expose(port, { public: true })";
const NO_HOST_MASK =
  "the preview proxy sends every request to a port with Host: localhost:<port> (the caller's host in x-forwarded-host)";
const NO_HTTPS_PORTS = 'the preview proxy reaches a sandbox port over plain HTTP only';
const NO_EGRESS_PROXY =
  "E2B's egress proxy rewrites or tunnels requests; the egress policy here only allows and denies";

/** Checks `network`'s keys and refuses what cannot be honoured; the options as a record. */
function networkOptions(call: string, network: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof network !== 'object' || network === null || Array.isArray(network)) {
    throw invalidArgument(`${call}: network must be an object`, 'network');
  }
  for (const key of givenKeys(network)) {
    if (!keys.includes(key)) {
      throw invalidArgument(`${call}: network.${key} is not an option of E2B's network`, `network.${key}`);
    }
  }
  // An option given as null is absent, as E2B's SDK leaves it out (and Python's None).
  const o: Record<string, unknown> = Object.fromEntries(
    Object.entries(network).filter(([, value]) => value !== null),
  );
  if (o.allowPublicTraffic !== undefined && o.allowPublicTraffic !== true) {
    throw new NotSupportedError(
      'network.allowPublicTraffic',
      `only true (E2B's default) is accepted: ${NO_TRAFFIC_TOKEN}`,
    );
  }
  if (o.maskRequestHost !== undefined) throw new NotSupportedError('network.maskRequestHost', NO_HOST_MASK);
  if (o.httpsPorts !== undefined && !(Array.isArray(o.httpsPorts) && o.httpsPorts.length === 0)) {
    throw new NotSupportedError('network.httpsPorts', NO_HTTPS_PORTS);
  }
  if (o.rules !== undefined && sizeOf(o.rules) !== 0) {
    throw new NotSupportedError('network.rules', NO_EGRESS_PROXY);
  }
  if (o.egressProxy !== undefined) {
    throw new NotSupportedError('network.egressProxy', NO_EGRESS_PROXY);
  }
  if (o.allowInternetAccess !== undefined && typeof o.allowInternetAccess !== 'boolean') {
    throw invalidArgument(
      `${call}: network.allowInternetAccess must be a boolean`,
      'network.allowInternetAccess',
    );
  }
  return o;
}

/** Entries in `rules` (a `Map` or an object); -1 for anything else, which is never empty. */
function sizeOf(rules: unknown): number {
  if (rules instanceof Map) return rules.size;
  return typeof rules === 'object' && rules !== null ? Object.keys(rules).length : -1;
}

/**
 * `allowOut` or `denyOut`, normalised by the native rules (a callback is called as E2B calls it).
 *
 * @throws InvalidArgumentError naming the entry (`network.allowOut[1]`) and the rule, never the value
 */
function entries(call: string, field: 'allowOut' | 'denyOut', selector: unknown): string[] {
  if (selector === undefined || selector === null) return [];
  const context: SandboxNetworkSelectorContext = { allTraffic: ALL_TRAFFIC, rules: new Map() };
  const list: unknown =
    typeof selector === 'function'
      ? (selector as (ctx: SandboxNetworkSelectorContext) => unknown)(context)
      : selector;
  if (!Array.isArray(list)) {
    throw invalidArgument(
      `${call}: network.${field} must be a list of IPv4 addresses, CIDRs and domains, or a function returning one`,
      `network.${field}`,
    );
  }
  return list.map((raw: unknown, i) => {
    const at = `network.${field}[${String(i)}]`;
    if (typeof raw !== 'string') throw invalidArgument(`${call}: ${at}: must be a string`, at);
    const entry = parseEgressEntry(raw);
    if ('error' in entry) throw invalidArgument(`${call}: ${at}: ${entry.error}`, at);
    return entry.text;
  });
}

/** True when every destination normalised entry `inner` names is one `outer` names too. */
function covers(outer: string, inner: string): boolean {
  const o = parseEgressEntry(outer);
  const i = parseEgressEntry(inner);
  if ('error' in o || 'error' in i) return false;
  if (o.kind === 'cidr' && i.kind === 'cidr') {
    const size = 2 ** (32 - o.prefix);
    return o.prefix <= i.prefix && Math.floor(i.network / size) * size === o.network;
  }
  if (o.kind === 'domain' && i.kind === 'domain') {
    if (!o.wildcard) return !i.wildcard && i.suffix === o.suffix;
    return i.suffix.endsWith(`.${o.suffix}`) || (i.wildcard && i.suffix === o.suffix);
  }
  return false;
}

/**
 * E2B's `allowOut` / `denyOut` (normalised) as an egress policy: `allowOut` wins over `denyOut`.
 *
 * @throws NotSupportedError for an `allowOut` entry inside a range `denyOut` denies, without
 *   `ALL_TRAFFIC` in `denyOut` (an exception mode `open` cannot express)
 */
function policyOf(allowOut: readonly string[], denyOut: readonly string[]): EgressPolicyInput {
  if (allowOut.includes(ALL_TRAFFIC)) return { mode: 'open', allow: [], deny: [] };
  if (denyOut.includes(ALL_TRAFFIC)) return { mode: 'allowlist', allow: [...allowOut], deny: [] };
  const deny = denyOut.filter((denied) => !allowOut.some((allowed) => covers(allowed, denied)));
  allowOut.forEach((allowed, i) => {
    if (deny.some((denied) => covers(denied, allowed))) {
      throw new NotSupportedError(
        `network.allowOut[${String(i)}]`,
        'an exception inside a range denyOut denies is kept only with denyOut [ALL_TRAFFIC] (an allowlist); without it a deny entry here wins over the narrower allow entry',
      );
    }
  });
  return { mode: 'open', allow: [], deny };
}

/**
 * The egress policy of `Sandbox.create`'s `network` (with its `allowInternetAccess`).
 *
 * @throws InvalidArgumentError for a malformed option or entry, or an `allowOut` that would stay
 *   reachable with `allowInternetAccess: false` (here that is mode `closed`)
 * @throws NotSupportedError for what cannot be honoured (`network.maskRequestHost`, …)
 */
export function createEgress(
  call: string,
  network: unknown,
  allowInternetAccess: boolean | undefined,
): EgressPolicyInput {
  const o = networkOptions(call, network, CREATE_KEYS);
  const allowOut = entries(call, 'allowOut', o.allowOut);
  const denyOut = entries(call, 'denyOut', o.denyOut);
  if (allowInternetAccess !== false) return policyOf(allowOut, denyOut);
  // E2B's allowInternetAccess false is denyOut [ALL_TRAFFIC]; ours is mode closed: nothing may stay open.
  const policy = policyOf(allowOut, [...denyOut, ALL_TRAFFIC]);
  if (policy.mode !== 'allowlist' || (policy.allow ?? []).length > 0) {
    throw invalidArgument(
      `${call}: network.allowOut with allowInternetAccess: false: here allowInternetAccess false closes all egress; for an allowlist give network { denyOut: [ALL_TRAFFIC], allowOut } and leave allowInternetAccess true`,
      'network.allowOut',
    );
  }
  return { mode: 'closed', allow: [], deny: [] };
}

/**
 * The egress policy of `updateNetwork(network)`: E2B's update replaces the whole configuration, so
 * `{}` is open; `allowInternetAccess: false` is `denyOut: [ALL_TRAFFIC]`.
 *
 * @throws InvalidArgumentError, NotSupportedError as `createEgress`
 */
export function updateEgress(call: string, network: unknown): EgressPolicyInput {
  const o = networkOptions(call, network, UPDATE_KEYS);
  const allowOut = entries(call, 'allowOut', o.allowOut);
  const denyOut = entries(call, 'denyOut', o.denyOut);
  return policyOf(allowOut, o.allowInternetAccess === false ? [...denyOut, ALL_TRAFFIC] : denyOut);
}

/**
 * E2B's `network` of a sandbox's info from its egress policy: an allowlist is `denyOut: [ALL_TRAFFIC]`
 * with `allowOut`, closed is `denyOut: [ALL_TRAFFIC]`, open with `deny` is `denyOut`; plain open has none.
 */
export function networkInfo(egress: EgressPolicy): SandboxNetworkInfo | undefined {
  switch (egress.mode) {
    case 'allowlist':
      return { allowOut: [...egress.allow], denyOut: [ALL_TRAFFIC] };
    case 'closed':
      return { denyOut: [ALL_TRAFFIC] };
    case 'open':
      return egress.deny.length === 0 ? undefined : { denyOut: [...egress.deny] };
  }
}
