/**
 * What the control plane tells browsers: the inspector page's Content-Security-Policy and the headers
 * every answer carries, and the refusal of a credential sent from another origin (a page elsewhere must
 * never use the operator key a person typed into the inspector, nor a token; no answer carries CORS
 * headers either, so another origin can read nothing).
 */
import type { IncomingMessage } from 'node:http';
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
