/**
 * One command's process events in order, each numbered (`seq`, from 1) so a client that was cut off
 * re-attaches after the last one it read. Output is what grows: the log keeps at most `maxBytes` of it
 * (base64 characters, as kept) and drops the oldest output first; the start and end events always stay.
 * The owner may drop more (`dropOldestOutput`) when the sandbox's output budget runs short.
 */
import type { ProcessEvent } from '../protocol/process-events.js';

/** An event with its number in the command's log. */
export interface LoggedEvent {
  readonly seq: number;
  readonly event: ProcessEvent;
}

/** Output bytes an event holds in the log (its base64 text). */
function sizeOf(event: ProcessEvent): number {
  return event.type === 'data' ? event.data.length : 0;
}

/** A command's bounded event log. */
export class OutputLog {
  readonly #maxBytes: number;
  /**
   * Kept events, oldest first, from `#head` on (a queue without shifting the array each time); slots
   * before `#head` are emptied at once, so dropped output is garbage at once.
   */
  #entries: (LoggedEvent | undefined)[] = [];
  #head = 0;
  #start: LoggedEvent | undefined;
  #nextSeq = 1;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Output held now, in base64 characters. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Number of the last event appended (0 before any). */
  get lastSeq(): number {
    return this.#nextSeq - 1;
  }

  /** Appends `event`, dropping the oldest output beyond the log's bound; returns what was dropped. */
  append(event: ProcessEvent): number {
    const entry = { seq: this.#nextSeq++, event };
    if (event.type === 'start') this.#start = entry;
    else this.#entries.push(entry);
    this.#bytes += sizeOf(event);
    return this.#bytes > this.#maxBytes ? this.dropOldestOutput(this.#bytes - this.#maxBytes) : 0;
  }

  /**
   * The first kept event after `seq`: the next one when it is kept, else the oldest kept one after it
   * (the output between was dropped). Undefined when none has come yet.
   */
  after(seq: number): LoggedEvent | undefined {
    if (this.#start !== undefined && this.#start.seq > seq) return this.#start;
    // Numbers rise along the queue: the first one above `seq` by binary search.
    let low = this.#head;
    let high = this.#entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#entries[middle]?.seq ?? 0) > seq) high = middle;
      else low = middle + 1;
    }
    return this.#entries[low];
  }

  /** Drops at least `bytes` of the oldest output (or all of it); returns what was dropped. */
  dropOldestOutput(bytes: number): number {
    let dropped = 0;
    while (dropped < bytes && this.#head < this.#entries.length) {
      const oldest = this.#entries[this.#head];
      if (oldest?.event.type !== 'data') break; // only the end event is left
      dropped += sizeOf(oldest.event);
      this.#entries[this.#head] = undefined;
      this.#head += 1;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
    this.#bytes -= dropped;
    return dropped;
  }
}
