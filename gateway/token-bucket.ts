/**
 * The per-route token bucket of SPEC "In-sandbox gateway listener", step 2. It refills continuously at
 * `ratePerMinute / 60000` tokens per millisecond and holds at most one second's worth (at least one
 * token), so 600/min admits a burst of 10 and then 10 per second.
 */

/** Milliseconds from some fixed origin; monotonic. */
export type Clock = () => number;

/** One token, in the bucket's units: a rate of r per minute adds r units per millisecond. */
const TOKEN = 60_000;

/** A token bucket on an injected clock. Levels are kept in integer units so waiting is exact. */
export class TokenBucket {
  #ratePerMinute = 1;
  #capacity = TOKEN;
  #level = 0;
  #last: number;
  readonly #now: Clock;

  /**
   * @param ratePerMinute - requests admitted per minute (already resolved: 1..6000)
   * @param now - the clock; `performance.now` in production, a fake in tests
   * @example
   * ```ts
   * const bucket = new TokenBucket(600, () => performance.now());
   * bucket.take(); // true
   * ```
   */
  constructor(ratePerMinute: number, now: Clock) {
    this.#now = now;
    this.#last = now();
    this.setRate(ratePerMinute);
    this.#level = this.#capacity;
  }

  /** Changes the rate; tokens already saved stay, up to the new capacity. */
  setRate(ratePerMinute: number): void {
    this.#refill();
    this.#ratePerMinute = ratePerMinute;
    this.#capacity = Math.max(TOKEN, ratePerMinute * 1_000); // one second's worth, at least one token
    this.#level = Math.min(this.#level, this.#capacity);
  }

  /** Takes one token if there is one. */
  take(): boolean {
    this.#refill();
    if (this.#level < TOKEN) return false;
    this.#level -= TOKEN;
    return true;
  }

  /** Milliseconds until the next token is available (0 when one is). */
  msUntilNextToken(): number {
    this.#refill();
    return this.#level >= TOKEN ? 0 : Math.ceil((TOKEN - this.#level) / this.#ratePerMinute);
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#level = Math.min(this.#capacity, this.#level + elapsed * this.#ratePerMinute);
  }
}
