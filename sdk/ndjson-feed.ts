/**
 * One NDJSON connection of the SDK's feeds (`protocol/resumable-feed.ts` resumes them): `GET url` with
 * the bearer token, each line parsed.
 */
import { Observable } from 'rxjs';
import { request } from 'undici';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { ndjsonValues } from '../protocol/ndjson.js';
import { SandboxError, SdkError } from '../rules/errors.js';

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
