/**
 * sandboxd's long-lived NDJSON answers other than a command's (`process-stream.ts`): its record feed and
 * an agent execution's lines. Each kind has a quota of open streams, and a reader that leaves more than
 * `MAX_UNREAD_BYTES` unread is cut off (it attaches again after its cursor, `?after=`), so no reader
 * grows sandboxd's memory beyond quota × (`MAX_UNREAD_BYTES` + one line).
 */
import type { ServerResponse } from 'node:http';
import type { Observable } from 'rxjs';
import type { SequencedLog } from '../actors/sequenced-log.js';
import type { AgentWireLine } from '../protocol/agent-wire.js';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import { RequestError } from './request-error.js';

/** A reader that falls this far behind is cut off (it may attach again from its cursor). */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/** How many streams of one kind may be open at once; more are refused before anything starts. */
export class StreamQuota {
  #open = 0;

  constructor(
    readonly limit: number,
    readonly what: string,
  ) {}

  /**
   * Takes a place for the answer `res`, given back when it closes.
   *
   * @throws RequestError (`sandbox_error`) when all are taken
   */
  take(res: ServerResponse): void {
    this.check();
    this.#open += 1;
    res.once('close', () => (this.#open -= 1));
  }

  /** @throws RequestError (`sandbox_error`) when all places are taken now */
  check(): void {
    if (this.#open >= this.limit) {
      throw new RequestError('sandbox_error', `too many ${this.what} are open on this sandbox`);
    }
  }
}

/** Writes `text`, or cuts the reader off when it has left too much unread. */
function writeOrCut(res: ServerResponse, text: string): void {
  if (res.writableLength > MAX_UNREAD_BYTES) res.destroy();
  else res.write(text);
}

/** Writes the daemon's records as NDJSON, after `after` when given, until the client goes away. */
export function streamAudit(
  res: ServerResponse,
  audit: SequencedLog<DaemonRecord>,
  after: number | undefined,
): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.flushHeaders(); // the follower learns at once that it is connected
  const subscription = audit.stream({ after }).subscribe({
    next: (event) => writeOrCut(res, `${JSON.stringify(event)}\n`),
    complete: () => res.end(),
  });
  res.once('close', () => subscription.unsubscribe());
}

/** Writes an agent execution's lines as NDJSON with keepalives, until its final event or the client goes. */
export function streamLines(
  res: ServerResponse,
  lines: Observable<AgentWireLine>,
  keepaliveMs: number,
): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.flushHeaders();
  const keepalive = setInterval(() => writeOrCut(res, '{"keepalive":true}\n'), keepaliveMs);
  const subscription = lines.subscribe({
    next: (line) => writeOrCut(res, `${JSON.stringify(line)}\n`),
    complete: () => {
      clearInterval(keepalive);
      res.end();
    },
  });
  res.once('close', () => {
    clearInterval(keepalive);
    subscription.unsubscribe();
  });
}
