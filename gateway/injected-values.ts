/**
 * The values a response header must never carry (SPEC step 6, DESIGN.md §5): every configured value of
 * 8 characters or more and every value injected by a request still in flight, so both the old and the
 * new value are covered around a refresh.
 */
import { LIMITS } from '../rules/limits.js';
import type { SecretValue } from './secret-value.js';

/** A reference-counted set of values, held by configured routes and by requests in flight. */
export class InjectedValues {
  readonly #counts = new Map<string, number>();

  /** Holds every long enough value once more. */
  hold(values: readonly SecretValue[]): void {
    for (const value of values) {
      const text = value.reveal();
      if (text.length < LIMITS.minRedactedValueLength) continue;
      this.#counts.set(text, (this.#counts.get(text) ?? 0) + 1);
    }
  }

  /** Releases what `hold` took for the same values. */
  release(values: readonly SecretValue[]): void {
    for (const value of values) {
      const text = value.reveal();
      const count = this.#counts.get(text);
      if (count === undefined) continue;
      if (count <= 1) this.#counts.delete(text);
      else this.#counts.set(text, count - 1);
    }
  }

  /** True when `text` contains any held value. */
  occursIn(text: string): boolean {
    for (const value of this.#counts.keys()) {
      if (text.includes(value)) return true;
    }
    return false;
  }

  /** Number of distinct values held (for tests and status). */
  get size(): number {
    return this.#counts.size;
  }
}
