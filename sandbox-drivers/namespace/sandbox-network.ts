/**
 * A sandbox's network: namespace `sdk-<instance>-<id>`, veth pair `sdkh<id>`/`sdks<id>` with a /30 from
 * 100.96.0.0/12 (part of the shared address space, RFC 6598), and two nftables tables:
 *   - in the sandbox namespace, `sdk_sandbox`: the egress policy (`egress-table.ts`): sandbox code never
 *     connects to sandboxd's API, its DNS goes to sandboxd's resolver, and it reaches what the policy
 *     allows; sandboxd (the host uid of the sandbox's root) reaches the upstreams;
 *   - on the host, `sdk_<instance>_<id>`: from the sandbox veth only replies to connections the host opened
 *     (the control plane to sandboxd) are accepted, so host services are not reachable from the sandbox;
 *     traffic to other networks is forwarded and masqueraded, never to another sandbox's veth nor to
 *     `FORBIDDEN_NETWORKS` (loopback, link-local and metadata, multicast), whatever the policy.
 * Forwarding needs `net.ipv4.ip_forward = 1`, which the first launch sets (as container engines do).
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { EgressPolicy } from '../../rules/egress-policy.js';
import { FORBIDDEN_NETWORKS, replacingTable, sandboxTable } from './egress-table.js';
import { pickFreeSubnet } from './free-subnet.js';
import { run, runQuietly } from './host-commands.js';

/** Names and addresses of one sandbox's network. */
export interface SandboxNetwork {
  readonly namespace: string;
  readonly hostVeth: string;
  readonly hostAddress: string;
  readonly sandboxAddress: string;
}

/** 2^18 /30s in 100.96.0.0/12. */
const SANDBOX_RANGE = { base: 100 * 2 ** 24 + 96 * 2 ** 16, subnets: 2 ** 18, name: '100.96.0.0/12' };

/** The network resources of sandbox `id` (names only; nothing is created). */
export function networkNames(
  instance: string,
  id: string,
): Pick<SandboxNetwork, 'namespace' | 'hostVeth'> & { sandboxVeth: string; hostTable: string } {
  // Interface names are at most 15 bytes: 'sdkh' + 11 characters of the (random) id.
  return {
    namespace: `sdk-${instance}-${id}`,
    hostVeth: `sdkh${id.slice(0, 11)}`,
    sandboxVeth: `sdks${id.slice(0, 11)}`,
    hostTable: `sdk_${instance}_${id}`,
  };
}

async function freeSubnet(): Promise<[string, string]> {
  const used = await run('ip', ['-4', '-o', 'addr', 'show']);
  return pickFreeSubnet(used, SANDBOX_RANGE, Math.floor(Math.random() * SANDBOX_RANGE.subnets));
}

/**
 * Creates the network namespace of sandbox `id`, empty: sandboxd's launch enters it while
 * `createSandboxNetwork` fills it.
 */
export async function addSandboxNamespace(instance: string, id: string): Promise<void> {
  await run('ip', ['netns', 'add', networkNames(instance, id).namespace]);
}

/**
 * Creates the rest of the network of sandbox `id` (its namespace made by `addSandboxNamespace`); on
 * failure removes what it made, the namespace included.
 */
