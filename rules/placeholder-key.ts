/**
 * The placeholder key. Some provider packages refuse to start without a key of their own, so the agent's
 * runtime gets this non-secret value instead; the gateway drops every incoming header that carries it
 * (bare or after an auth scheme such as `Bearer`), so it never leaves the sandbox as a credential, even
 * in a header the route does not inject.
 */
export const PLACEHOLDER_KEY = 'sdk-placeholder';

/** True for a header value that is the placeholder (`sdk-placeholder`, `Bearer sdk-placeholder`). */
export function isPlaceholderCredential(value: string): boolean {
  const parts = value.trim().split(/\s+/);
  return parts.length <= 2 && parts.at(-1) === PLACEHOLDER_KEY;
}
