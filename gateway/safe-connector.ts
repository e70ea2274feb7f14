/**
 * The upstream connector (DESIGN.md §5): it refuses loopback, unspecified, link-local, multicast,
 * broadcast and metadata addresses, also embedded in IPv6. IP literals are refused before any packet;
 * DNS answers are filtered inside the lookup, so no SYN goes to a refused address, even when answers
 * change between lookups; and the socket actually connected is checked again before it is used.
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { createSecureContext } from 'node:tls';
import { buildConnector } from 'undici';
import { classifyAddress, type AddressClass } from '../rules/address-rules.js';

/** The connector refused an address; nothing was sent to it. */
export class RefusedAddressError extends Error {
  readonly code = 'ERR_GATEWAY_REFUSED_ADDRESS';

  constructor(readonly addressClass: Exclude<AddressClass, 'allowed'>) {
    super(`upstream address refused: ${addressClass.replace('_', '-')}`);
    this.name = 'RefusedAddressError';
  }
}

/** Options of the connector. */
export interface SafeConnectorOptions {
  /** Connect time-out covering DNS, TCP and TLS (SPEC: 10 s). */
  readonly connectTimeoutMs: number;
  /** Metadata addresses refused beside the defaults. */
  readonly metadataAddresses?: readonly string[];
  /** Trust roots replacing the system's (a test CA, a customer proxy's CA). */
  readonly ca?: string | readonly string[];
  /** Resolver with the shape of `dns.lookup`; `dns.lookup` by default. */
  readonly lookup?: LookupFunction;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A refused class for an address, or undefined when it may be used. */
function refusal(address: string, metadata: readonly string[]): Exclude<AddressClass, 'allowed'> | undefined {
  const cls = classifyAddress(address, metadata);
  return cls === 'allowed' ? undefined : cls;
}

/** Wraps a resolver so a refused address never reaches `connect`. */
export function guardLookup(lookup: LookupFunction, metadata: readonly string[] = []): LookupFunction {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(hostname, options, (error, address, family) => {
      if (error !== null) {
        callback(error, address, family);
        return;
      }
      if (Array.isArray(address)) {
        const usable = address.filter((entry) => refusal(entry.address, metadata) === undefined);
        const first = address[0];
        if (usable.length === 0 && first !== undefined) {
          callback(new RefusedAddressError(refusal(first.address, metadata) ?? 'unspecified'), []);
          return;
        }
        callback(null, usable);
        return;
      }
      const refused = refusal(address, metadata);
      if (refused !== undefined) callback(new RefusedAddressError(refused), '', family);
      else callback(null, address, family);
    });
  };
}

/**
 * Builds the connector for the shared upstream dispatcher.
 *
 * @example
 * ```ts
 * const agent = new Agent({ connect: safeConnector({ connectTimeoutMs: 10_000 }) });
 * ```
 */
export function safeConnector(options: SafeConnectorOptions): buildConnector.connector {
  const metadata = options.metadataAddresses ?? [];
  // One TLS context (trust roots included) for every upstream connection: given none, `tls.connect`
  // builds one per connection, about a fifth of what an exchange in flight costs sandboxd
  // (gateway/README.md, "Caps"). Server names and certificates are still checked per connection.
  const secureContext = createSecureContext(
    options.ca === undefined ? {} : { ca: typeof options.ca === 'string' ? options.ca : [...options.ca] },
  );
  const base = buildConnector({
    timeout: options.connectTimeoutMs,
    lookup: guardLookup(options.lookup ?? dns.lookup, metadata),
    secureContext,
  });
  return (target, callback) => {
    const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const refusedLiteral = isIP(literal) === 0 ? undefined : refusal(literal, metadata);
    if (refusedLiteral !== undefined) {
      callback(new RefusedAddressError(refusedLiteral), null);
      return;
    }
    base(target, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      const refused = refusal(socket.remoteAddress ?? '', metadata);
      if (refused === undefined) {
        callback(null, socket);
        return;
      }
      socket.destroy();
      callback(new RefusedAddressError(refused), null);
    });
  };
}
