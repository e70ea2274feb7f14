/**
 * The timer of the next deadline (DESIGN.md §1: time reaches a machine only as a `clock` event, which
 * its host journals like any other event). A host asks its actors for their deadlines (`dues`); one
 * timer is set to the earliest, and when it fires the host sends `clock { now }` to those whose deadline
 * has come (`fire`), then schedules again. The control plane's scheduler and sandboxd's agent host use it.
 */

/** What a timer needs. */
export interface DeadlineTimerOptions {
  /** The clock, in milliseconds. */
  readonly now: () => number;
  /** The deadlines now (undefined: none). */
  readonly dues: () => Iterable<number | undefined>;
  /** Sends `clock { now }` where a deadline has come; a failure waits for the next schedule. */
  readonly fire: (now: number) => unknown;
  /** Whether the timer may let the process end (the control plane's may; sandboxd's runs anyway). */
  readonly unref?: boolean;
}

/** setTimeout's longest wait; a later deadline fires early and finds nothing due. */
const MAX_WAIT_MS = 2 ** 31 - 1;

/**
 * One timer for the earliest deadline of a host's actors.
 *
 * @example
 * ```ts
 * const timer = new DeadlineTimer({ now: Date.now, dues: () => [actor.nextDueAt], fire: (now) => send({ type: 'clock', now }) });
 * timer.schedule(); // after every event
 * ```
 */
export class DeadlineTimer {
  readonly #options: DeadlineTimerOptions;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: DeadlineTimerOptions) {
    this.#options = options;
  }

  /** The earliest deadline now, if any. */
  get nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const due of this.#options.dues())
      if (due !== undefined && (next === undefined || due < next)) next = due;
    return next;
  }

  /** Sets the timer to the earliest deadline (none: no timer), replacing the one set before. */
  schedule(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const next = this.nextDueAt;
    if (next === undefined) return;
    const wait = Math.min(Math.max(0, next - this.#options.now()), MAX_WAIT_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void Promise.resolve()
        .then(() => this.#options.fire(this.#options.now()))
        .catch(() => undefined);
    }, wait);
    if (this.#options.unref === true) this.#timer.unref();
  }

  /** Stops the timer for good. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
