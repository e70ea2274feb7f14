/**
 * Feeds that survive a broken connection (the observable SDK): each value carries a sequence number, and
 * when a connection breaks the feed opens a new one after the last number it handed out, so a reconnect
 * neither misses nor repeats a value. `ndjsonFeed` is one connection; `resumableFeed` the resuming.
 */
import { defer, filter, Observable, retry, tap, throwError, timer, type SchedulerLike } from 'rxjs';
import { request } from 'undici';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { ndjsonValues } from '../protocol/ndjson.js';
import { SandboxError, SdkError } from '../rules/errors.js';

/** How a feed resumes. */
export interface ResumeOptions {
  /** Start after this sequence number (undefined: wherever the server starts). */
  readonly after?: number | undefined;
  /** Connections opened again in a row after breaks, before the feed errors (default 5). */
  readonly retries?: number;
  /** The first wait before opening again, doubled each time in a row (default 100 ms). */
  readonly delayMs?: number;
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
  return defer(() => {
    let after = options.after;
    return defer(() => open(after)).pipe(
      filter((value) => after === undefined || seqOf(value) > after),
      tap((value) => {
        after = seqOf(value);
      }),
      retry({
        count: options.retries ?? 5,
        resetOnSuccess: true,
        delay: (error: unknown, attempt) =>
          error instanceof SdkError
            ? throwError(() => error)
            : timer(delayMs * 2 ** (attempt - 1), options.scheduler),
      }),
    );
  });
}

/**
 * One NDJSON connection: `GET url` with the bearer `token`, each line parsed by `parse` (lines it
 * refuses are skipped); a refusal becomes its SDK error, a broken connection a `SandboxError`.
 */
export function ndjsonFeed<T>(
  url: string,
  token: string | undefined,
  parse: (value: unknown) => T | undefined,
): Observable<T> {
  return new Observable<T>((subscriber) => {
    const abort = new AbortController();
    const run = async (): Promise<void> => {
      const res = await request(url, {
        signal: abort.signal,
        bodyTimeout: 0,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      });
      if (res.statusCode >= 400) throw errorFromEnvelope(await res.body.json().catch(() => undefined));
      for await (const value of ndjsonValues(res.body)) {
        const parsed = parse(value);
        if (parsed !== undefined) subscriber.next(parsed);
      }
    };
    run().then(
      () => subscriber.complete(),
      (error: unknown) => {
        if (abort.signal.aborted) return;
        subscriber.error(
          error instanceof SdkError ? error : new SandboxError(`the event stream at ${url} broke`),
        );
      },
    );
    return () => abort.abort();
  });
}
