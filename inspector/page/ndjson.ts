/**
 * NDJSON streams read with fetch (EventSource cannot send `Authorization`), and followed across broken
 * connections: each line carries a cursor, and a reopened stream asks for what came after the last one.
 */
import { ApiError, type Api } from './api.js';

/** Reads `body` line by line until it ends; a line that is not JSON is skipped. */
export async function readLines(
  body: ReadableStream<Uint8Array>,
  onLine: (value: unknown) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  const flush = (text: string): void => {
    const line = text.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return;
    }
    onLine(value);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        flush(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
    }
    flush(pending + decoder.decode());
  } finally {
    reader.releaseLock();
  }
}

/** What `follow` needs to know about one stream. */
export interface FollowOptions<Line> {
  /** The path to open, after `cursor` (null: the stream's own start). */
  readonly path: (cursor: number | null) => string;
  /** The line, or null for a line to skip (a keepalive, a malformed line). */
  readonly parse: (value: unknown) => Line | null;
  /** The cursor a line carries, to reopen after it. */
  readonly cursorOf: (line: Line) => number | null;
  readonly onLine: (line: Line) => void;
  /** Connected or not, each time it changes. */
  readonly onConnection?: (connected: boolean) => void;
  /** True when a stream that ended is over for good (an execution that finished): no reopening. */
  readonly finished?: () => boolean;
  /** Gives up on an error that reopening cannot fix (403, 404). */
  readonly onFatal?: (error: ApiError) => void;
  /** Where to start: null for the stream's own start. */
  readonly after?: number | null;
}

/** A followed stream; `stop` ends it. */
export interface Followed {
  stop(): void;
}

const RETRY_MS = [500, 1000, 2000, 5000, 10_000];

/**
 * Follows an NDJSON stream: lines in order, the stream reopened from the last cursor after a break,
 * with a growing pause between attempts.
 */
export function follow<Line>(api: Api, options: FollowOptions<Line>): Followed {
  const controller = new AbortController();
  let cursor = options.after ?? null;
  let failures = 0;
  let connected = false;
  const setConnected = (value: boolean): void => {
    if (value === connected) return;
    connected = value;
    options.onConnection?.(value);
  };

  // A function, not the property: the loop's test would otherwise narrow it to false inside.
  const stopped = (): boolean => controller.signal.aborted;
  const run = async (): Promise<void> => {
    while (!stopped()) {
      try {
        const response = await api.request(options.path(cursor), { signal: controller.signal });
        if (response.body === null) throw new ApiError(response.status, 'no_body', 'the stream has no body');
        setConnected(true);
        let lines = 0;
        await readLines(response.body, (value) => {
          lines += 1;
          const line = options.parse(value);
          if (line === null) return;
          const next = options.cursorOf(line);
          if (next !== null) cursor = next;
          options.onLine(line);
        });
        if (options.finished?.() === true) break;
        // A stream that ends at once, again and again, is reopened less and less often.
        failures = lines > 0 ? 0 : failures + 1;
      } catch (error) {
        if (stopped()) break;
        if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) {
          setConnected(false);
          options.onFatal?.(error);
          return;
        }
        failures += 1;
      }
      setConnected(false);
      const pause = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)] ?? 10_000;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    setConnected(false);
  };
  void run();
  return {
    stop: () => {
      controller.abort();
    },
  };
}
