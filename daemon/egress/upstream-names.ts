/**
 * The addresses of a name sandbox code may reach, as sandboxd asks its upstream DNS servers: only IPv4
 * (no sandbox has an IPv6 route), never a forbidden address (loopback, link-local and metadata,
 * multicast, the sandbox's own: a name that answers one is a rebinding attempt) nor one the policy
 * denies by CIDR. Both the resolver and the name checks connect to what this returns, so what sandbox
 * code dialled never matters.
 */
import { promises as dns } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { classifyAddress } from '../../rules/address-rules.js';
import { denyingEntry, type EgressPolicy } from '../../rules/egress-policy.js';

/** What a lookup found: usable addresses with their TTLs, and why others were dropped. */
export interface NameAddresses {
  readonly addresses: readonly { readonly address: string; readonly ttl: number }[];
  /** Set when the name exists but every address was dropped: the rule that dropped the first. */
  readonly dropped?: string;
  /** The upstream's failure (`ENOTFOUND`, `ETIMEOUT`…) when it answered none. */
  readonly failure?: string;
}

/** Lookups through fixed upstream servers. */
export class UpstreamNames {
  readonly #resolver: dns.Resolver | undefined;
  readonly #own: readonly string[];

  /**
   * @param servers - `address[:port]`; none: every lookup fails (`ESERVFAIL`)
   * @param own - the sandbox's own addresses, refused like loopback
   */
  constructor(servers: readonly string[], own: readonly string[]) {
    this.#own = own;
    if (servers.length === 0) return;
    this.#resolver = new dns.Resolver({ timeout: 2_000, tries: 2 });
    this.#resolver.setServers([...servers]);
  }

  /** The usable IPv4 addresses of `name` under `policy`. */
  async lookup(name: string, policy: EgressPolicy): Promise<NameAddresses> {
    if (this.#resolver === undefined) return { addresses: [], failure: 'ESERVFAIL' };
    let found: { address: string; ttl: number }[];
    try {
      found = await this.#resolver.resolve4(name, { ttl: true });
    } catch (error) {
      return { addresses: [], failure: (error as NodeJS.ErrnoException).code ?? 'ESERVFAIL' };
    }
    let dropped: string | undefined;
    const addresses = found.filter(({ address }) => {
      const kind = classifyAddress(address, this.#own);
      if (kind !== 'allowed') {
        dropped ??= kind;
        return false;
      }
      // Only a deny CIDR drops an address here: an allowed name stands for its own addresses.
      const denied = denyingEntry(policy, address);
      if (denied !== undefined) dropped ??= denied;
      return denied === undefined;
    });
    return addresses.length === 0 && dropped !== undefined ? { addresses, dropped } : { addresses };
  }

  /**
   * These lookups with the shape of `dns.lookup`, for a connector (the gateway's, the broker's), under
   * the policy `policy()` returns at each lookup.
   */
  lookupFunction(policy: () => EgressPolicy): LookupFunction {
    return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      void this.lookup(hostname, policy()).then((found) => {
        const first = found.addresses[0];
        if (first === undefined) {
          const code = found.failure ?? 'ENOTFOUND';
          callback(Object.assign(new Error(`no usable address for ${hostname}`), { code }));
        } else if (options.all === true) {
          callback(
            null,
            found.addresses.map(({ address }) => ({ address, family: 4 })),
          );
        } else {
          callback(null, first.address, 4);
        }
      });
    }) as LookupFunction;
  }
}
