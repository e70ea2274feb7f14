/**
 * Header rules of SPEC "SecretGateway": names are RFC 9110 tokens, unique ignoring case (and `_`/`.`
 * spellings, DESIGN.md §5), never a transport header the gateway sets itself; values hold no byte that
 * could split a header.
 */

/** Transport headers the gateway fixes itself; a route may not inject them. */
export const TRANSPORT_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'expect',
  'http2-settings',
]);

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** True for an RFC 9110 token. */
export function isHeaderToken(name: string): boolean {
  return TOKEN.test(name);
}

/**
 * The key two header names share when a proxy or server could treat them as one: lower case, with `_`
 * and `.` folded to `-`.
 */
export function headerKey(name: string): string {
  return name.toLowerCase().replace(/[_.]/g, '-');
}

/** Why a single header name is refused, or undefined when it is acceptable. */
export function headerNameProblem(name: string): string | undefined {
  if (!isHeaderToken(name)) return 'must be an RFC 9110 token';
  if (TRANSPORT_HEADERS.has(headerKey(name))) return 'is a transport header the gateway sets itself';
  return undefined;
}

/** Names that collide with an earlier name of the list once compared by `headerKey`. */
export function duplicateHeaderNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  return names.filter((name) => {
    const key = headerKey(name);
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  });
}

/**
 * True when a value can be sent as a header value: only HTAB, visible ASCII, space and obs-text, so no
 * CR, LF or NUL can split the request.
 */
export function isSafeHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}
