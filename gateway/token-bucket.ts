/**
 * The per-route token bucket of SPEC "In-sandbox gateway listener", step 2. It refills continuously at
 * `ratePerMinute / 60000` tokens per millisecond and holds at most one second's worth (at least one
 * token), so 600/min admits a burst of 10 and then 10 per second.
 */

/** Milliseconds from some fixed origin; monotonic. */
export type Clock = () => number;

/** A token bucket on an injected clock. */
export class TokenBucket {
  #perMs = 0;
  #capacity = 1;
  #tokens = 0;
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
    this.#tokens = this.#capacity;
  }

  /** Changes the rate; tokens already saved stay, up to the new capacity. */
  setRate(ratePerMinute: number): void {
    this.#refill();
    this.#perMs = ratePerMinute / 60_000;
    this.#capacity = Math.max(1, ratePerMinute / 60);
    this.#tokens = Math.min(this.#tokens, this.#capacity);
  }

  /** Takes one token if there is one. */
  take(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Milliseconds until the next token is available (0 when one is). */
  msUntilNextToken(): number {
    this.#refill();
    return this.#tokens >= 1 ? 0 : Math.ceil((1 - this.#tokens) / this.#perMs);
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#tokens = Math.min(this.#capacity, this.#tokens + elapsed * this.#perMs);
  }
}
