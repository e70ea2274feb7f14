/**
 * Follows one sandboxd's event stream (`GET /v1/events`) with the control plane's credential for that
 * sandbox, from the start of what sandboxd holds, and opens it again after a break from its cursor
 * (`protocol/resumable-feed.ts`, as the SDK's feeds), so the control plane sees what the daemon saw and
 * nothing has to poll. A frozen sandbox's stream simply goes quiet until it is thawed.
 */
import { Observable } from 'rxjs';
import { request } from 'undici';
import { daemonEventSchema, type DaemonEvent } from '../protocol/daemon-events.js';
import { ndjsonValues } from '../protocol/ndjson.js';
import { resumableFeed } from '../protocol/resumable-feed.js';

/**
 * Longest line taken from a sandboxd's event stream: its records are small (strings bounded by
 * `daemonEventSchema`), and a sandboxd taken over must not make the control plane hold a huge one.
 */
export const MAX_DAEMON_LINE_CHARS = 64 * 1024;

/** Where and how to follow one daemon. */
export interface DaemonFeedTarget {
  /** `http://host:port` of sandboxd. */
  readonly url: string;
  /** The control plane's credential sandboxd admits for its stream. */
  readonly token: string;
  /** Called with each event, in order. */
  readonly onEvent: (event: DaemonEvent) => void;
}

/** One connection to the stream after `after`: its events, lines that are not one dropped. */
function connection(target: DaemonFeedTarget, after: number): Observable<DaemonEvent> {
  return new Observable<DaemonEvent>((subscriber) => {
    const abort = new AbortController();
    const run = async (): Promise<void> => {
      const res = await request(`${target.url}/v1/events?after=${String(after)}`, {
        signal: abort.signal,
        bodyTimeout: 0,
        headersTimeout: 0, // a frozen sandbox answers after its thaw
        headers: { authorization: `Bearer ${target.token}` },
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`sandboxd refused its event stream (${String(res.statusCode)})`);
      }
      for await (const value of ndjsonValues(res.body, MAX_DAEMON_LINE_CHARS)) {
        // Stopped (its sandbox ended): the rest of a chunk already read is not delivered.
        if (abort.signal.aborted) return;
        // Not an event, or one with a string past its bound (a sandboxd taken over): dropped.
        const parsed = daemonEventSchema.safeParse(value);
        if (parsed.success) subscriber.next(parsed.data);
      }
    };
    run().then(
      () => subscriber.complete(),
      (error: unknown) => {
        if (!abort.signal.aborted) subscriber.error(error);
      },
    );
    return () => abort.abort();
  });
}

/** Follows the daemon until the returned stop function is called. */
export function followDaemon(target: DaemonFeedTarget): () => void {
  // From the start of what sandboxd still holds: what it saw before this follower was up is not lost.
  // Broken, refused or ended, the stream is opened again after its last event until stopped.
  const subscription = resumableFeed(
    (after) => connection(target, after ?? 0),
    (event) => event.seq,
    { after: 0, follow: true, retries: Infinity, delayMs: 50, maxDelayMs: 2_000 },
  ).subscribe({ next: (event) => target.onEvent(event) });
  return () => subscription.unsubscribe();
}
