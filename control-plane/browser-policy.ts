/**
 * What the control plane tells browsers: the inspector page's Content-Security-Policy and the headers
 * every answer carries, the refusal of a credential sent from another origin (a page elsewhere must
 * never use the operator key a person typed into the inspector, nor a token; no answer carries CORS
 * headers either, so another origin can read nothing), and the refusal of a `Host` that is not the
 * control plane's (DNS rebinding).
 */
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AuthenticationError } from '../rules/errors.js';

/** The page's policy: its own script and style only, calls to its own origin only, no frames, no forms. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every answer: nothing is sniffed, framed, referred or run from an API answer. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** The policy of API answers (JSON, NDJSON): nothing in them may run if a browser opens one. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Refuses a request a browser sent from another origin: an `Origin` that is not this server's own
 * (`http://<Host>`), or `Sec-Fetch-Site: cross-site` / `same-site`. Requests without these headers
 * (SDKs, curl) pass.
 *
 * @throws AuthenticationError `forbidden_origin`
 */
export function refuseCrossOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  const own = `http://${req.headers.host ?? ''}`;
  if (site === 'cross-site' || site === 'same-site' || (origin !== undefined && origin !== own)) {
    throw new AuthenticationError('requests from another origin are refused', { code: 'forbidden_origin' });
  }
}

/** Names of the loopback interface a local caller may use for the control plane. */
const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Addresses that listen on every interface: they name no host. */
const WILDCARDS: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/** A host name as `Host` carries it: lower case, an IPv6 address in brackets. */
export function hostName(name: string): string {
  const lower = name.toLowerCase();
  return lower.includes(':') && !lower.startsWith('[') ? `[${lower}]` : lower;
}

/**
 * Refuses a request whose `Host` is not the control plane's. A page of another site whose name was made
 * to resolve to this address (DNS rebinding) is same-origin with the API in the browser's eyes and
 * sends its own name: only loopback's names, the address the server listens on and the names in `names`
 * are the control plane's, at any port (a proxy or a forwarded port in front may listen on another; a
 * page at another port is another origin, which `refuseCrossOrigin` handles).
 *
 * @param listening - the server's address (`server.address()`); a pipe is reached by no host name
 * @param names - host names it also answers to, as `hostName` gives them
 * @throws AuthenticationError `forbidden_host`
 */
export function refuseForeignHost(
  req: IncomingMessage,
  listening: AddressInfo | string | null,
  names: ReadonlySet<string>,
): void {
  if (typeof listening === 'string') return;
  const [, given] = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(req.headers.host ?? '') ?? [];
  const name = given?.toLowerCase();
  if (name !== undefined && names.has(name)) return;
  if (name !== undefined && listening !== null) {
    const own = WILDCARDS.has(listening.address) ? [] : [hostName(listening.address)];
    if (LOOPBACK_NAMES.includes(name) || own.includes(name)) return;
  }
  throw new AuthenticationError('requests for another host name are refused', { code: 'forbidden_host' });
}
