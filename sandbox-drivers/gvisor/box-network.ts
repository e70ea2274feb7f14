/**
 * A gVisor sandbox's network. gVisor's own network stack (netstack) takes every interface of the
 * namespace it starts in, so the box gets a namespace of its own, `sdk-<instance>-<id>-box`, linked to the
 * sandbox's namespace (`../namespace/sandbox-network.ts`, where sandboxd lives) by a veth pair:
 * `sdkg<id>` there (169.254.0.1, sandboxd's side) and `eth0` in the box's (169.254.0.2, which netstack
 * takes over). The addresses are the same in every sandbox: each pair is private to its sandbox, and a
 * copy restored from a snapshot finds its network as it was.
 *
 * In the sandbox's namespace a table `sdk_box` (host root's: nothing in the box can change it):
 *   - from the box, only sandboxd's gateway listeners, resolver and name checks on 169.254.0.1 are
 *     reachable (never its API: a connection is reset, as in a namespace sandbox), and replies;
 *   - the box's traffic to other networks is forwarded, and masqueraded as the sandbox's address, as its
 *     egress policy allows (`../namespace/egress-table.ts`); never to a link-local address. The host's
 *     table (`sdk_<instance>_<id>`) then treats it as any sandbox's: no host service, no other sandbox,
 *     no forbidden network.
 * sandboxd itself reaches upstreams from the sandbox's namespace, by its host uid, as in the namespace
 * driver; nothing of the box's shares that path.
 */
import type { EgressPolicy } from '../../rules/egress-policy.js';
import { boxTable, replacingTable } from '../namespace/egress-table.js';
import { run, runQuietly } from '../namespace/host-commands.js';
import { networkNames } from '../namespace/sandbox-network.js';

/** The link between sandboxd and the box: the same in every gVisor sandbox. */
export const BOX_LINK = { sandboxd: '169.254.0.1', box: '169.254.0.2', prefix: 30 } as const;

/** Names of the box's network resources (nothing is created). */
export function boxNetworkNames(instance: string, id: string): { namespace: string; link: string } {
  return { namespace: `${networkNames(instance, id).namespace}-box`, link: `sdkg${id.slice(0, 11)}` };
}

/**
 * Makes the box's namespace and its link to the sandbox's (which must exist, its veth included); on
 * failure removes what it made.
 */
export async function createBoxNetwork(
  instance: string,
  id: string,
  policy: EgressPolicy,
  daemonPort: number,
): Promise<{ readonly namespace: string }> {
  const sandbox = networkNames(instance, id);
  const { namespace, link } = boxNetworkNames(instance, id);
  try {
    await run('ip', ['netns', 'add', namespace]);
    await run('ip', [
      '-n',
      sandbox.namespace,
      'link',
      'add',
      link,
      'type',
      'veth',
      'peer',
      'name',
      'eth0',
      'netns',
      namespace,
    ]);
    const prefix = String(BOX_LINK.prefix);
    await run('ip', ['-n', sandbox.namespace, 'addr', 'add', `${BOX_LINK.sandboxd}/${prefix}`, 'dev', link]);
    await run('ip', ['-n', sandbox.namespace, 'link', 'set', link, 'up']);
    await run('ip', ['-n', namespace, 'addr', 'add', `${BOX_LINK.box}/${prefix}`, 'dev', 'eth0']);
    await run('ip', ['-n', namespace, 'link', 'set', 'eth0', 'up']);
    await run('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
    await run('ip', ['-n', namespace, 'route', 'add', 'default', 'via', BOX_LINK.sandboxd]);
    // Forwarding is per namespace: the sandbox's forwards the box's traffic only (its table says which).
    await run('ip', [
      'netns',
      'exec',
      sandbox.namespace,
      'sh',
      '-c',
      'echo 1 > /proc/sys/net/ipv4/ip_forward',
    ]);
    await run(
      'ip',
      ['netns', 'exec', sandbox.namespace, 'nft', '-f', '-'],
      boxTable(link, sandbox.sandboxVeth, BOX_LINK, daemonPort, policy),
    );
    return { namespace };
  } catch (error) {
    await removeBoxNetwork(instance, id);
    throw error;
  }
}

/** Removes the box's namespace (its end of the link goes with it); what is gone is skipped. */
export async function removeBoxNetwork(instance: string, id: string): Promise<void> {
  await runQuietly('ip', ['netns', 'del', boxNetworkNames(instance, id).namespace]);
}

/** Replaces the box's egress table in sandbox `id`'s namespace with one for `policy` (one transaction). */
export async function updateBoxEgress(
  instance: string,
  id: string,
  policy: EgressPolicy,
  daemonPort: number,
): Promise<void> {
  const sandbox = networkNames(instance, id);
  const { link } = boxNetworkNames(instance, id);
  await run(
    'ip',
    ['netns', 'exec', sandbox.namespace, 'nft', '-f', '-'],
    replacingTable(boxTable(link, sandbox.sandboxVeth, BOX_LINK, daemonPort, policy)),
  );
}
