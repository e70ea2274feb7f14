/**
 * One webhook attempt (issue 28): the event as JSON, POSTed with its id, a timestamp and the
 * HMAC-SHA256 signature (`protocol/webhook-wire.ts`) through an undici agent of its own, so closing the
 * control plane cuts every attempt under way. An attempt succeeds on a 2xx answer within the time-out;
 * anything else (another status, a redirect, a refused or slow connection) fails it. The answer's body is
 * read and discarded, at most 64 KiB of it.
 */
import { Agent, request } from 'undici';
import {
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  webhookSignature,
} from '../protocol/webhook-wire.js';
import type { WebhookDelivery } from './webhook-queue.js';

/** The longest an attempt may take, connection and answer included, ms. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** What the sender works with. */
export interface WebhookSenderOptions {
  /** The signing secret (never logged, never sent). */
  readonly secret: string;
  /** The clock the timestamp is read from, ms. */
  readonly now: () => number;
}

/**
 * Sends deliveries, signed.
 *
 * @example
 * ```ts
 * const sender = new WebhookSender({ secret, now: Date.now });
 * const acknowledged = await sender.send(delivery);
 * ```
 */
export class WebhookSender {
  readonly #secret: string;
  readonly #now: () => number;
  readonly #agent = new Agent({
    connect: { timeout: WEBHOOK_TIMEOUT_MS },
    headersTimeout: WEBHOOK_TIMEOUT_MS,
    bodyTimeout: WEBHOOK_TIMEOUT_MS,
  });

  constructor(options: WebhookSenderOptions) {
    this.#secret = options.secret;
    this.#now = options.now;
  }

  /** POSTs `delivery` to its destination: true when it answered 2xx. */
  async send(delivery: WebhookDelivery): Promise<boolean> {
    const body = JSON.stringify(delivery.event);
    const timestamp = Math.floor(this.#now() / 1000);
    try {
      const res = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'sdk-webhooks/1',
          [WEBHOOK_ID_HEADER]: delivery.id,
          [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
          [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(this.#secret, timestamp, body),
        },
        body,
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      await res.body.dump({ limit: 65_536 }).catch(() => undefined);
      return res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      return false;
    }
  }

  /** Cuts the attempts under way (they fail) and refuses new ones. */
  async close(): Promise<void> {
    await this.#agent.destroy().catch(() => undefined);
  }
}
