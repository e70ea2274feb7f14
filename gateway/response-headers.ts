/**
 * Step 6 of SPEC "In-sandbox gateway listener": the headers (and trailers, DESIGN.md §5) returned to
 * sandbox code. Transport headers, headers named like a configured header, headers the upstream's
 * `Connection` nominates, and any header whose value contains an injected value are removed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CheckedRoute } from './configuration.js';
import { TRANSPORT_HEADERS, headerKey } from '../rules/header-rules.js';
import type { InjectedValues } from './injected-values.js';

function nominated(headers: IncomingHttpHeaders): Set<string> | undefined {
  const connection = headers.connection;
  if (connection === undefined) return undefined;
  const list = Array.isArray(connection) ? connection.join(',') : connection;
  return new Set(list.split(',').map((token) => headerKey(token.trim())));
}

/**
 * The flat `[name, value, ...]` list to return, from upstream headers parsed by undici (lower-case
 * names, repeated headers as arrays).
 *
 * @param keepLength - keep `content-length` (response headers); trailers never carry one
 */
export function filterResponseHeaders(
  headers: IncomingHttpHeaders,
  route: CheckedRoute,
  injected: InjectedValues,
  keepLength = true,
): string[] {
  const dropped = nominated(headers);
  const out: string[] = [];
  for (const name of Object.keys(headers)) {
    if (TRANSPORT_HEADERS.has(name) && !(keepLength && name === 'content-length')) continue;
    const key = headerKey(name);
    if (route.headerKeys.has(key) || dropped?.has(key) === true) continue;
    const value = headers[name];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (!injected.occursIn(item)) out.push(name, item);
    }
  }
  return out;
}
