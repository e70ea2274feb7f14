/**
 * What the control plane journals (DESIGN.md §1): one JSON record per line in `journal.jsonl` under the
 * state folder, each durable before the control plane applies what it says. `recovery.ts` reads the
 * records back on start and writes the compacted ones.
 */
import { join } from 'node:path';
import { Journal } from '../actors/journal.js';
import type { JournalWriter } from '../actors/sandbox-actor.js';
import type { SandboxMachineEvent, SandboxMachineInput } from '../machines/sandbox-machine.js';
import type { Isolation, SandboxInfo } from '../protocol/control-plane-api.js';
import type { EgressPolicy } from '../rules/egress-policy.js';
import type { SnapshotRecord } from './snapshot-store.js';
import type { WebhookDelivery } from './webhook-queue.js';

/** What the control plane keeps about a sandbox beside its machine. */
export interface SandboxFacts {
  readonly template: string;
  /** Absent in journals written before gVisor (issue 26): those sandboxes are namespace ones. */
  readonly isolation?: Isolation;
  /** Its limits as launched (absent in journals written before snapshots: none can be taken of it). */
  readonly limits?: { readonly memoryMb: number; readonly maxPids: number; readonly cpus: number };
  /** The snapshot it was started from. */
  readonly snapshotId?: string;
  readonly allowInternetAccess: boolean;
  /** Its egress policy (absent in journals written before issue 27: `allowInternetAccess` says it). */
  readonly egress?: EgressPolicy;
  readonly daemonUrl: string;
  /** Its metadata, as given at create (issue 28; absent: none). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Ports of its loopback anyone may reach through their preview URL (issue 28; absent: none). */
  readonly publicPorts?: readonly number[];
  /** SHA-256 of the access token, hex: the token itself is never stored. */
  readonly tokenHash: string;
  /** Where its lifecycle events go besides the operator's destinations (issue 28; never shown). */
  readonly webhookUrl?: string;
}

/** What the journal records. */
export type JournalRecord =
  | { readonly kind: 'launching'; readonly id: string }
  | { readonly kind: 'launch_failed'; readonly id: string }
  | {
      readonly kind: 'created';
      readonly id: string;
      readonly input: SandboxMachineInput;
      readonly facts: SandboxFacts;
    }
  | {
      readonly kind: 'event';
      readonly id: string;
      /** The actor's sequence number of the event (absent in journals written before 0.10 actors). */
      readonly seq?: number;
      readonly event: SandboxMachineEvent;
    }
  /** Written by compaction: a live sandbox as its persisted snapshot, instead of its events so far. */
  | {
      readonly kind: 'snapshot';
      readonly id: string;
      readonly input: SandboxMachineInput;
      readonly facts: SandboxFacts;
      readonly seq: number;
      readonly snapshot: unknown;
    }
  /** Written by compaction: an ended sandbox, its facts only. */
  | { readonly kind: 'ended'; readonly id: string; readonly info: SandboxInfo; readonly facts: SandboxFacts }
  /** A snapshot about to be written (`snapshot-store.ts`); its files are removed unless it is taken. */
  | { readonly kind: 'snapshot_taking'; readonly snapshotId: string }
  | { readonly kind: 'snapshot_taken'; readonly snapshot: SnapshotRecord }
  | { readonly kind: 'snapshot_deleted'; readonly snapshotId: string }
  /** A live sandbox's egress policy changed (`PUT /v1/sandboxes/{id}/egress`). */
  | { readonly kind: 'egress'; readonly id: string; readonly egress: EgressPolicy }
  /** A live sandbox's public ports changed (`PUT /v1/sandboxes/{id}/previews/{port}`). */
  | { readonly kind: 'ports'; readonly id: string; readonly publicPorts: readonly number[] }
  | WebhookRecord;

/**
 * Webhook records (`webhooks.ts`): the operator's destinations from here on (journaled at a start that
 * changed them), a destination's acknowledgement of a delivery, and (written by compaction) a delivery
 * not yet acknowledged. A sandbox's events themselves are its journaled transitions.
 */
export type WebhookRecord =
  | { readonly kind: 'webhook_destinations'; readonly urls: readonly string[] }
  | { readonly kind: 'webhook_delivered'; readonly deliveryId: string }
  | { readonly kind: 'webhook_pending'; readonly delivery: WebhookDelivery };

/**
 * The journal of one state folder, typed by its records.
 *
 * @example
 * ```ts
 * const journal = new SandboxJournal(stateDir, 10_000);
 * await journal.append({ kind: 'launching', id });
 * await actor.send(event, journal.writerFor(id), effects);
 * ```
 */
export class SandboxJournal {
  readonly #journal: Journal<JournalRecord>;
  readonly #compactAfter: number;
  #closed = false;

  /** Opens (or makes) `journal.jsonl` in `stateDir`; it is compacted past `compactAfter` new records. */
  constructor(stateDir: string, compactAfter: number) {
    this.#journal = Journal.open(join(stateDir, 'journal.jsonl'));
    this.#compactAfter = compactAfter;
  }

  /** The records read at open, in order. */
  get records(): readonly JournalRecord[] {
    return this.#journal.records;
  }

  /** Appends a record; resolves once it is durable (see `Journal.append`). */
  append(record: JournalRecord): Promise<void> {
    return this.#journal.append(record);
  }

  /** Journals the events of the sandbox `id`'s actor, with their sequence numbers. */
  writerFor(id: string): JournalWriter {
    return (event, seq) => this.#journal.append({ kind: 'event', id, seq, event });
  }

  /**
   * Once the journal holds `compactAfter` records beyond its start, replaces its contents with
   * `records()`, so replay time stays bounded as history grows. `records` must reflect every append that
   * resolved and has been applied (see `Journal.compact`): call it from the timer's turn.
   */
  async compactIfDue(records: () => readonly JournalRecord[]): Promise<void> {
    if (this.#closed || this.#journal.appendedSinceOpenOrCompaction < this.#compactAfter) return;
    await this.#journal.compact(records());
  }

  /** Waits for what is pending and closes the file; no compaction starts afterwards. */
  close(): Promise<void> {
    this.#closed = true;
    return this.#journal.close(); // the records appended before are durable when this resolves
  }
}