export async function createSandboxNetwork(
  instance: string,
  id: string,
  policy: EgressPolicy,
  daemon: { readonly hostUid: number; readonly port: number },
): Promise<SandboxNetwork> {
  const names = networkNames(instance, id);
  try {
    const [hostAddress, sandboxAddress] = await freeSubnet();
    await run('ip', [
      'link',
      'add',
      names.hostVeth,
      'type',
      'veth',
      'peer',
      'name',
      names.sandboxVeth,
      'netns',
      names.namespace,
    ]);
    await run('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', names.hostVeth]);
    await run('ip', ['link', 'set', names.hostVeth, 'up']);
    await run('ip', ['-n', names.namespace, 'addr', 'add', `${sandboxAddress}/30`, 'dev', names.sandboxVeth]);
    await run('ip', ['-n', names.namespace, 'link', 'set', names.sandboxVeth, 'up']);
    await run('ip', ['-n', names.namespace, 'link', 'set', 'lo', 'up']);
    await run('ip', ['-n', names.namespace, 'route', 'add', 'default', 'via', hostAddress]);
    await enableForwarding();
    await run('nft', ['-f', '-'], hostTable(names.hostTable, names.hostVeth, sandboxAddress));
    await run(
      'ip',
      ['netns', 'exec', names.namespace, 'nft', '-f', '-'],
      sandboxTable(sandboxAddress, daemon, policy),
    );
    return { namespace: names.namespace, hostVeth: names.hostVeth, hostAddress, sandboxAddress };
  } catch (error) {
    await removeSandboxNetwork(instance, id);
    throw error;
  }
}

/** The sandbox-side address of an existing sandbox network, if it exists. */
export async function sandboxAddressOf(instance: string, id: string): Promise<string | undefined> {
  const { namespace, sandboxVeth } = networkNames(instance, id);
  const out = await run('ip', ['-n', namespace, '-4', '-o', 'addr', 'show', 'dev', sandboxVeth]).catch(
    () => '',
  );
  return /inet (\d+\.\d+\.\d+\.\d+)\//.exec(out)?.[1];
}

/** Removes the namespace (the veth pair goes with it) and the host table; what is gone is skipped. */
export async function removeSandboxNetwork(instance: string, id: string): Promise<void> {
  const names = networkNames(instance, id);
  await runQuietly('nft', ['delete', 'table', 'inet', names.hostTable]);
  await runQuietly('ip', ['netns', 'del', names.namespace]);
  await runQuietly('ip', ['link', 'del', names.hostVeth]);
}

/** Sandbox ids of driver `instance` that have a namespace on this host. */
export async function listSandboxNamespaces(instance: string): Promise<string[]> {
  const out = await run('ip', ['netns', 'list']);
  const prefix = `sdk-${instance}-`;
  return out
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(prefix))
    .map((name) => name.slice(prefix.length))
    .filter((id) => /^[a-z0-9]{12}$/.test(id));
}

async function enableForwarding(): Promise<void> {
  if ((await readFile(IP_FORWARD, 'utf8')).trim() !== '1') await writeFile(IP_FORWARD, '1');
}

const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';

function hostTable(table: string, veth: string, address: string): string {
  return `table inet ${table} {
  chain input {
    type filter hook input priority 0; policy accept;
    iifname "${veth}" ct state established,related accept
    iifname "${veth}" reject with icmpx type admin-prohibited
  }
  chain forward {
    type filter hook forward priority 0; policy accept;
    iifname "${veth}" oifname "sdkh*" reject with icmpx type admin-prohibited
    iifname "${veth}" ip daddr { ${FORBIDDEN_NETWORKS.join(', ')} } reject with icmpx type admin-prohibited
    iifname "${veth}" meta nfproto ipv6 reject with icmpx type admin-prohibited
    oifname "${veth}" ct state established,related accept
    oifname "${veth}" reject with icmpx type admin-prohibited
  }
  chain postrouting {
    type nat hook postrouting priority 100; policy accept;
    ip saddr ${address} oifname != "${veth}" masquerade
  }
}
`;
}

/**
 * Replaces the egress table of sandbox `id`'s namespace with one for `policy` (one transaction).
 * Connections already open stay open.
 */
export async function updateSandboxEgress(
  instance: string,
  id: string,
  address: string,
  policy: EgressPolicy,
  daemon: { readonly hostUid: number; readonly port: number },
): Promise<void> {
  const { namespace } = networkNames(instance, id);
  await run(
    'ip',
    ['netns', 'exec', namespace, 'nft', '-f', '-'],
    replacingTable(sandboxTable(address, daemon, policy)),
  );
}
