/**
 * A header value held only in memory. It prints as `[secret]` everywhere (`String()`, JSON,
 * `util.inspect`, template strings), so a log line or an error that mentions it carries nothing.
 */
import { inspect } from 'node:util';

const MASK = '[secret]';

/**
 * An injected header value. The only way to the text is `reveal()`, called when the outgoing request is
 * built and when response headers are checked for echoes.
 *
 * @example
 * ```ts
 * const v = new SecretValue('sk-live-123');
 * `${v}`;             // '[secret]'
 * JSON.stringify(v);  // '"[secret]"'
 * v.reveal();         // 'sk-live-123'
 * ```
 */
export class SecretValue {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
    Object.freeze(this);
  }

  /** The value itself. Never log, format or store what this returns. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return MASK;
  }

  toJSON(): string {
    return MASK;
  }

  [Symbol.toPrimitive](): string {
    return MASK;
  }

  [inspect.custom](): string {
    return `SecretValue(${MASK})`;
  }
}
