/**
 * The SDK's client for one sandbox's daemon: token-authenticated JSON calls, error envelopes turned
 * into SDK exceptions, NDJSON answers as raw values (`lines`), and process event streams parsed with
 * zod into RxJS observables.
 */
import type { Readable } from 'node:stream';
import { catchError, defer, Observable, retry, tap, throwError, timer } from 'rxjs';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { SandboxError, SdkError } from '../rules/errors.js';
import { processEventSchema, type ProcessEvent } from '../protocol/process-events.js';
import { readAnswer } from './json-answer.js';
import { ndjsonFeed } from './ndjson-feed.js';
import { ndjsonValues } from '../protocol/ndjson.js';

/** How `lines` sends its request. */
interface LinesOptions {
  readonly json?: unknown;
  readonly text?: string;
  readonly signal?: AbortSignal;
}

/** A daemon address and the token to present. */
export interface DaemonEndpoint {
  /** `http://host:port` of sandboxd. */
  readonly url: string;
  readonly accessToken: string;
  /** Deadline of one call (not of event streams). */
  readonly requestTimeoutMs?: number;
  /**
   * Runs before every call, making none of its own: the sandbox handle refuses there, before any
   * traffic, once it knows its sandbox ended.
   */
  readonly beforeCall?: () => void;
  /** Hears every refusal of a call (the handle learns there that its sandbox ended). */
  readonly onRefusal?: (error: unknown) => void;
}

const dispatcher = new Agent({ bodyTimeout: 0, headersTimeout: 60_000 });

/** Calls one daemon. The token is kept in a private field and sent only as a header. */
export class DaemonClient {
  readonly url: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #beforeCall: () => void;
  readonly #onRefusal: (error: unknown) => void;

  constructor(endpoint: DaemonEndpoint) {
    this.url = endpoint.url;
    this.#token = endpoint.accessToken;
    this.#timeoutMs = endpoint.requestTimeoutMs ?? 60_000;
    this.#beforeCall = endpoint.beforeCall ?? (() => undefined);
    this.#onRefusal = endpoint.onRefusal ?? (() => undefined);
  }

