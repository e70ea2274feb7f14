/**
 * The webhook delivery queue (issue 28), in memory and without I/O: one lane per destination and
 * sandbox, first in first out, so a sandbox's next event goes to a destination only once the one before
 * was acknowledged; a lane whose attempt failed waits out an exponential backoff (1 s doubling, capped
 * at 5 min). Each destination holds at most `maxPerDestination` deliveries: past that a new one is
 * dropped (the older ones keep their order) and counted in `dropped`. Durability is the journal's
 * (`webhooks.ts`): this queue is rebuilt by replaying it.
 */
import type { WebhookEvent } from '../protocol/webhook-wire.js';

/** One event on its way to one destination. */
export interface WebhookDelivery {
  /** The event's `id`: unique per destination and event, stable across retries. */
  readonly id: string;
  readonly url: string;
  /** True when `url` is the sandbox's own (`webhookUrl` at create), false for an operator destination. */
  readonly own: boolean;
  readonly event: WebhookEvent;
}

/** The first retry's wait, ms. */
const FIRST_BACKOFF_MS = 1000;
/** The longest wait between attempts, ms. */
export const MAX_BACKOFF_MS = 300_000;

/** The wait after the `attempts`-th failed attempt in a row (1 s, 2 s, 4 s, … at most 5 min). */
export function backoffMs(attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(attempts - 1, 20));
}

/** A destination's deliveries for one sandbox, in order. */
interface Lane {
  /** Its key in the lanes' map. */
  readonly key: string;
  readonly deliveries: WebhookDelivery[];
  /** Failed attempts of the head in a row. */
  failures: number;
  /** When the head may be tried (0: now). */
  dueAt: number;
  /** The head is being sent. */
  sending: boolean;
}

const laneKey = (url: string, sandboxId: string): string => `${sandboxId} ${url}`;

/**
 * Lanes of deliveries.
 *
 * @example
 * ```ts
 * const queue = new WebhookQueue(10_000);
 * queue.add(delivery);
 * for (const head of queue.take(now)) (await post(head)) ? queue.acknowledge(head.id) : queue.failed(head.id, now);
 * ```
 */
export class WebhookQueue {
  readonly #maxPerDestination: number;
  /** Lanes in the order they were opened; an emptied lane is removed. */
  readonly #lanes = new Map<string, Lane>();
  readonly #laneOf = new Map<string, Lane>();
  readonly #perDestination = new Map<string, number>();
  #dropped = 0;

  constructor(maxPerDestination: number) {
    this.#maxPerDestination = maxPerDestination;
  }

  /** Deliveries dropped because their destination was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Deliveries held. */
  get size(): number {
    return this.#laneOf.size;
  }

  /** Queues `delivery` behind its lane's; false when its destination is full (it is dropped). */
  add(delivery: WebhookDelivery): boolean {
    const held = this.#perDestination.get(delivery.url) ?? 0;
    if (held >= this.#maxPerDestination || this.#laneOf.has(delivery.id)) {
      if (held >= this.#maxPerDestination) this.#dropped += 1;
      return false;
    }
    const key = laneKey(delivery.url, delivery.event.sandboxId);
    let lane = this.#lanes.get(key);
    if (lane === undefined) {
      lane = { key, deliveries: [], failures: 0, dueAt: 0, sending: false };
      this.#lanes.set(key, lane);
    }
    lane.deliveries.push(delivery);
    this.#laneOf.set(delivery.id, lane);
    this.#perDestination.set(delivery.url, held + 1);
    return true;
  }

  /**
   * The heads due at `now` and not being sent, at most `limit`, marked as being sent: each must come
   * back through `acknowledge` or `failed`.
   */
  take(now: number, limit = Number.POSITIVE_INFINITY): WebhookDelivery[] {
    const heads: WebhookDelivery[] = [];
    for (const lane of this.#lanes.values()) {
      if (heads.length >= limit) break;
      const head = lane.deliveries[0];
      if (head === undefined || lane.sending || lane.dueAt > now) continue;
      lane.sending = true;
      heads.push(head);
    }
    return heads;
  }

  /** The destination acknowledged `id` (or it was dropped): it leaves; its lane's next is due now. */
  acknowledge(id: string): void {
    const lane = this.#laneOf.get(id);
    if (lane === undefined) return;
    const index = lane.deliveries.findIndex((delivery) => delivery.id === id);
    const [removed] = lane.deliveries.splice(index, 1);
    this.#laneOf.delete(id);
    if (removed !== undefined) this.#forget(removed);
    if (index === 0) Object.assign(lane, { failures: 0, dueAt: 0, sending: false });
    if (lane.deliveries.length === 0) this.#lanes.delete(lane.key);
  }

  /** An attempt at `id` failed at `now`: its lane waits out the backoff. */
  failed(id: string, now: number): void {
    const lane = this.#laneOf.get(id);
    if (lane === undefined || lane.deliveries[0]?.id !== id) return;
    lane.failures += 1;
    lane.dueAt = now + backoffMs(lane.failures);
    lane.sending = false;
  }

  /** The earliest time a head not being sent is due, or undefined when there is none. */
  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const lane of this.#lanes.values()) {
      if (lane.sending || lane.deliveries.length === 0) continue;
      next = next === undefined ? lane.dueAt : Math.min(next, lane.dueAt);
    }
    return next;
  }

  /** Drops every delivery to an operator destination not in `urls` (a sandbox's own stay). */
  keepOperatorDestinations(urls: ReadonlySet<string>): void {
    for (const lane of [...this.#lanes.values()]) {
      for (const delivery of [...lane.deliveries]) {
        if (!delivery.own && !urls.has(delivery.url)) this.acknowledge(delivery.id);
      }
    }
  }

  /** Every delivery held, each lane in order (for compaction: replayed, they rebuild this queue). */
  pending(): WebhookDelivery[] {
    return [...this.#lanes.values()].flatMap((lane) => lane.deliveries);
  }

  #forget(delivery: WebhookDelivery): void {
    const held = (this.#perDestination.get(delivery.url) ?? 1) - 1;
    if (held === 0) this.#perDestination.delete(delivery.url);
    else this.#perDestination.set(delivery.url, held);
  }
}
