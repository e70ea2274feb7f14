/**
 * The credential broker's rules (issue 27 item 2), shared by both SDKs' checks and sandboxd's: a rule
 * binds header values to one host. A host is an exact domain name (normalised as egress entries are:
 * lower case, no trailing dot), never a wildcard, an address, a port or a path: a credential goes to the
 * one name it was made for. Header names follow the gateway's rules (`gateway/header-rules.ts`).
 */
import { parseEgressEntry } from './egress-policy.js';

/** Most credential rules per sandbox. */
export const MAX_CREDENTIAL_RULES = 32;

/** The normalised host of a rule, or why `raw` is not one. */
export function parseCredentialHost(raw: string): { readonly host: string } | { readonly error: string } {
  const entry = parseEgressEntry(raw);
  if ('error' in entry) return entry;
  if (entry.kind !== 'domain') {
    return { error: 'is an address: a credential is bound to a domain name, which TLS can certify' };
  }
  if (entry.wildcard) return { error: 'is a wildcard: a credential is bound to one exact host' };
  return { host: entry.text };
}
