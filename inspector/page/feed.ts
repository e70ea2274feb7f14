/**
 * The page-wide subscription to the inspection feed (`GET /v1/inspect`, from `after=0`: everything the
 * control plane still holds, then live), kept per actor in memory for the views to draw from.
 */
import type { InspectionFeedRecord } from '../../protocol/control-plane-api.js';
import type { Api } from './api.js';
import { follow, type Followed } from './ndjson.js';

/** Records kept per actor; older ones are dropped first. */
const PER_ACTOR = 5000;

function isRecord(value: unknown): value is InspectionFeedRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<InspectionFeedRecord>;
  return (
    typeof record.actorId === 'string' &&
    typeof record.seq === 'number' &&
    typeof record.state === 'string' &&
    typeof record.at === 'number' &&
    typeof record.cursor === 'number' &&
    typeof record.event === 'object' &&
    typeof record.event.type === 'string'
  );
}

/** One record as it arrived, with whether it arrived live (worth animating) or as backlog. */
export type FeedListener = (record: InspectionFeedRecord) => void;

/** Every actor's transitions, live. */
export class InspectionFeed {
  readonly #byActor = new Map<string, InspectionFeedRecord[]>();
  readonly #listeners = new Set<FeedListener>();
  readonly #connectionListeners = new Set<(connected: boolean) => void>();
  #followed: Followed | null = null;
  #connected = false;

  /** Opens the subscription. */
  start(api: Api): void {
    this.#followed = follow(api, {
      after: 0,
      path: (cursor) => `/v1/inspect?after=${String(cursor ?? 0)}`,
      parse: (value) => (isRecord(value) ? value : null),
      cursorOf: (record) => record.cursor,
      onLine: (record) => {
        this.#add(record);
      },
      onConnection: (connected) => {
        this.#connected = connected;
        for (const listener of this.#connectionListeners) listener(connected);
      },
    });
  }

  /** Closes it. */
  stop(): void {
    this.#followed?.stop();
    this.#followed = null;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** Calls `listener` on every new record; returns the unsubscribe. */
  subscribe(listener: FeedListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` when the stream connects or breaks; returns the unsubscribe. */
  onConnection(listener: (connected: boolean) => void): () => void {
    this.#connectionListeners.add(listener);
    return () => this.#connectionListeners.delete(listener);
  }

  /** One actor's records, oldest first. */
  records(actorId: string): readonly InspectionFeedRecord[] {
    return this.#byActor.get(actorId) ?? [];
  }

  /** The ids of the actors a sandbox hosts (`<sandboxId>/<name>`), sorted. */
  hostedActors(sandboxId: string): string[] {
    const prefix = `${sandboxId}/`;
    return [...this.#byActor.keys()].filter((id) => id.startsWith(prefix)).sort();
  }

  /** The latest record of an actor. */
  latest(actorId: string): InspectionFeedRecord | undefined {
    return this.#byActor.get(actorId)?.at(-1);
  }

  #add(record: InspectionFeedRecord): void {
    let records = this.#byActor.get(record.actorId);
    if (records === undefined) {
      records = [];
      this.#byActor.set(record.actorId, records);
    }
    const last = records.at(-1);
    if (last === undefined || last.seq < record.seq) {
      records.push(record);
    } else {
      // A record seen before (a reopened stream repeats the latest), or one out of order.
      const index = records.findIndex((other) => other.seq >= record.seq);
      if (records[index]?.seq === record.seq) return;
      records.splice(index, 0, record);
    }
    if (records.length > PER_ACTOR) records.splice(0, records.length - PER_ACTOR);
    for (const listener of this.#listeners) listener(record);
  }
}
