/**
 * Step 3 of SPEC "In-sandbox gateway listener": the headers sent upstream. Every incoming header named
 * like a configured header is removed from the raw list (duplicates and `_`/`.` spellings included,
 * DESIGN.md §5), as are transport headers, those the client's `Connection` header nominates and any
 * carrying the agent's placeholder key (`rules/placeholder-key.ts`); then the real values are injected
 * once each.
 */
import type { CheckedRoute } from './configuration.js';
import { isPlaceholderCredential } from '../rules/placeholder-key.js';
import { TRANSPORT_HEADERS, headerKey } from '../rules/header-rules.js';

/** Transport headers that still describe the request body, so they pass through. */
const BODY_FRAMING = 'content-length';

function nominatedByConnection(raw: readonly string[]): Set<string> {
  const nominated = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] ?? '').toLowerCase() !== 'connection') continue;
    for (const token of (raw[i + 1] ?? '').split(',')) {
      const name = token.trim();
      if (name !== '') nominated.add(headerKey(name));
    }
  }
  return nominated;
}

/**
 * The flat `[name, value, ...]` list to send upstream.
 *
 * @param raw - the incoming raw header list (`IncomingMessage.rawHeaders`)
 * @example
 * ```ts
 * buildUpstreamHeaders(['X_Api_Key', 'mine', 'Accept', '*\/*'], route); // ['Accept', '*\/*', 'x-api-key', <real>]
 * ```
 */
export function buildUpstreamHeaders(raw: readonly string[], route: CheckedRoute): string[] {
  const nominated = raw.length > 0 ? nominatedByConnection(raw) : undefined;
  const out: string[] = [];
  let sawLength = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const lower = name.toLowerCase();
    if (lower === BODY_FRAMING) {
      if (sawLength) continue;
      sawLength = true;
    } else if (TRANSPORT_HEADERS.has(lower)) {
      continue;
    }
    const key = headerKey(name);
    const value = raw[i + 1] ?? '';
    if (route.headerKeys.has(key) || nominated?.has(key) === true || isPlaceholderCredential(value)) continue;
    out.push(name, value);
  }
  for (const header of route.headers) out.push(header.name, header.value.reveal());
  return out;
}
