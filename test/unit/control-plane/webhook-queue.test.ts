/**
 * The webhook delivery queue (issue 28): lanes per destination and sandbox, the backoff's steps and
 * cap, the per-destination cap (new deliveries past it dropped and counted, other destinations
 * unaffected), dropping a removed operator destination (a sandbox's own stay), and the order compaction
 * writes.
 */
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  MAX_BACKOFF_MS,
  WebhookQueue,
  type WebhookDelivery,
} from '../../../control-plane/webhook-queue.js';

let seq = 0;
function delivery(url: string, sandboxId: string, own = false): WebhookDelivery {
  seq += 1;
  const id = `d${String(seq)}`;
  return {
    id,
    url,
    own,
    event: {
      id,
      type: 'sandbox.lifecycle.created',
      sandboxId,
      seq,
      at: 0,
      state: 'running',
      reason: null,
      template: 'sdk-base',
      metadata: {},
    },
  };
}

const A = 'http://127.0.0.1/a';
const B = 'http://127.0.0.1/b';

describe('the webhook queue', () => {
  it('waits 1 s, 2 s, 4 s … at most 5 min between attempts', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(9)).toBe(256_000);
    expect(backoffMs(10)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(10_000)).toBe(MAX_BACKOFF_MS);
  });

  it('gives one head per lane, the next only after the one before is acknowledged', () => {
    const queue = new WebhookQueue(100);
    const [a1, a2, b1] = [delivery(A, 's1'), delivery(A, 's1'), delivery(A, 's2')];
    for (const d of [a1, a2, b1]) queue.add(d);
    expect(queue.take(0).map((d) => d.id)).toEqual([a1.id, b1.id]);
    expect(queue.take(0)).toEqual([]); // being sent
    queue.failed(a1.id, 0);
    expect(queue.nextDueAt()).toBe(1000);
    expect(queue.take(999)).toEqual([]);
    expect(queue.take(1000).map((d) => d.id)).toEqual([a1.id]);
    queue.acknowledge(a1.id);
    expect(queue.take(1000).map((d) => d.id)).toEqual([a2.id]);
  });

  it('drops new deliveries past a destination’s cap, keeping the older ones and other destinations', () => {
    const queue = new WebhookQueue(3);
    const kept = [delivery(A, 's1'), delivery(A, 's2'), delivery(A, 's1')];
    for (const d of kept) expect(queue.add(d)).toBe(true);
    expect(queue.add(delivery(A, 's3'))).toBe(false);
    expect(queue.add(delivery(B, 's3'))).toBe(true);
    expect(queue.dropped).toBe(1);
    expect(queue.size).toBe(4);
    const [first] = queue.take(0);
    queue.acknowledge(first?.id ?? '');
    expect(queue.add(delivery(A, 's3'))).toBe(true); // room again
  });

  it('drops a removed operator destination’s deliveries, not a sandbox’s own, and lists lanes in order', () => {
    const queue = new WebhookQueue(100);
    const own = delivery(A, 's1', true);
    const operator = [delivery(A, 's2'), delivery(B, 's1'), delivery(B, 's1')];
    for (const d of [own, ...operator]) queue.add(d);
    expect(queue.pending().map((d) => d.id)).toEqual([own.id, ...operator.map((d) => d.id)]);
    queue.keepOperatorDestinations(new Set([B]));
    expect(queue.pending().map((d) => d.id)).toEqual([own.id, operator[1]?.id, operator[2]?.id]);
  });
});
