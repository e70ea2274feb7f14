/**
 * The sandbox access token check: constant-time, on SHA-256 digests so the comparison never depends on
 * where two tokens differ or on their lengths.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Checks requests against one token. */
export class TokenCheck {
  readonly #expected: Buffer;

  constructor(token: string) {
    this.#expected = digest(token);
  }

  /** True when the request carries the token as `Authorization: Bearer <token>`. */
  admits(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    const presented = header?.startsWith('Bearer ') === true ? header.slice(7) : '';
    return timingSafeEqual(this.#expected, digest(presented));
  }
}
