/**
 * A sandbox's egress policy as nftables rules (issue 27), for both isolations. The tables decide by
 * address only; names are sandboxd's to decide (`daemon/egress/`), so the tables send it what carries
 * one: every DNS question, and, when the policy names domains, every HTTP (port 80) and TLS (port 443)
 * connection not to an allowed CIDR. sandboxd then connects to the name's own addresses, never to the
 * address sandbox code dialled (an IP literal or a forged answer gains nothing).
 *
 * Whatever the policy, `FORBIDDEN_NETWORKS` are never reached from a sandbox (the host's table), nor the
 * host's own addresses (its input chain).
 */
import { cidrEntries, hasDomainRules, type EgressPolicy } from '../../rules/egress-policy.js';
import { EGRESS_PORTS } from '../../protocol/egress-wire.js';

/**
 * Destinations no sandbox reaches in any mode: this network, loopback, link-local (the metadata address
 * among them), multicast, the reserved block and broadcast, and the other metadata address of
 * `rules/address-rules.ts` (100.100.100.200).
 */
export const FORBIDDEN_NETWORKS = [
  '0.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '100.100.100.200/32',
] as const;

/** sandboxd's egress filter's ports: reached only by what the tables redirect there, never dialled. */
const filterPorts = `{ ${Object.values(EGRESS_PORTS).join(', ')} }`;

/** An nftables set of IPv4 intervals, declared empty when `elements` is. */
function intervalSet(name: string, elements: readonly string[]): string {
  const body = elements.length === 0 ? '' : ` elements = { ${elements.join(', ')} };`;
  return `  set ${name} { type ipv4_addr; flags interval; auto-merge;${body} }\n`;
}

/** The two sets every egress table declares: `allow4` (allowlist CIDRs) and `deny4`. */
function policySets(policy: EgressPolicy): string {
  return intervalSet('allow4', cidrEntries(policy.allow)) + intervalSet('deny4', cidrEntries(policy.deny));
}

/** True when sandboxd must see HTTP and TLS connections to decide by name. */
export function checksNames(policy: EgressPolicy): boolean {
  return policy.mode === 'allowlist' || (policy.mode === 'open' && hasDomainRules(policy));
}

/** The verdict lines for a new connection of sandbox code that no earlier rule took. */
function addressVerdict(policy: EgressPolicy, match: string, accept: string): string {
  if (policy.mode === 'closed') return '';
  const deny = `\n    ${match} ip daddr @deny4 reject with icmpx type admin-prohibited`;
  if (policy.mode === 'allowlist') return `${deny}\n    ${match} ip daddr @allow4 ${accept}`;
  return `${deny}\n    ${match} ${accept}`;
}

/**
 * The sandbox namespace's own table for a namespace sandbox, whose code shares the namespace with
 * sandboxd (its host uid `daemon.hostUid`): sandbox code never connects to sandboxd's API; its DNS goes
 * to sandboxd's resolver, its HTTP and TLS to sandboxd's name checks when the policy names domains; it
 * reaches loopback, replies, and what the policy allows by address. sandboxd reaches the upstreams.
 * Sandbox code, root included, cannot change this table: the network namespace belongs to the host's
 * user namespace, where it holds no capability.
 */
export function sandboxTable(
  address: string,
  daemon: { readonly hostUid: number; readonly port: number },
  policy: EgressPolicy,
): string {
  const code = `meta skuid != ${String(daemon.hostUid)}`;
  const names = checksNames(policy)
    ? `
    ${code} ip daddr != @allow4 tcp dport 443 redirect to :${String(EGRESS_PORTS.tls)}
    ${code} ip daddr != @allow4 tcp dport 80 redirect to :${String(EGRESS_PORTS.http)}`
    : '';
  return `table inet sdk_sandbox {
${policySets(policy)}  chain nat_output {
    type nat hook output priority -100; policy accept;
    ${code} meta l4proto { tcp, udp } th dport 53 redirect to :${String(EGRESS_PORTS.dns)}${names}
  }
  chain output {
    type filter hook output priority 0; policy accept;
    ip daddr ${address} tcp dport ${String(daemon.port)} ${code} reject with tcp reset
    ${code} meta l4proto { tcp, udp } th dport ${filterPorts} ct status & dnat == 0 reject
    oifname "lo" accept
    # Redirected (nat_output) to sandboxd's resolver or name checks: the hook still sees the first route.
    ct status dnat accept
    ct state established,related accept
    meta skuid ${String(daemon.hostUid)} accept${addressVerdict(policy, 'ip daddr != 0.0.0.0', 'accept')}
    reject with icmpx type admin-prohibited
  }
}
`;
}

/**
 * The gVisor box's table in the sandbox's namespace (`../../gvisor/box-network.ts`): the box reaches
 * sandboxd's gateway listeners, resolver and name checks on the link (`sandboxd`), never its API; DNS
 * and (with domain rules) HTTP and TLS are sent to sandboxd as in a namespace sandbox; what the policy
 * allows by address is forwarded and masqueraded as the sandbox's address, never to link-local.
 */
export function boxTable(
  link: string,
  sandboxVeth: string,
  addresses: { readonly sandboxd: string; readonly box: string },
  daemonPort: number,
  policy: EgressPolicy,
): string {
  const from = `iifname "${link}"`;
  const to = (port: number): string => `dnat ip to ${addresses.sandboxd}:${String(port)}`;
  const names = checksNames(policy)
    ? `
    ${from} ip daddr != @allow4 tcp dport 443 ${to(EGRESS_PORTS.tls)}
    ${from} ip daddr != @allow4 tcp dport 80 ${to(EGRESS_PORTS.http)}`
    : '';
  const forward = addressVerdict(
    policy,
    `${from} oifname "${sandboxVeth}" ip daddr != 169.254.0.0/16`,
    'accept',
  );
  return `table inet sdk_box {
${policySets(policy)}  chain prerouting {
    type nat hook prerouting priority -100; policy accept;
    ${from} meta l4proto { tcp, udp } th dport 53 ${to(EGRESS_PORTS.dns)}${names}
  }
  chain input {
    type filter hook input priority 0; policy accept;
    ${from} ct state established,related accept
    ${from} meta l4proto { tcp, udp } th dport ${filterPorts} ct status & dnat == 0 reject
    ${from} ip daddr ${addresses.sandboxd} tcp dport != ${String(daemonPort)} accept
    ${from} ip daddr ${addresses.sandboxd} udp dport ${String(EGRESS_PORTS.dns)} accept
    ${from} meta l4proto tcp reject with tcp reset
    ${from} reject with icmpx type admin-prohibited
  }
  chain forward {
    type filter hook forward priority 0; policy accept;
    oifname "${link}" ct state established,related accept${forward}
    ${from} reject with icmpx type admin-prohibited
    oifname "${link}" reject with icmpx type admin-prohibited
  }
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    ip saddr ${addresses.box} oifname "${sandboxVeth}" masquerade
  }
}
`;
}

/**
 * `table`'s text as one nftables transaction that replaces the table of its name: applied whole or not
 * at all, so a policy update never leaves a sandbox between two tables.
 */
export function replacingTable(table: string): string {
  const head = /^table (\S+ \S+) \{/.exec(table)?.[1];
  if (head === undefined) throw new Error('not an nftables table');
  return `table ${head} {}\ndelete table ${head}\n${table}`;
}
