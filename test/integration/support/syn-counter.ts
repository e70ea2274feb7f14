/**
 * Counts (and drops) TCP SYNs this host sends to one port on any address outside the test range
 * 198.18.0.0/15: the proof that the gateway never even tries to connect to a refused address. The
 * nftables table is the test's own and is deleted afterwards.
 */
import { sh } from './test-network.js';

/** A SYN counter on one destination port. */
export interface SynCounter {
  count(): number;
  remove(): void;
}

/** Installs the counter in the host's namespace. */
export function countSyns(port: number): SynCounter {
  const table = `sdkt_syn_${String(process.pid)}`;
  sh(
    'nft',
    ['-f', '-'],
    `table inet ${table} {
  chain out {
    type filter hook output priority 0; policy accept;
    ip daddr 198.18.0.0/15 accept
    tcp dport ${String(port)} tcp flags & (syn | ack) == syn counter drop
  }
}
`,
  );
  return {
    count: () => Number(/packets (\d+)/.exec(sh('nft', ['list', 'table', 'inet', table]))?.[1] ?? NaN),
    remove: () => void sh('nft', ['delete', 'table', 'inet', table]),
  };
}