  /** Sends a JSON call and parses the answer with `schema`. */
  async call<T extends z.ZodType>(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    schema: T,
    body?: unknown,
  ): Promise<z.output<T>> {
    return this.#heard(async () => {
      const res = await this.#send(method, path, body === undefined ? undefined : JSON.stringify(body));
      return readAnswer(res, schema, `the daemon to ${method} ${path}`);
    });
  }

  /** Sends raw bytes (stdin). */
  async sendBytes(path: string, data: Uint8Array): Promise<void> {
    await this.#heard(async () =>
      readAnswer(await this.#send('POST', path, data), z.unknown(), `the daemon to POST ${path}`),
    );
  }

  /**
   * A binary answer (the home archive, a file) as its body arrives, not read ahead, its length when the
   * daemon announced one, and its trailers, filled in once the body has ended. A refusal rejects with
   * its SDK exception.
   */
  async download(path: string): Promise<{
    body: Readable;
    length: number | undefined;
    trailers: Readonly<Record<string, unknown>>;
  }> {
    const res = await this.#heard(async () => {
      const answer = await this.#send('GET', path, undefined);
      if (answer.statusCode >= 400) throw errorFromEnvelope(await answer.body.json().catch(() => undefined));
      return answer;
    });
    const length = Number(res.headers['content-length'] ?? Number.NaN);
    return {
      body: res.body,
      length: Number.isSafeInteger(length) ? length : undefined,
      trailers: res.trailers,
    };
  }

  /** Sends `body` as it is read (the home archive, `contentType`) with PUT; the JSON answer parsed with `schema`. */
  async upload<T extends z.ZodType>(
    path: string,
    body: Readable,
    contentType: string,
    schema: T,
  ): Promise<z.output<T>> {
    return this.#heard(async () =>
      readAnswer(await this.#send('PUT', path, body, contentType), schema, `the daemon to PUT ${path}`),
    );
  }

  /**
   * A command's events from `path`, until its end; errors become SDK exceptions. With `body`, the stream
   * is the answer to a POST of it (a command started and followed in one call). A stream that breaks
   * (sandboxd cuts off a reader that left its socket full too long) is opened again after the last
   * event read (`?after=<seq>`), so nothing still kept is missed or repeated.
   */
  events(path: string, body?: unknown): Observable<ProcessEvent> {
    return defer(() => {
      let pid: number | undefined;
      let after = 0;
      const open = (): Observable<ProcessEvent> =>
        pid === undefined
          ? this.#eventsOnce(path, body)
          : this.#eventsOnce(`/v1/processes/${String(pid)}/events?after=${String(after)}`);
      return defer(open).pipe(
        tap((event) => {
          if (event.type === 'start') pid = event.pid;
          if (event.type !== 'keepalive' && event.seq !== undefined) after = event.seq;
        }),
        retry({
          count: REATTACH_ATTEMPTS,
          resetOnSuccess: true,
          // Only a break is worth another try, and only once the pid and a numbered event are known: a
          // start sent again would start the command twice, and a sandboxd too old to number its events
          // would replay them all.
          delay: (error: unknown, attempt) =>
            error instanceof StreamBroke && pid !== undefined && after > 0
              ? timer(50 * 2 ** (attempt - 1))
              : throwError(() => error),
        }),
        catchError((error: unknown) =>
          throwError(() => (error instanceof StreamBroke ? error.sdkError : error)),
        ),
      );
    });
  }

  /** One connection of `events`: a break is a `StreamBroke`, anything else an SDK exception. */
  #eventsOnce(path: string, body?: unknown): Observable<ProcessEvent> {
    return new Observable<ProcessEvent>((subscriber) => {
      const abort = new AbortController();
      const run = async (): Promise<void> => {
        const lines = await this.#lines(
          body === undefined ? 'GET' : 'POST',
          path,
          { ...(body === undefined ? {} : { json: body }), signal: abort.signal },
          true,
        );
        for await (const value of lines) {
          const parsed = processEventSchema.safeParse(value);
          if (!parsed.success) throw new SandboxError('malformed process event from the daemon');
          subscriber.next(parsed.data);
        }
        subscriber.complete();
      };
      run().catch((error: unknown) => {
        if (abort.signal.aborted) return;
        subscriber.error(
          error instanceof StreamBroke || error instanceof SdkError
            ? error
            : new SandboxError(`the event stream of the sandbox daemon broke (${path})`),
        );
      });
      return () => abort.abort();
    });
  }

  /**
   * An NDJSON answer as parsed values, one per line, read as the caller pulls them (the body is not
   * read ahead). Resolves once the daemon has answered with a success status; a refusal rejects with
   * its SDK exception. `json` is sent as `application/json`, `text` as raw UTF-8 `text/plain` (a
   * prompt); `signal` ends the request and the reading. Reading errors are SDK exceptions: a line
   * that is not JSON, or a stream that broke, is a `SandboxError` naming the path only.
   */
  lines(method: 'GET' | 'POST', path: string, options: LinesOptions = {}): Promise<AsyncIterable<unknown>> {
    return this.#lines(method, path, options, false);
  }

  /** Runs `call`; a refusal is heard by `onRefusal` on its way to the caller. */
  async #heard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.#onRefusal(error);
      throw error;
    }
  }

  /** `lines`; with `resumable`, a stream that broke throws a `StreamBroke` for `events` to re-attach. */
  async #lines(
    method: 'GET' | 'POST',
    path: string,
    options: LinesOptions,
    resumable: boolean,
  ): Promise<AsyncIterable<unknown>> {
    this.#beforeCall();
    const [body, contentType] =
      options.text !== undefined
        ? [options.text, 'text/plain; charset=utf-8']
        : options.json !== undefined
          ? [JSON.stringify(options.json), 'application/json']
          : [null, undefined];
    let res;
    try {
      res = await request(`${this.url}${path}`, {
        method,
        dispatcher,
        body,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(contentType === undefined ? {} : { 'content-type': contentType }),
        },
      });
    } catch {
      throw new SandboxError(`the sandbox daemon did not answer ${method} ${path}`);
    }
    if (res.statusCode >= 400) {
      const refusal = errorFromEnvelope(await res.body.json().catch(() => undefined));
      this.#onRefusal(refusal);
      throw refusal;
    }
    return sdkErrors(ndjsonValues(res.body), path, resumable);
  }

  /**
   * One NDJSON connection to `path` with this sandbox's token (for `resumableFeed`): each line parsed by
   * `parse`, lines it refuses skipped. No check before it: a feed of a sandbox that ended is refused by
   * the control plane, which never resumes a sandbox for sandboxd's own feed (`/v1/events`).
   */
  feed<T>(path: string, parse: (value: unknown) => T | undefined): Observable<T> {
    return ndjsonFeed(`${this.url}${path}`, this.#token, parse);
  }

  async #send(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body: string | Uint8Array | Readable | undefined,
    contentType?: string,
  ) {
    this.#beforeCall();
    try {
      return await request(`${this.url}${path}`, {
        method,
        dispatcher,
        body: body ?? null,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
          ...(contentType === undefined ? {} : { 'content-type': contentType }),
        },
      });
    } catch {
      throw new SandboxError(`the sandbox daemon did not answer ${method} ${path}`);
    }
  }
}

/**
 * A stream that broke off (not a refusal, not a malformed line): `events` opens it again; callers that
 * do not resume get `sdkError`.
 */
class StreamBroke extends Error {
  constructor(readonly sdkError: SandboxError) {
    super(sdkError.message);
  }
}

/** Connections `events` opens again in a row after breaks before it gives up. */
const REATTACH_ATTEMPTS = 5;

/**
 * `values` with any failure turned into an SDK exception that names `path`, never the content; with
 * `resumable`, a break is a `StreamBroke` (which `events` re-attaches after).
 */
async function* sdkErrors(values: AsyncGenerator, path: string, resumable: boolean): AsyncGenerator {
  try {
    for await (const value of values) yield value;
  } catch (error) {
    if (error instanceof SdkError) throw error;
    if (error instanceof SyntaxError) {
      throw new SandboxError(`malformed line in the event stream of the sandbox daemon (${path})`);
    }
    const broke = new SandboxError(`the event stream of the sandbox daemon broke (${path})`);
    throw resumable ? new StreamBroke(broke) : broke;
  }
}
