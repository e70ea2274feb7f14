/**
 * Signed webhooks (issue 28): what a control plane POSTs to a webhook destination, one sandbox lifecycle
 * event a request, and how a receiver checks it came from that control plane.
 *
 * The body is a `WebhookEvent` as JSON. Three headers go with it: `x-sdk-webhook-id` (the event's `id`,
 * the same on every retry), `x-sdk-timestamp` (when this attempt was signed, Unix seconds) and
 * `x-sdk-signature: v1=<hex>`, the HMAC-SHA256 of `${timestamp}.${body}` under the signing secret. A
 * receiver recomputes it over the raw body as received (`verifyWebhookSignature`), refuses a timestamp
 * far from its own clock (a replayed request), and answers 2xx once it has the event; anything else is
 * retried. An event never carries a secret, a token, a preview key or sandbox content: the sandbox's
 * id, state, reason, template and metadata (operator-given facts, as `getInfo` shows them) only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** The header carrying the event's id (stable across retries: deduplicate on it). */
export const WEBHOOK_ID_HEADER = 'x-sdk-webhook-id';
/** The header carrying when the attempt was signed, Unix seconds. */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-sdk-timestamp';
/** The header carrying `v1=<hex>` (more than one, space-separated, when a receiver must accept either). */
export const WEBHOOK_SIGNATURE_HEADER = 'x-sdk-signature';

/** How far a timestamp may be from the receiver's clock by default, seconds. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * The event types, after E2B's lifecycle webhook names: `ended` for a sandbox killed or timed out,
 * `failed` for one whose sandboxd died (every end is exactly one of the two).
 */
export const WEBHOOK_EVENT_TYPES = [
  'sandbox.lifecycle.created',
  'sandbox.lifecycle.paused',
  'sandbox.lifecycle.resumed',
  'sandbox.lifecycle.ended',
  'sandbox.lifecycle.failed',
] as const;

/** One lifecycle event, the body of a webhook request. */
export const webhookEventSchema = z.strictObject({
  /** Unique per destination and event, the same on every retry: receivers deduplicate on it. */
  id: z.string(),
  type: z.enum(WEBHOOK_EVENT_TYPES),
  sandboxId: z.string(),
  /** The sandbox's event number of this change: increasing per sandbox (not contiguous). */
  seq: z.number().int().nonnegative(),
  /** When it happened on the control plane's clock, ms since the epoch. */
  at: z.number(),
  /** The state it is in afterwards. */
  state: z.enum(['running', 'suspended', 'ended']),
  /** `paused` or `idle` for a pause; `killed`, `timeout` or `failed` for an end; else null. */
  reason: z.enum(['paused', 'idle', 'killed', 'timeout', 'failed']).nullable(),
  template: z.string(),
  /** The metadata given at create (empty when none). */
  metadata: z.record(z.string(), z.string()),
});

/** One lifecycle event. */
export type WebhookEvent = z.infer<typeof webhookEventSchema>;

/** Its type. */
export type WebhookEventType = WebhookEvent['type'];

/** The signature header's value for `body` signed at `timestamp` (Unix seconds): `v1=<hex>`. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${String(timestamp)}.${body}`, 'utf8');
  return `v1=${mac.digest('hex')}`;
}

/** What a receiver checks. */
export interface WebhookVerification {
  readonly secret: string;
  /** The raw body as received (not parsed and serialized again). */
  readonly body: string;
  /** The `x-sdk-timestamp` header. */
  readonly timestamp: string | undefined;
  /** The `x-sdk-signature` header. */
  readonly signature: string | undefined;
  /** The receiver's clock, ms since the epoch; `Date.now()` by default. */
  readonly now?: number;
  /** How far the timestamp may be from `now`, seconds; `WEBHOOK_TOLERANCE_SECONDS` by default. */
  readonly toleranceSeconds?: number;
}

/**
 * True when `signature` holds a `v1=` signature of `body` at `timestamp` under `secret` (compared in
 * constant time) and `timestamp` is within the tolerance of `now`.
 *
 * @example
 * ```ts
 * const ok = verifyWebhookSignature({
 *   secret, body: rawBody, timestamp: req.headers['x-sdk-timestamp'], signature: req.headers['x-sdk-signature'],
 * });
 * ```
 */
export function verifyWebhookSignature(check: WebhookVerification): boolean {
  const { timestamp, signature } = check;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) return false;
  const seconds = Number(timestamp);
  const now = (check.now ?? Date.now()) / 1000;
  if (Math.abs(now - seconds) > (check.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(webhookSignature(check.secret, seconds, check.body));
  return signature
    .split(' ')
    .map((given) => Buffer.from(given))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}
