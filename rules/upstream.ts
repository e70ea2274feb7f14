/**
 * Upstream rules of SPEC "SecretGateway": `https://host` or `https://host:port`, with no path, query,
 * user or fragment, and never a host the gateway would refuse to connect to.
 */
import { isIP } from 'node:net';
import { classifyAddress, isLocalhostName } from './address-rules.js';

/** A checked upstream. */
export interface Upstream {
  /** Canonical origin, `https://host[:port]` (the default port dropped). */
  readonly origin: string;
  /** Host name or IP literal without brackets. */
  readonly hostname: string;
  /** Port number. */
  readonly port: number;
}

/** A parsed upstream, or why it was refused. */
export type UpstreamVerdict =
  { readonly ok: true; readonly upstream: Upstream } | { readonly ok: false; readonly reason: string };

const SHAPE = /^https:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$/i;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function refuse(reason: string): UpstreamVerdict {
  return { ok: false, reason };
}

/**
 * Parses an upstream. IP literals are canonicalized the way a URL parser reads them, so every spelling
 * of a loopback address (`0x7f.1`, `2130706433`, `[::ffff:127.0.0.1]`) is refused alike.
 *
 * @example
 * ```ts
 * parseUpstream('https://api.example:8443'); // ok, origin 'https://api.example:8443'
 * parseUpstream('https://127.1');            // refused: loopback
 * ```
 */
export function parseUpstream(text: string): UpstreamVerdict {
  if (typeof text !== 'string') return refuse('must be a string');
  if (!/^https:\/\//i.test(text)) return refuse('must start with https://');
  if (!SHAPE.test(text))
    return refuse('must be https://host or https://host:port, with no path, query, user or fragment');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('is not a valid URL host');
  }
  const port = url.port === '' ? 443 : Number(url.port);
  if (port < 1 || port > 65535) return refuse('port must be 1-65535');
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(hostname) === 0) {
    if (hostname.length > 253 || !hostname.split('.').every((label) => LABEL.test(label))) {
      return refuse(
        'host must be a DNS name of labels [a-z0-9-] (no leading or trailing hyphen) or an IP address',
      );
    }
    if (isLocalhostName(hostname)) return refuse('host must not be localhost');
  } else {
    const cls = classifyAddress(hostname);
    if (cls !== 'allowed') return refuse(`host must not be a ${cls.replace('_', '-')} address`);
  }
  return { ok: true, upstream: { origin: `https://${url.host}`, hostname, port } };
}
