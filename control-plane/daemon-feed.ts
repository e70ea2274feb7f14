/**
 * Follows one sandboxd's event stream (`GET /v1/events`) with the control plane's credential for that
 * sandbox, from the start of what sandboxd holds, and opens it again after a break from its cursor, so the control plane sees what the
 * daemon saw and nothing has to poll. A frozen sandbox's stream simply goes quiet until it is thawed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { daemonEventSchema, type DaemonEvent } from '../protocol/daemon-events.js';
import { ndjsonValues } from '../protocol/ndjson.js';

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

/** Longest wait between two attempts to open the stream again. */
const MAX_BACKOFF_MS = 2_000;

/** Follows the daemon until the returned stop function is called. */
export function followDaemon(target: DaemonFeedTarget): () => void {
  const abort = new AbortController();
  const run = async (): Promise<void> => {
    // From the start of what sandboxd still holds: what it saw before this follower was up is not lost.
    let after = 0;
    for (let attempt = 0; !abort.signal.aborted; attempt++) {
      try {
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
          abort.signal.throwIfAborted();
          // Not an event, or one with a string past its bound (a sandboxd taken over): dropped.
          const parsed = daemonEventSchema.safeParse(value);
          if (!parsed.success) continue;
          after = parsed.data.seq;
          attempt = 0;
          target.onEvent(parsed.data);
        }
      } catch {
        // broken, refused or stopped: try again unless stopped
      }
      await sleep(Math.min(MAX_BACKOFF_MS, 50 * 2 ** attempt), undefined, { signal: abort.signal }).catch(
        () => undefined,
      );
    }
  };
  void run();
  return () => abort.abort();
}
