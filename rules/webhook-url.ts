/**
 * A webhook destination (issue 28): where a control plane POSTs lifecycle events, given by the operator
 * (`sdk serve --webhook`) or at a sandbox's create (`webhookUrl`). An absolute http or https URL, at most
 * 2048 characters, with no user name or password (a credential in a URL ends up in logs) and no
 * fragment (never sent).
 */
import { z } from 'zod';

/** The longest destination, characters. */
export const MAX_WEBHOOK_URL = 2048;

/** True when `text` has no user info and no fragment (the caller checked it is an http(s) URL). */
function plainUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && url.username === '' && url.password === '' && !text.includes('#');
}

/** A webhook destination. */
export const webhookUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(MAX_WEBHOOK_URL, `must be at most ${String(MAX_WEBHOOK_URL)} characters`)
  .refine(plainUrl, 'must carry no user name, password or fragment');
