/** The control plane's NDJSON streams (`/v1/events`, `/v1/inspect`, a sandbox's records). */
import type { ServerResponse } from 'node:http';
import type { Observable } from 'rxjs';

/**
 * Unread bytes a stream's reader may leave behind before it is cut off: records come at the pace
 * sandbox code sets, and a reader that stops reading must not make the control plane hold them. A cut
 * reader comes back with its cursor.
 */
export const MAX_UNREAD_STREAM_BYTES = 1024 * 1024;

/** Writes records as NDJSON until the stream ends, the client goes away or stops reading. */
export function streamNdjson(res: ServerResponse, events: Observable<unknown>): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.flushHeaders(); // a live-only feed may have nothing to write for a while
  const subscription = events.subscribe({
    next: (event) => {
      if (res.writableLength > MAX_UNREAD_STREAM_BYTES) {
        res.destroy();
        return;
      }
      res.write(`${JSON.stringify(event)}\n`);
    },
    complete: () => res.end(),
    error: () => res.destroy(),
  });
  res.once('close', () => subscription.unsubscribe());
}
