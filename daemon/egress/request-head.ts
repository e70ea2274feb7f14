/**
 * The host a plain HTTP/1.x request names (RFC 9112 §3, RFC 9110 §7.2), read from the head sandbox code
 * sends before sandboxd decides whether to connect it anywhere. Strict where leniency would let the
 * filter and the server read different hosts: one Host header, CRLF line ends only, no obs-fold, no
 * space before a header's colon, and an absolute-form target must name the Host's own host and port.
 * A reason says what was wrong in a few words and never repeats the request's bytes (they end up in logs).
 */
import { Buffer } from 'node:buffer';

/** What the bytes so far say: wait for more, the host (and port) named, or why the head is refused. */
export type HeadRead =
  | { readonly state: 'more' }
  | { readonly state: 'done'; readonly host: string; readonly port: number | undefined }
  | { readonly state: 'invalid'; readonly reason: string };

/** The longest head, its closing blank line included. */
const MAX_HEAD = 16 * 1024;
const END_OF_HEAD = Buffer.from('\r\n\r\n', 'latin1');

/** A character of a token (RFC 9110 §5.6.2): methods and header names are tokens. */
const TCHAR = "[!#$%&'*+.^_`|~0-9A-Za-z-]";
const TOKEN = `${TCHAR}+`;
const REQUEST_LINE = new RegExp(`^${TOKEN} [\\x21-\\x7e]+ HTTP/1\\.[01]$`);
/** What a request line may be before it is whole: any prefix of one. */
const REQUEST_LINE_START = new RegExp(
  `^(?:${TCHAR}*|${TOKEN} [\\x21-\\x7e]*|${TOKEN} [\\x21-\\x7e]+ (?:H(?:T(?:T(?:P(?:/(?:1(?:\\.[01]?)?)?)?)?)?)?)?)$`,
);
const HEADER_LINE = new RegExp(`^(${TOKEN}):[ \\t]*([^\\x00-\\x08\\x0a-\\x1f\\x7f]*?)[ \\t]*$`);
/** A label of a Host name: stricter than DNS allows, as no real web host needs more. */
const LABEL = /^[a-z0-9_-]{1,63}$/;
const MAX_NAME = 253;

const MORE: HeadRead = { state: 'more' };
const invalid = (reason: string): HeadRead => ({ state: 'invalid', reason });

/** A host and its port, as compared between the request target and Host. */
interface Authority {
  readonly host: string;
  readonly port: number | undefined;
}

/**
 * Reads the request head at the start of `bytes` (all received so far on a connection): `more` until
 * its blank line has arrived, then the host its one Host header names, lower case, a DNS name's trailing
 * dot dropped, an IPv6 literal without brackets in its compressed form; `invalid` when the head is over
 * 16 KiB or breaks the rules above. A first line that cannot start a request is `invalid` at once.
 *
 * @example
 * ```ts
 * readRequestHead(Buffer.from('GET / HTTP/1.1\r\nHost: PyPI.org:8080\r\n\r\n'));
 * // { state: 'done', host: 'pypi.org', port: 8080 }
 * ```
 */
export function readRequestHead(bytes: Buffer): HeadRead {
  const window = bytes.subarray(0, MAX_HEAD);
  const end = window.indexOf(END_OF_HEAD);
  if (end < 0) {
    // Refuse what is not HTTP now rather than wait for a blank line that never comes.
    const firstLine = window.toString('latin1').split('\r\n', 1)[0] ?? '';
    const whole = firstLine.length < window.length - 1 || firstLine.endsWith('\r');
    const line = whole ? firstLine.replace(/\r$/, '') : firstLine;
    if (!(whole ? REQUEST_LINE : REQUEST_LINE_START).test(line)) return invalid('bad request line');
    return window.length >= MAX_HEAD ? invalid('head too large') : MORE;
  }
  if (end + END_OF_HEAD.length > MAX_HEAD) return invalid('head too large');
  const [requestLine = '', ...headerLines] = window.toString('latin1', 0, end).split('\r\n');
  if (!REQUEST_LINE.test(requestLine)) return invalid('bad request line');
  const hosts: string[] = [];
  for (const line of headerLines) {
    if (line.startsWith(' ') || line.startsWith('\t')) return invalid('obs-fold');
    const header = HEADER_LINE.exec(line);
    if (header === null) return invalid('bad header');
    if (header[1]?.toLowerCase() === 'host') hosts.push(header[2] ?? '');
  }
  if (hosts.length === 0) return invalid('no host');
  if (hosts.length > 1) return invalid('duplicate host');
  const host = authority(hosts[0] ?? '');
  if (host === undefined) return invalid('bad host');
  const [method = '', target = ''] = requestLine.split(' ');
  const named = targetAuthority(method, target);
  if (named === 'bad') return invalid('bad target');
  if (named !== undefined && (named.host !== host.host || named.port !== host.port)) {
    return invalid('host mismatch');
  }
  return { state: 'done', host: host.host, port: host.port };
}

/**
 * The authority a request target names: absolute-form's (`http://host:port/…`, no userinfo) and
 * CONNECT's authority-form; undefined for origin-form (`/…`) and `*`; `bad` for anything else.
 */
function targetAuthority(method: string, target: string): Authority | undefined | 'bad' {
  if (method === 'CONNECT') return authority(target) ?? 'bad';
  if (target.startsWith('/') || target === '*') return undefined;
  const absolute = /^https?:\/\/([^/?#]*)/i.exec(target);
  // Userinfo is never sent in HTTP (RFC 9110 §4.2.4); `@` would also let the two sides split differently.
  const named = absolute?.[1];
  if (named === undefined || named.includes('@')) return 'bad';
  return authority(named) ?? 'bad';
}

/**
 * `host[:port]` read strictly: a DNS name of letters, digits, `-` and `_` (trailing dot dropped), a
 * dotted IPv4 address, or `[IPv6]`; a port of 1..65535. Undefined otherwise.
 */
function authority(text: string): Authority | undefined {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const host =
    match[1]?.startsWith('[') === true ? ipv6Host(match[1].slice(1, -1)) : nameHost(match[1] ?? '');
  return host === undefined ? undefined : { host, port };
}

/** A DNS name or an IPv4 address, lower case, trailing dot dropped. */
function nameHost(text: string): string | undefined {
  const name = text.toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > MAX_NAME) return undefined;
  const labels = name.split('.');
  if (!labels.every((label) => LABEL.test(label))) return undefined;
  // A name ending in a number is an address to URL parsers (`0x7f.1`, `2130706433`): only the one
  // spelling of an IPv4 address is taken, so the filter and the server read the same one.
  const last = labels.at(-1) ?? '';
  if (/^(?:\d+|0x[0-9a-f]*)$/.test(last)) {
    const dotted = labels.length === 4 && labels.every((label) => /^(?:0|[1-9]\d{0,2})$/.test(label));
    if (!dotted || !labels.every((label) => Number(label) <= 255)) return undefined;
  }
  return name;
}

/** An IPv6 literal (no zone id) in its compressed lower-case form, as the URL standard writes it. */
function ipv6Host(text: string): string | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  try {
    return new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}
