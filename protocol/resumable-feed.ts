/**
 * Feeds that survive a broken connection, the one way both the SDK (its observables) and the control
 * plane (its follower of each sandboxd) read a sequenced stream: each value carries a sequence number,
 * and when a connection breaks the feed opens a new one after the last number it handed out, so a
 * reconnect neither misses nor repeats a value. Pure RxJS: each side opens its own connections
 * (`sdk/ndjson-feed.ts`, `control-plane/daemon-feed.ts`).
 */
import {
  defer,
  filter,
  repeat,
  retry,
  tap,
  throwError,
  timer,
  type Observable,
  type SchedulerLike,
} from 'rxjs';
import { SdkError } from '../rules/errors.js';

/** How a feed resumes. */
export interface ResumeOptions {
  /** Start after this sequence number (undefined: wherever the server starts). */
  readonly after?: number | undefined;
  /** Connections opened again in a row after breaks, before the feed errors (default 5; may be Infinity). */
  readonly retries?: number;
  /** The first wait before opening again, doubled each time in a row (default 100 ms). */
  readonly delayMs?: number;
  /** The longest wait before opening again (default: no bound). */
  readonly maxDelayMs?: number;
  /**
   * A follower's feed (the control plane's of a sandboxd): a refusal is tried again like a break, and a
   * connection that completes is opened again too; the feed ends only when unsubscribed.
   */
  readonly follow?: boolean;
  /** For tests (RxJS `TestScheduler`). */
  readonly scheduler?: SchedulerLike;
}

/**
 * `open(after)` for each connection, resumed after the last sequence number seen; values at or below it
 * (a server that replays) are dropped. An `SdkError` (a refusal: no resuming helps) ends the feed at once;
 * other errors open the connection again, up to `retries` in a row. The feed completes when a connection
 * completes.
 *
 * @example
 * ```ts
 * resumableFeed((after) => ndjsonFeed(url(after), token, parse), (event) => event.seq);
 * ```
 */
export function resumableFeed<T>(
  open: (after: number | undefined) => Observable<T>,
  seqOf: (value: T) => number,
  options: ResumeOptions = {},
): Observable<T> {
  const delayMs = options.delayMs ?? 100;
  const follow = options.follow ?? false;
  const wait = (attempt: number): Observable<0> =>
    timer(Math.min(options.maxDelayMs ?? Infinity, delayMs * 2 ** (attempt - 1)), options.scheduler);
  return defer(() => {
    let after = options.after;
    const connection = defer(() => open(after)).pipe(
      filter((value) => after === undefined || seqOf(value) > after),
      tap((value) => {
        after = seqOf(value);
      }),
    );
    return (follow ? connection.pipe(repeat({ delay: () => wait(1) })) : connection).pipe(
      retry({
        count: options.retries ?? 5,
        resetOnSuccess: true,
        delay: (error: unknown, attempt) =>
          error instanceof SdkError && !follow ? throwError(() => error) : wait(attempt),
      }),
    );
  });
}
