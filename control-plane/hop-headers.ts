/**
 * Headers of one hop (RFC 9110 §7.6.1, and `host`): never forwarded by the control plane's proxies
 * (previews, the SDKs' calls to sandboxd), in either direction.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The hop-by-hop headers and `host`, which the next hop sets itself. */
export const HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** `headers` without those in `dropped` (the hop's, by default). */
export function withoutHopHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  dropped: ReadonlySet<string> = HOP_HEADERS,
): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !dropped.has(name)) kept[name] = value;
  }
  return kept;
}
