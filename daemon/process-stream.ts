/**
 * A command's events to one client as NDJSON, at the client's pace: events are written from the
 * command's log while the socket takes them; when it is full the client holds the command's output back
 * (`ManagedProcess.hold`), so what sandboxd buffers for a client is one socket's worth, whatever the
 * output rate. A client that takes nothing for `stallMs` (`STALL_MS` by default) of running time is
 * cut off (it may attach again after the last event it read: `?after=<n>`, events numbered from 1 in
 * the order sent), and the command runs on.
 */
import type { ServerResponse } from 'node:http';
import type { ManagedProcess } from './managed-process.js';

/**
 * How long a full socket may stay full, counted in timer ticks of a running sandbox (a frozen one's
 * timers do not catch up, so a pause and resume cuts nobody).
 */
export const STALL_MS = 15_000;

/** Streams `proc`'s events after number `after` to `res` until the end event or the client goes. */
export function streamProcessEvents(
  res: ServerResponse,
  proc: ManagedProcess,
  after: number,
  keepaliveMs: number,
  stallMs = STALL_MS,
): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  let cursor = after;
  let full = false;
  let stalled = 0;
  const holder = {};
  /** The socket is full: the command waits for this client, whose stall is counted from now. */
  const filled = (): void => {
    full = true;
    stalled = 0;
    proc.hold(holder);
  };
  const pump = (): void => {
    if (full || res.destroyed) return;
    if (!proc.running && proc.after(cursor) === undefined) {
      res.end(); // the client had read to the end already
      return;
    }
    for (let entry = proc.after(cursor); entry !== undefined; entry = proc.after(cursor)) {
      cursor = entry.seq;
      const more = res.write(`${JSON.stringify({ ...entry.event, seq: entry.seq })}\n`);
      if (entry.event.type === 'end') {
        res.end();
        return;
      }
      if (!more) {
        filled();
        return;
      }
    }
  };
  res.on('drain', () => {
    full = false;
    proc.release(holder);
    pump();
  });
  const unwatch = proc.watch(pump);
  // One timer both keeps an idle stream alive and notices a client that stopped reading.
  // Ticks a fifth of the stall time apart (at most a second), so a socket full for a moment at a tick
  // is not cut: only one full for more than `stallMs`.
  const period = Math.min(1_000, keepaliveMs, Math.max(1, Math.floor(stallMs / 5)));
  let sinceKeepalive = 0;
  const tick = setInterval(() => {
    if (full) {
      stalled += period;
      if (stalled > stallMs) res.destroy();
      return;
    }
    sinceKeepalive += period;
    if (sinceKeepalive >= keepaliveMs && proc.running) {
      sinceKeepalive = 0;
      if (!res.write('{"type":"keepalive"}\n')) filled();
    }
  }, period);
  res.once('close', () => {
    clearInterval(tick);
    unwatch();
    proc.release(holder);
  });
  pump();
}
