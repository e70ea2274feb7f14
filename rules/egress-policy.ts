/**
 * A sandbox's egress policy (issue 27): where sandbox code may connect. `open` reaches every network
 * but what `deny` names, `closed` reaches none, `allowlist` only what `allow` names and `deny` does not.
 * An entry is a domain (`pypi.org`; `*.npmjs.org` for every name under it, never the apex) or an IPv4
 * address or CIDR (`10.1.2.0/24`). Domains are decided on the name a connection really carries (TLS
 * SNI, the HTTP Host, the DNS question), never on an address list; CIDRs on the destination address.
 * Whatever the policy, loopback, link-local, metadata, multicast and the host's own addresses stay
 * unreachable (the drivers' tables).
 */
import { z } from 'zod';

/** The three modes. */
export const EGRESS_MODES = ['open', 'closed', 'allowlist'] as const;

/** One of `EGRESS_MODES`. */
export type EgressMode = (typeof EGRESS_MODES)[number];

/** Most entries `allow` and `deny` hold together. */
export const MAX_EGRESS_ENTRIES = 256;

/** A parsed, normalised policy. */
export interface EgressPolicy {
  readonly mode: EgressMode;
  /** Normalised entries: lower-case domains without a trailing dot, canonical IPv4 CIDRs. */
  readonly allow: readonly string[];
  readonly deny: readonly string[];
}

/** An entry's kind once parsed. */
export type EgressEntry =
  | { readonly kind: 'domain'; readonly text: string; readonly suffix: string; readonly wildcard: boolean }
  | { readonly kind: 'cidr'; readonly text: string; readonly network: number; readonly prefix: number };

/** The policy of `allowInternetAccess` alone (SPEC: false is closed). */
export function policyOfInternetAccess(allowInternetAccess: boolean): EgressPolicy {
  return { mode: allowInternetAccess ? 'open' : 'closed', allow: [], deny: [] };
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/;
const OCTET = /^(0|[1-9]\d{0,2})$/; // no leading zero: "010" reads as octal to some tools

/** An IPv4 address (no prefix) as a 32-bit unsigned number, or undefined. */
export function ipv4Number(text: string): number | undefined {
  const m = IPV4.exec(text);
  if (m === null || m[5] !== undefined) return undefined;
  const octets = m.slice(1, 5);
  if (!octets.every((o) => OCTET.test(o) && Number(o) <= 255)) return undefined;
  return octets.reduce((acc, o) => acc * 256 + Number(o), 0);
}

function dotted(value: number): string {
  return [24, 16, 8, 0].map((shift) => String(Math.floor(value / 2 ** shift) % 256)).join('.');
}

/**
 * Parses one entry, or returns why it is not one. Domains are ASCII (an IDN in its `xn--` form), at
 * most 253 characters, with a wildcard only as a leading `*.`.
 */
export function parseEgressEntry(raw: string): EgressEntry | { readonly error: string } {
  const text = raw.trim().toLowerCase().replace(/\.$/, '');
  if (/^[0-9a-f:]*::?[0-9a-f:]*(\/\d+)?$/.test(text) && (text.match(/:/g)?.length ?? 0) >= 2) {
    return { error: 'IPv6 is not routed to sandboxes: give IPv4 addresses or domains' };
  }
  if (text.includes(':') || (text.includes('/') && !IPV4.test(text))) {
    return { error: 'is a domain or an IPv4 address or CIDR, without a scheme, port or path' };
  }
  const ip = IPV4.exec(text);
  if (ip !== null) {
    const address = ipv4Number(text.replace(/\/\d+$/, ''));
    const prefix = ip[5] === undefined ? 32 : Number(ip[5]);
    if (address === undefined || prefix > 32 || (ip[5]?.length === 2 && ip[5].startsWith('0'))) {
      return { error: 'is not an IPv4 address or CIDR' };
    }
    const size = 2 ** (32 - prefix);
    const network = Math.floor(address / size) * size;
    return { kind: 'cidr', text: `${dotted(network)}/${String(prefix)}`, network, prefix };
  }
  const wildcard = text.startsWith('*.');
  const suffix = wildcard ? text.slice(2) : text;
  if (suffix.includes('*')) return { error: 'a wildcard may only be a leading "*."' };
  if (suffix.length === 0 || suffix.length > 253) return { error: 'is not a domain name' };
  const labels = suffix.split('.');
  if (!labels.every((label) => LABEL.test(label))) {
    return { error: 'is not a domain name (letters, digits, "-" and dots; an IDN in its xn-- form)' };
  }
  // A last label of digits is no top-level domain: a mistyped address (1.2.3), not a name.
  if (/^\d+$/.test(labels[labels.length - 1] ?? ''))
    return { error: 'is not an IPv4 address or a domain name' };
  return { kind: 'domain', text: wildcard ? `*.${suffix}` : suffix, suffix, wildcard };
}

const entrySchema = z.string().transform((raw, ctx) => {
  const entry = parseEgressEntry(raw);
  if ('error' in entry) {
    ctx.addIssue({ code: 'custom', message: entry.error });
    return z.NEVER;
  }
  return entry.text;
});

/** `entries` without repeats, first occurrence kept (after normalisation, `PyPI.org` repeats `pypi.org`). */
function unique(entries: readonly string[]): string[] {
  return [...new Set(entries)];
}

/** Schema of the `egress` option (SDK, control plane API): normalises entries, checks the combination. */
export const egressPolicySchema = z
  .strictObject({
    mode: z.enum(EGRESS_MODES, { error: `must be one of ${EGRESS_MODES.join(', ')}` }),
    allow: z.array(entrySchema).readonly().default([]).transform(unique),
    deny: z.array(entrySchema).readonly().default([]).transform(unique),
  })
  .superRefine((policy, ctx) => {
    if (policy.allow.length + policy.deny.length > MAX_EGRESS_ENTRIES) {
      ctx.addIssue({
        code: 'custom',
        message: `at most ${String(MAX_EGRESS_ENTRIES)} entries in allow and deny`,
      });
    }
    if (policy.mode !== 'allowlist' && policy.allow.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['allow'], message: "is for mode 'allowlist' only" });
    }
    if (policy.mode === 'closed' && policy.deny.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['deny'], message: "means nothing with mode 'closed'" });
    }
  });

