/**
 * A webhook destination for tests (issue 28): an HTTP server on loopback that checks each request's
 * signature with the secret it was given, answers `status` (200 by default) to the signed ones and 401
 * to the others, and keeps every attempt. `waitFor` resolves once an accepted event matches, so a test
 * waits for the event that matters.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  verifyWebhookSignature,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  webhookEventSchema,
  type WebhookEvent,
} from '../../protocol/webhook-wire.js';

/** One request the receiver got. */
export interface WebhookAttempt {
  /** The raw body. */
  readonly body: string;
  /** The `x-sdk-webhook-id` header. */
  readonly id: string | undefined;
  /** The signature checked out (and the body is a `WebhookEvent`). */
  readonly verified: boolean;
  /** What it answered. */
  readonly status: number;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * A signature-checking destination.
 *
 * @example
 * ```ts
 * const receiver = await WebhookReceiver.start(secret, () => world.now);
 * const plane = await world.start({ webhooks: [receiver.url], webhookSecret: secret });
 * ```
 */
export class WebhookReceiver {
  /** Every request, in arrival order. */
  readonly attempts: WebhookAttempt[] = [];
  /** What signed requests are answered with. */
  status = 200;
  readonly #server: Server;
  readonly #path: string;
  readonly #waiters = new Set<() => void>();

  private constructor(secret: string, now: () => number, path: string) {
    this.#path = path;
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const verified =
          req.method === 'POST' &&
          header(req, 'content-type') === 'application/json' &&
          verifyWebhookSignature({
            secret,
            body,
            timestamp: header(req, WEBHOOK_TIMESTAMP_HEADER),
            signature: header(req, WEBHOOK_SIGNATURE_HEADER),
            now: now(),
          }) &&
          webhookEventSchema.safeParse(JSON.parse(body)).success;
        const status = verified ? this.status : 401;
        this.attempts.push({ body, id: header(req, WEBHOOK_ID_HEADER), verified, status });
        res.writeHead(status).end();
        for (const waiter of this.#waiters) waiter();
      });
    });
  }

  /**
   * Listens on a loopback port; `now` is the clock timestamps are checked against (the control
   * plane's), `path` the destination's path.
   */
  static async start(secret: string, now: () => number = Date.now, path = '/hook'): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(secret, now, path);
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The destination's URL. */
  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `http://127.0.0.1:${String(port)}${this.#path}`;
  }

  /** The events acknowledged (signed, answered 2xx), in arrival order. */
  get events(): WebhookEvent[] {
    return this.attempts
      .filter((attempt) => attempt.verified && attempt.status >= 200 && attempt.status < 300)
      .map((attempt) => webhookEventSchema.parse(JSON.parse(attempt.body)));
  }

  /** The acknowledged events of one sandbox, as `type` names without the prefix. */
  typesOf(sandboxId: string): string[] {
    return this.events
      .filter((event) => event.sandboxId === sandboxId)
      .map((event) => event.type.replace('sandbox.lifecycle.', ''));
  }

  /** Resolves once an acknowledged event satisfies `match`. */
  waitFor(match: (event: WebhookEvent) => boolean): Promise<WebhookEvent> {
    return this.until(() => this.events.find(match));
  }

  /** Resolves with what `probe` gives once it gives something, probed after each request. */
  async until<T>(probe: () => T | undefined): Promise<T> {
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => {
        const waiter = (): void => {
          this.#waiters.delete(waiter);
          resolve();
        };
        this.#waiters.add(waiter);
      });
    }
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
