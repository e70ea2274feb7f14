/**
 * Webhook rules (issue 28) as properties: a signature verifies exactly what was signed (secret,
 * timestamp and body), and the delivery queue, under any interleaving of new events, failed and
 * acknowledged attempts and time, acknowledges each delivery at most once, each sandbox's deliveries to
 * a destination in the order they came, never retries a lane before its backoff is over, and delivers
 * everything once the destinations answer.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { backoffMs, WebhookQueue, type WebhookDelivery } from '../../control-plane/webhook-queue.js';
import { verifyWebhookSignature, webhookSignature } from '../../protocol/webhook-wire.js';

const NOW = 1_700_000_000_000;
const seconds = Math.floor(NOW / 1000);

test.prop([fc.string({ minLength: 1 }), fc.string(), fc.integer({ min: -300, max: 300 })])(
  'a signature verifies for its secret, timestamp and body, within the tolerance',
  (secret, body, skew) => {
    const timestamp = seconds + skew;
    const signature = webhookSignature(secret, timestamp, body);
    expect(verifyWebhookSignature({ secret, body, timestamp: String(timestamp), signature, now: NOW })).toBe(
      true,
    );
  },
);

test.prop([
  fc.string({ minLength: 1 }),
  fc.string(),
  fc.record({
    secret: fc.string({ minLength: 1 }),
    body: fc.string(),
    shift: fc.integer({ min: -5, max: 5 }),
  }),
])('a signature verifies nothing else: another secret, timestamp or body', (secret, body, other) => {
  fc.pre(other.secret !== secret || other.body !== body || other.shift !== 0);
  const signature = webhookSignature(secret, seconds, body);
  expect(
    verifyWebhookSignature({
      secret: other.secret,
      body: other.body,
      timestamp: String(seconds + other.shift),
      signature,
      now: NOW,
    }),
  ).toBe(false);
});

/** One step of a run: a new event, a round of attempts with their outcomes, or time passing. */
type Step =
  | { readonly kind: 'event'; readonly sandbox: number; readonly destination: number }
  | { readonly kind: 'round'; readonly outcomes: readonly boolean[] }
  | { readonly kind: 'wait'; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('event' as const),
    sandbox: fc.integer({ min: 0, max: 3 }),
    destination: fc.integer({ min: 0, max: 1 }),
  }),
  fc.record({ kind: fc.constant('round' as const), outcomes: fc.array(fc.boolean(), { maxLength: 8 }) }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 10_000 }) }),
);

test.prop([fc.array(step, { maxLength: 80 })])(
  'the queue keeps each lane in order, acknowledges once, honours the backoff and drains',
  (steps) => {
    const queue = new WebhookQueue(1000);
    let now = NOW;
    let seq = 0;
    const added = new Map<string, string[]>(); // lane → ids in the order they came
    const acknowledged = new Map<string, string[]>();
    const retryAt = new Map<string, number>(); // lane → when its head may be tried again
    const failures = new Map<string, number>();
    const laneOf = (delivery: WebhookDelivery) => `${delivery.url} ${delivery.event.sandboxId}`;

    const round = (outcomes: readonly boolean[], at: number): void => {
      const heads = queue.take(at);
      heads.forEach((head, i) => {
        const lane = laneOf(head);
        expect(added.get(lane)?.[acknowledged.get(lane)?.length ?? 0]).toBe(head.id); // its lane's next
        expect(at).toBeGreaterThanOrEqual(retryAt.get(lane) ?? 0);
        if (outcomes[i] ?? true) {
          queue.acknowledge(head.id);
          acknowledged.set(lane, [...(acknowledged.get(lane) ?? []), head.id]);
          failures.delete(lane);
          retryAt.delete(lane);
        } else {
          queue.failed(head.id, at);
          const failed = (failures.get(lane) ?? 0) + 1;
          failures.set(lane, failed);
          retryAt.set(lane, at + backoffMs(failed));
        }
      });
    };

    for (const s of steps) {
      if (s.kind === 'event') {
        seq += 1;
        const url = `http://127.0.0.1/${String(s.destination)}`;
        const event = {
          id: `e${String(seq)}`,
          type: 'sandbox.lifecycle.paused' as const,
          sandboxId: `sbx${String(s.sandbox)}`,
          seq,
          at: now,
          state: 'suspended' as const,
          reason: 'paused' as const,
          template: 'sdk-base',
          metadata: {},
        };
        expect(queue.add({ id: event.id, url, own: false, event })).toBe(true);
        const lane = `${url} ${event.sandboxId}`;
        added.set(lane, [...(added.get(lane) ?? []), event.id]);
      } else if (s.kind === 'round') round(s.outcomes, now);
      else now += s.ms;
    }
    // The destinations answer from now on: everything is delivered, in order, once.
    for (let i = 0; queue.size > 0 && i < 1000; i++) {
      now += 300_000;
      round([], now);
    }
    expect(queue.size).toBe(0);
    expect(Object.fromEntries(acknowledged)).toEqual(Object.fromEntries(added));
  },
);
