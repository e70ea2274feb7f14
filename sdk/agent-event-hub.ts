/**
 * Where one `AgentStream`'s events go: the events kept for replay (at most `maxOutputBytes` of them, the
 * last event always), the one iteration position of the stream, and the observers of `events$`. It
 * reads nothing itself: the stream's reader publishes into it, when `wantsMore()` says someone waits.
 */
import { Observable, type Subscriber } from 'rxjs';
import type { AgentEvent } from '../protocol/agent-wire.js';
import { isLastEvent, keptSize } from './agent-events.js';

interface Waiter {
  readonly resolve: (result: IteratorResult<AgentEvent, undefined>) => void;
  readonly reject: (error: unknown) => void;
}

/** How the events ended: all of them (a last event, or the reader closed), or a failure. */
export type HubEnd = { readonly kind: 'complete' } | { readonly kind: 'error'; readonly error: unknown };

/** The events of one stream and their readers. */
export class AgentEventHub {
  readonly #maxBytes: number;
  readonly #onDemand: () => void;
  readonly #kept: AgentEvent[] = [];
  #keptBytes = 0;
  #dropped = 0;
  /** Index in `#kept` of the next event iteration yields. */
  #position = 0;
  readonly #waiters: Waiter[] = [];
  readonly #observers = new Set<Subscriber<AgentEvent>>();
  #end: HubEnd | undefined;

  /** `onDemand` runs whenever a reader starts waiting (an iteration step, a new observer). */
  constructor(maxBytes: number, onDemand: () => void) {
    this.#maxBytes = maxBytes;
    this.#onDemand = onDemand;
  }

  /** Events not kept because they were beyond `maxOutputBytes`. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Whether a reader waits for the next event: an iteration step, or any observer. */
  wantsMore(): boolean {
    return this.#waiters.length > 0 || this.#observers.size > 0;
  }

  /**
   * A new event: kept when it fits (the last event always), handed to a waiting iteration step and to
   * every observer.
   */
  publish(event: AgentEvent): void {
    if (this.#end !== undefined) return;
    const size = isLastEvent(event) ? 0 : keptSize(event);
    if (this.#keptBytes + size <= this.#maxBytes) {
      this.#kept.push(event);
      this.#keptBytes += size;
    } else {
      this.#dropped++;
    }
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) {
      // A waiting step is at the end of what was kept: it takes this event, kept or not.
      this.#position = this.#kept.length;
      waiter.resolve({ value: event, done: false });
    }
    for (const observer of [...this.#observers]) observer.next(event);
  }

  /** No more events: iteration ends after what was kept, observers complete or error. */
  end(end: HubEnd): void {
    if (this.#end !== undefined) return;
    this.#end = end;
    for (const waiter of this.#waiters.splice(0)) this.#settle(waiter);
    for (const observer of [...this.#observers]) {
      if (end.kind === 'error') observer.error(end.error);
      else observer.complete();
    }
    this.#observers.clear();
  }

  /** The next event of the stream's iteration (shared by every iterator of the stream). */
  next(): Promise<IteratorResult<AgentEvent, undefined>> {
    const kept = this.#kept[this.#position];
    if (kept !== undefined) {
      this.#position++;
      return Promise.resolve({ value: kept, done: false });
    }
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      if (this.#end !== undefined) {
        this.#settle(waiter);
        return;
      }
      this.#waiters.push(waiter);
      this.#onDemand();
    });
  }

  /** The events from the start (those kept), then each new one, until the end. */
  observable(): Observable<AgentEvent> {
    return new Observable<AgentEvent>((observer) => {
      for (const event of this.#kept) {
        if (observer.closed) return;
        observer.next(event);
      }
      const end = this.#end;
      if (end !== undefined) {
        if (end.kind === 'error') observer.error(end.error);
        else observer.complete();
        return;
      }
      this.#observers.add(observer);
      this.#onDemand();
      return () => this.#observers.delete(observer);
    });
  }

  #settle(waiter: Waiter): void {
    if (this.#end?.kind === 'error') waiter.reject(this.#end.error);
    else waiter.resolve({ value: undefined, done: true });
  }
}
