/**
 * Where a request to the sandbox's egress proxy asks to go: a `CONNECT` authority (`host:port`) or an
 * absolute-form `http://` target. A name is normalised as egress entries are (lower case, no trailing
 * dot); an address must be dotted-decimal IPv4 (no sandbox has an IPv6 route, and other spellings of an
 * address are what hides a forbidden one).
 */
import { ipv4Number, parseEgressEntry } from '../../rules/egress-policy.js';

/** A parsed target. */
export type ProxyTarget =
  | { readonly kind: 'name' | 'address'; readonly host: string; readonly port: number }
  | { readonly kind: 'invalid'; readonly reason: string };

function invalid(reason: string): ProxyTarget {
  return { kind: 'invalid', reason };
}

/** The target of `host` and `port` text. */
function targetOf(host: string, portText: string): ProxyTarget {
  if (!/^[0-9]{1,5}$/.test(portText)) return invalid('no port');
  const port = Number(portText);
  if (port < 1 || port > 65535) return invalid('no port');
  if (host.startsWith('[')) return invalid('IPv6 is not routed to sandboxes');
  if (/^[0-9.]+$/.test(host)) {
    return ipv4Number(host) === undefined ? invalid('not an IPv4 address') : { kind: 'address', host, port };
  }
  const entry = parseEgressEntry(host);
  if ('error' in entry || entry.kind !== 'domain' || entry.wildcard) return invalid('not a host name');
  return { kind: 'name', host: entry.text, port };
}

/** A `CONNECT` request's target, `host:port`. */
export function connectTarget(authority: string): ProxyTarget {
  const colon = authority.lastIndexOf(':');
  if (colon <= 0) return invalid('CONNECT needs host:port');
  return targetOf(authority.slice(0, colon), authority.slice(colon + 1));
}

/** An absolute-form request's target and its path with query; only `http://` (HTTPS goes by CONNECT). */
export function absoluteTarget(
  url: string,
):
  | { readonly target: ProxyTarget; readonly path: string }
  | { readonly target: ProxyTarget & { kind: 'invalid' } } {
  if (!/^http:\/\//i.test(url)) {
    return { target: { kind: 'invalid', reason: 'the proxy takes CONNECT or an absolute http:// target' } };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { target: { kind: 'invalid', reason: 'not a URL' } };
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return { target: { kind: 'invalid', reason: 'a target with a user or password' } };
  }
  const target = targetOf(parsed.hostname, parsed.port === '' ? '80' : parsed.port);
  if (target.kind === 'invalid') return { target };
  return { target, path: `${parsed.pathname}${parsed.search}` };
}
