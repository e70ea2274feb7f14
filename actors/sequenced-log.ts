/**
 * A feed of records with sequence numbers: a bounded history for subscribers that come back with a
 * cursor (`after`), the latest record of each key for those that start fresh, and the live feed.
 * Subscribing takes the history and the live feed in one step, so nothing falls between them.
 */
import { Observable, Subject } from 'rxjs';

/** Records dropped at once when the history is full. */
const EVICTION_CHUNK = 1_000;

/** A record as the log hands it out. */
export type Sequenced<T> = T & { readonly seq: number };

/** Options of a stream. */
export interface StreamOptions {
  /** Only the records of this key. */
  readonly key?: string | undefined;
  /** Start after this sequence number; without it, at the latest record of each key. */
  readonly after?: number | undefined;
}

/** The log. */
export class SequencedLog<T extends object> {
  #seq = 0;
  readonly #history: Sequenced<T>[] = [];
  readonly #latest = new Map<string, Sequenced<T>>();
  readonly #live = new Subject<Sequenced<T>>();
  #evicted = false;

  /**
   * @param keyOf - the key a record belongs to (a sandbox id, say)
   * @param isLast - true for a key's last record: its keyed streams complete after it
   * @param capacity - records kept for cursors
   * @param lastSeq - the number before the first one handed out (a log that outlives no process starts
   *   above every number an earlier process handed out, so an old cursor resynchronizes, never skips)
   */
  constructor(
    private readonly keyOf: (record: T) => string,
    private readonly isLast: (record: T) => boolean = () => false,
    private readonly capacity = 10_000,
    lastSeq = 0,
  ) {
    this.#seq = lastSeq;
  }

  /** Logs a record and hands it to live subscribers. */
  append(record: T): Sequenced<T> {
    const sequenced = { ...record, seq: ++this.#seq } as Sequenced<T>;
    this.#history.push(sequenced);
    // Evicted in chunks, not one shift per append (sandboxd appends a record per request).
    if (this.#history.length > this.capacity + EVICTION_CHUNK) {
      this.#history.splice(0, this.#history.length - this.capacity);
      this.#evicted = true;
    }
    this.#latest.set(this.keyOf(record), sequenced);
    this.#live.next(sequenced);
    return sequenced;
  }

  /** The sequence number of the latest record of `key` (0 before any). */
  latestSeq(key: string): number {
    return this.#latest.get(key)?.seq ?? 0;
  }

  /**
   * Records (of one key, or all): with `after`, each one logged after it that the history still holds
   * (or, when it no longer reaches back that far, the latest of each key); without, the latest of each
   * key; then every new one. A keyed stream completes after the key's last record.
   */
  stream(options: StreamOptions = {}): Observable<Sequenced<T>> {
    const { key, after } = options;
    const wanted = (record: Sequenced<T>): boolean => key === undefined || this.keyOf(record) === key;
    return new Observable<Sequenced<T>>((subscriber) => {
      // The history reaches back to the cursor when it still holds everything after it: nothing was
      // evicted yet (a cursor older than this log then gets all of it), or the cursor is recent enough.
      const oldest = this.#history[0]?.seq ?? this.#seq + 1;
      const backlog =
        after !== undefined && (!this.#evicted || after >= oldest - 1)
          ? this.#history.filter((record) => record.seq > after && wanted(record))
          : [...this.#latest.values()].filter(wanted).sort((a, b) => a.seq - b.seq);
      const emit = (record: Sequenced<T>): void => {
        subscriber.next(record);
        if (key !== undefined && this.isLast(record)) subscriber.complete();
      };
      for (const record of backlog) {
        if (subscriber.closed) return undefined;
        emit(record);
      }
      if (subscriber.closed) return undefined;
      const last = backlog.at(-1)?.seq ?? after ?? 0;
      const live = this.#live.subscribe({
        next: (record) => {
          if (record.seq > last && wanted(record)) emit(record);
        },
        complete: () => subscriber.complete(),
      });
      return () => live.unsubscribe();
    });
  }

  /** Ends every stream. */
  close(): void {
    this.#live.complete();
  }
}