/** True when domain entry `entry` covers `name` (lower case, no trailing dot). */
function domainCovers(entry: EgressEntry & { kind: 'domain' }, name: string): boolean {
  return entry.wildcard ? name.endsWith(`.${entry.suffix}`) : name === entry.suffix;
}

function cidrCovers(entry: EgressEntry & { kind: 'cidr' }, address: number): boolean {
  const size = 2 ** (32 - entry.prefix);
  return Math.floor(address / size) * size === entry.network;
}

/** A decision on one name or address, with the rule that made it (for events and logs). */
export interface EgressDecision {
  readonly allowed: boolean;
  /** The entry that decided, or the mode (`open`, `closed`, `allowlist` when nothing in allow fits). */
  readonly rule: string;
}

function firstCovering(
  entries: readonly string[],
  covers: (entry: EgressEntry) => boolean,
): string | undefined {
  return entries.find((text) => {
    const entry = parseEgressEntry(text);
    return !('error' in entry) && covers(entry);
  });
}

function decide(policy: EgressPolicy, covers: (entry: EgressEntry) => boolean): EgressDecision {
  if (policy.mode === 'closed') return { allowed: false, rule: 'closed' };
  const denied = firstCovering(policy.deny, covers);
  if (denied !== undefined) return { allowed: false, rule: denied };
  if (policy.mode === 'open') return { allowed: true, rule: 'open' };
  const allowed = firstCovering(policy.allow, covers);
  return allowed === undefined ? { allowed: false, rule: 'allowlist' } : { allowed: true, rule: allowed };
}

/** Whether sandbox code may reach the host named `name` (a DNS question, an SNI, a Host). */
export function decideName(policy: EgressPolicy, name: string): EgressDecision {
  const normal = name.toLowerCase().replace(/\.$/, '');
  return decide(policy, (entry) => entry.kind === 'domain' && domainCovers(entry, normal));
}

/** Whether sandbox code may connect to IPv4 `address` by address (the CIDR entries only). */
export function decideAddress(policy: EgressPolicy, address: string): EgressDecision {
  const value = ipv4Number(address);
  if (value === undefined) return { allowed: false, rule: policy.mode };
  return decide(policy, (entry) => entry.kind === 'cidr' && cidrCovers(entry, value));
}

/** The deny entry covering IPv4 `address`, if one does (a name's addresses are checked against these). */
export function denyingEntry(policy: EgressPolicy, address: string): string | undefined {
  const value = ipv4Number(address);
  if (value === undefined) return undefined;
  return firstCovering(policy.deny, (entry) => entry.kind === 'cidr' && cidrCovers(entry, value));
}

/** The CIDR entries of `entries` (for the drivers' nftables sets). */
export function cidrEntries(entries: readonly string[]): string[] {
  return entries.filter((text) => {
    const entry = parseEgressEntry(text);
    return !('error' in entry) && entry.kind === 'cidr';
  });
}

/** True for a policy `allowInternetAccess` alone gives (open or closed, nothing listed). */
export function isPlainEgress(policy: EgressPolicy): boolean {
  return policy.mode !== 'allowlist' && policy.allow.length === 0 && policy.deny.length === 0;
}

/** True when the policy names domains, which sandboxd's resolver and name checks must enforce. */
export function hasDomainRules(policy: EgressPolicy): boolean {
  return [...policy.allow, ...policy.deny].some((text) => {
    const entry = parseEgressEntry(text);
    return !('error' in entry) && entry.kind === 'domain';
  });
}
