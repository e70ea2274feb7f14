/**
 * Signed webhooks (issue 28): every lifecycle change of a sandbox (created, paused, resumed, ended,
 * failed) POSTed as a signed `WebhookEvent` (`protocol/webhook-wire.ts`) to the operator's destinations
 * (`sdk serve --webhook`) and to the sandbox's own (`webhookUrl` at create), at least once and in order
 * per sandbox and destination, retried with backoff (`webhook-queue.ts`).
 *
 * Durability comes from the journal, with no file of its own. An event is a sandbox's journaled
 * transition: the queue takes it when the transition is applied, live or replayed, so a restart's replay
 * rebuilds it. What is journaled besides: each acknowledgement (`webhook_delivered`, replayed as the
 * delivery leaving the queue), the operator's destinations whenever a start changes them
 * (`webhook_destinations`: a transition goes where the destinations in effect at its place in the
 * journal said, and deliveries to a destination no longer given are dropped), and at compaction the
 * deliveries still waiting (`webhook_pending`). A restart thus resumes exactly where the journal was:
 * nothing lost, and nothing sent twice but a delivery whose acknowledgement was not yet durable.
 *
 * With `timers: false` nothing is sent until `tick()`, which sends everything due and waits for it.
 */
import { createHash } from 'node:crypto';
import type { SandboxStateName } from '../actors/sandbox-actor.js';
import type { WebhookEvent, WebhookEventType } from '../protocol/webhook-wire.js';
import { InvalidArgumentError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import { webhookUrlSchema } from '../rules/webhook-url.js';
import type { JournalRecord, SandboxJournal, WebhookRecord } from './journal-records.js';
import type { LiveSandbox } from './sandbox-registry.js';
import { WebhookQueue, type WebhookDelivery } from './webhook-queue.js';
import { WebhookSender } from './webhook-sender.js';

/** Attempts under way at once, over every destination. */
const CONCURRENCY = 8;

/** Deliveries a destination may hold before new ones are dropped (about 5 MB). */
export const DEFAULT_MAX_PER_DESTINATION = 10_000;

/** The shortest signing secret given, characters. */
const MIN_SECRET = 16;

/** What webhooks work with. */
export interface WebhooksOptions {
  /** The operator's destinations (checked here: http or https URLs). */
  readonly destinations: readonly string[];
  /** The signing secret, at least 16 characters (never logged, never sent). */
  readonly secret: string;
  readonly journal: SandboxJournal;
  /** The clock, ms: an event's `at` is the sandbox's journaled clock, the signature's timestamp this. */
  readonly now: () => number;
  /** Send on timers (true), or only in `tick()`. */
  readonly timers: boolean;
  /** `DEFAULT_MAX_PER_DESTINATION` by default. */
  readonly maxPerDestination?: number;
}

/** The event `state` after `previous` is (undefined: the sandbox was just created), if any. */
function typeOf(
  previous: SandboxStateName | undefined,
  state: SandboxStateName,
  endReason: string | undefined,
): WebhookEventType | undefined {
  if (previous === undefined) return 'sandbox.lifecycle.created';
  if (state === previous) return undefined;
  if (state === 'ended')
    return endReason === 'failed' ? 'sandbox.lifecycle.failed' : 'sandbox.lifecycle.ended';
  return state === 'suspended' ? 'sandbox.lifecycle.paused' : 'sandbox.lifecycle.resumed';
}

/** A delivery's id: the same for the same destination, sandbox and change, replayed or not. */
function deliveryId(url: string, sandboxId: string, seq: number): string {
  const digest = createHash('sha256').update(`${url}\n${sandboxId}\n${String(seq)}`, 'utf8');
  return `whk_${digest.digest('base64url').slice(0, 32)}`;
}

/**
 * The webhooks of one control plane.
 *
 * @example
 * ```ts
 * const webhooks = new Webhooks({ destinations, secret, journal, now: Date.now, timers: true });
 * const registry = new SandboxRegistry(projection, (sandbox, restored) => webhooks.track(sandbox, restored));
 * for (const record of webhookRecords) webhooks.replay(record); // recovery, with the sandboxes' records
 * await webhooks.begin(); // journals changed destinations, then sends
 * ```
 */
export class Webhooks {
  readonly #configured: readonly string[];
  /** The operator's destinations as the journal says (`#configured` once `begin` journaled them). */
  #destinations: readonly string[] = [];
  readonly #queue: WebhookQueue;
  readonly #sender: WebhookSender;
  readonly #journal: SandboxJournal;
  readonly #now: () => number;
  readonly #timers: boolean;
  /** False while the journal is replayed: nothing is sent. */
  #begun = false;
  #closed = false;
  #sending = 0;
  #timer: NodeJS.Timeout | undefined;

  /** @throws InvalidArgumentError for a destination that is not an http(s) URL, or a short secret */
  constructor(options: WebhooksOptions) {
    this.#configured = [
      ...new Set(options.destinations.map((url) => parseOptions(webhookUrlSchema, url, 'webhooks'))),
    ];
    if (options.secret.length < MIN_SECRET) {
      throw new InvalidArgumentError(`webhookSecret: at least ${String(MIN_SECRET)} characters`, {
        field: 'webhookSecret',
      });
    }
    this.#queue = new WebhookQueue(options.maxPerDestination ?? DEFAULT_MAX_PER_DESTINATION);
    this.#sender = new WebhookSender({ secret: options.secret, now: options.now });
    this.#journal = options.journal;
    this.#now = options.now;
    this.#timers = options.timers;
  }

  /** Deliveries waiting (the one being sent included). */
  get pending(): number {
    return this.#queue.size;
  }

  /** Deliveries dropped because their destination held too many. */
  get dropped(): number {
    return this.#queue.dropped;
  }

  /**
   * Queues an event for each change of a sandbox's state from now on, and its creation unless it was
   * `restored` from a compacted journal (its creation is behind it).
   */
  track(sandbox: LiveSandbox, restored: boolean): void {
    const { actor } = sandbox;
    let previous: SandboxStateName | undefined = restored ? actor.state : undefined;
    actor.state$.subscribe((state) => {
      const { context } = actor.snapshot;
      const type = typeOf(previous, state, context.endReason);
      previous = state;
      if (type === undefined || this.#closed) return;
      const reason =
        state === 'ended' ? context.endReason : state === 'suspended' ? context.suspendReason : undefined;
      this.#enqueue(sandbox, {
        type,
        sandboxId: actor.id,
        seq: actor.seq,
        at: context.now,
        state,
        reason: reason ?? null,
        template: sandbox.facts.template,
        metadata: { ...(sandbox.facts.metadata ?? {}) },
      });
    });
  }

  /** Applies a replayed webhook record. */
  replay(record: WebhookRecord): void {
    if (record.kind === 'webhook_destinations') {
      this.#destinations = record.urls;
      this.#queue.keepOperatorDestinations(new Set(record.urls));
    } else if (record.kind === 'webhook_delivered') this.#queue.acknowledge(record.deliveryId);
    else this.#queue.add(record.delivery);
  }

  /** The journal is replayed: journals the operator's destinations if they changed, then sends. */
  async begin(): Promise<void> {
    const journaled = new Set(this.#destinations);
    if (this.#configured.length !== journaled.size || this.#configured.some((url) => !journaled.has(url))) {
      const record = { kind: 'webhook_destinations', urls: this.#configured } as const;
      await this.#journal.append(record);
      this.replay(record);
    }
    this.#begun = true;
    this.#kick();
  }

  /** The records a compaction writes: the destinations, then every delivery waiting, in order. */
  records(): JournalRecord[] {
    return [
      ...(this.#destinations.length === 0
        ? []
        : [{ kind: 'webhook_destinations', urls: this.#destinations } as const]),
      ...this.#queue.pending().map((delivery) => ({ kind: 'webhook_pending', delivery }) as const),
    ];
  }

  /** Sends every delivery due now, lane after lane until one fails or empties, and waits for them. */
  async tick(): Promise<void> {
    if (!this.#begun) return;
    for (;;) {
      const due = this.#queue.take(this.#now(), CONCURRENCY);
      if (due.length === 0 || this.#closed) return;
      await Promise.all(due.map((delivery) => this.#attempt(delivery)));
    }
  }

  /** Stops sending; attempts under way are cut (their deliveries wait in the journal). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#sender.close();
  }

  /** Queues the event for the operator's destinations and the sandbox's own. */
  #enqueue(sandbox: LiveSandbox, event: Omit<WebhookEvent, 'id'>): void {
    const own = sandbox.facts.webhookUrl;
    const urls = new Set([...this.#destinations, ...(own === undefined ? [] : [own])]);
    for (const url of urls) {
      const id = deliveryId(url, event.sandboxId, event.seq);
      this.#queue.add({ id, url, own: url === own, event: { id, ...event } });
    }
    this.#kick();
  }

  /**
   * One attempt; an acknowledgement is journaled before the delivery leaves the queue. Then, with
   * timers, the next ones.
   */
  async #attempt(delivery: WebhookDelivery): Promise<void> {
    this.#sending += 1;
    const acknowledged = await this.#sender.send(delivery);
    this.#sending -= 1;
    if (this.#closed) return;
    // A journal that broke or closed meanwhile: it is sent again later (at least once).
    const recorded =
      acknowledged &&
      (await this.#journal.append({ kind: 'webhook_delivered', deliveryId: delivery.id }).then(
        () => true,
        () => false,
      ));
    if (recorded) this.#queue.acknowledge(delivery.id);
    else this.#queue.failed(delivery.id, this.#now());
    this.#kick();
  }

  /** With timers: starts the attempts due, then sets the timer for the next. */
  #kick(): void {
    if (!this.#timers || !this.#begun || this.#closed) return;
    const due = this.#queue.take(this.#now(), CONCURRENCY - this.#sending);
    for (const delivery of due) void this.#attempt(delivery);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const next = this.#queue.nextDueAt();
    // At full concurrency the next attempt starts when one under way ends.
    if (next === undefined || this.#sending >= CONCURRENCY) return;
    this.#timer = setTimeout(() => this.#kick(), Math.max(0, next - this.#now()));
    this.#timer.unref();
  }
}
