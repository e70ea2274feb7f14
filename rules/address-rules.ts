/**
 * Which IP addresses the gateway never connects to (DESIGN.md §5): loopback, unspecified, link-local,
 * multicast, broadcast and metadata addresses, also when embedded in IPv6 (v4-mapped, v4-compatible,
 * NAT64, 6to4). Private ranges are allowed: customer proxies live there.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The class of an address; every class but `allowed` is refused. */
export type AddressClass =
  'loopback' | 'unspecified' | 'link_local' | 'multicast' | 'broadcast' | 'metadata' | 'allowed';

/** Cloud metadata addresses refused by default (more can be configured). */
export const DEFAULT_METADATA_ADDRESSES: readonly string[] = [
  '169.254.169.254',
  'fd00:ec2::254',
  '100.100.100.200',
];

function parseIPv4(text: string): number | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** Eight 16-bit groups of an IPv6 address (zone id ignored), or undefined. */
function parseIPv6(text: string): number[] | undefined {
  const bare = text.replace(/%.*$/, '');
  if (!isIPv6(bare)) return undefined;
  // The URL serializer writes IPv6 as compressed hex only (a dotted tail becomes two groups).
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const groupsOf = (part: string): number[] =>
    part === '' ? [] : part.split(':').map((g) => parseInt(g, 16));
  const left = groupsOf(head);
  const right = groupsOf(tail ?? '');
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<number>(zeros).fill(0), ...right];
}

function classifyIPv4(value: number, metadata: ReadonlySet<number>): AddressClass {
  const first = Math.floor(value / 16777216);
  const second = Math.floor(value / 65536) % 256;
  if (metadata.has(value)) return 'metadata';
  if (first === 0) return 'unspecified';
  if (first === 127) return 'loopback';
  if (first === 169 && second === 254) return 'link_local';
  if (first >= 224 && first <= 239) return 'multicast';
  if (value === 0xffffffff) return 'broadcast';
  return 'allowed';
}

/** The IPv4 address an IPv6 address embeds, for the forms that route to it. */
function embeddedIPv4(g: readonly number[]): number | undefined {
  const v4 = (g[6] ?? 0) * 65536 + (g[7] ?? 0);
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(5) && g[5] === 0xffff) return v4; // ::ffff:a.b.c.d (v4-mapped)
  if (zeroUpTo(4) && g[4] === 0xffff && g[5] === 0) return v4; // ::ffff:0:a.b.c.d (SIIT)
  if (zeroUpTo(6) && v4 > 1) return v4; // ::a.b.c.d (v4-compatible; not :: or ::1)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4; // 64:ff9b::/96
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return v4; // 64:ff9b:1::/48 (local NAT64)
  if (g[0] === 0x2002) return (g[1] ?? 0) * 65536 + (g[2] ?? 0); // 2002::/16 (6to4)
  return undefined;
}

function sameGroups(a: readonly number[], b: readonly number[]): boolean {
  return a.every((x, i) => x === b[i]);
}

/**
 * Classifies an IP address as the gateway's connector sees it on a connected socket.
 *
 * @param extraMetadata - more metadata addresses to refuse, beside `DEFAULT_METADATA_ADDRESSES`
 * @example
 * ```ts
 * classifyAddress('::ffff:127.0.0.1'); // 'loopback'
 * classifyAddress('10.1.2.3');         // 'allowed'
 * ```
 */
export function classifyAddress(address: string, extraMetadata: readonly string[] = []): AddressClass {
  const metadataList = [...DEFAULT_METADATA_ADDRESSES, ...extraMetadata];
  const metadataV4 = new Set(metadataList.map(parseIPv4).filter((v) => v !== undefined));
  const v4 = parseIPv4(address);
  if (v4 !== undefined) return classifyIPv4(v4, metadataV4);
  const groups = parseIPv6(address);
  if (groups === undefined) return 'unspecified'; // not an address at all: refuse
  for (const entry of metadataList) {
    const meta = parseIPv6(entry);
    if (meta !== undefined && sameGroups(groups, meta)) return 'metadata';
  }
  const embedded = embeddedIPv4(groups);
  if (embedded !== undefined) {
    const cls = classifyIPv4(embedded, metadataV4);
    if (cls !== 'allowed') return cls;
  }
  if (groups.every((x) => x === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((x) => x === 0) && groups[7] === 1) return 'loopback';
  const top = groups[0] ?? 0;
  if ((top & 0xffc0) === 0xfe80) return 'link_local';
  if ((top & 0xff00) === 0xff00) return 'multicast';
  return 'allowed';
}

/** True for names that resolve to loopback by convention (RFC 6761 and Debian's /etc/hosts). */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === 'localhost.localdomain' ||
    name === 'ip6-localhost' ||
    name === 'ip6-loopback'
  );
}
