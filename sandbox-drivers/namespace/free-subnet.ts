/** Picks a /30 for a veth pair: the first one of a range, from `start` on, that the host does not use. */

/** An IPv4 range of /30 subnets. */
export interface SubnetRange {
  /** The range's first address as a number. */
  readonly base: number;
  /** How many /30s it holds. */
  readonly subnets: number;
  /** For the error when it is full, such as `100.96.0.0/12`. */
  readonly name: string;
}

function dotted(value: number): string {
  return [24, 16, 8, 0].map((shift) => String(Math.floor(value / 2 ** shift) % 256)).join('.');
}

/**
 * The two usable addresses of a free /30.
 *
 * @param usedAddresses - the output of `ip -4 -o addr show`
 */
export function pickFreeSubnet(usedAddresses: string, range: SubnetRange, start: number): [string, string] {
  for (let n = 0; n < range.subnets; n++) {
    const subnet = range.base + ((start + n) % range.subnets) * 4;
    const [first, second] = [dotted(subnet + 1), dotted(subnet + 2)];
    if (!usedAddresses.includes(` ${first}/`) && !usedAddresses.includes(` ${second}/`))
      return [first, second];
  }
  throw new Error(`no free subnet in ${range.name}`);
}
