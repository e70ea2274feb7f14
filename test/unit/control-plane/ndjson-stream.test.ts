/**
 * The control plane's NDJSON streams cut off a reader that stops reading (records come at the pace
 * sandbox code sets; the control plane must not hold them), and keep a reader that reads.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { Subject } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_UNREAD_STREAM_BYTES, streamNdjson } from '../../../control-plane/ndjson-stream.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

async function serve(feed: Subject<unknown>): Promise<number> {
  server = createServer((_, res) => streamNdjson(res, feed));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('an NDJSON stream', () => {
  it('cuts off a reader that stops reading once the unread bytes pass the bound', async () => {
    const feed = new Subject<unknown>();
    const port = await serve(feed);
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
    await vi.waitFor(() => expect(feed.observed).toBe(true));
    socket.pause(); // reads nothing more
    const record = { path: 'a'.repeat(1000) };
    let sent = 0;
    while (feed.observed && sent < 50 * MAX_UNREAD_STREAM_BYTES) {
      feed.next(record);
      sent += 1000;
      if (sent % 100_000 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(feed.observed).toBe(false); // unsubscribed: nothing more is held for it
    expect(sent).toBeLessThan(10 * MAX_UNREAD_STREAM_BYTES);
    socket.destroy();
  });

  it('keeps a reader that reads, whatever it is sent in all', async () => {
    const feed = new Subject<unknown>();
    const port = await serve(feed);
    const res = await fetch(`http://127.0.0.1:${String(port)}/`);
    const reader = res.body?.getReader();
    let received = 0;
    const reading = (async (): Promise<void> => {
      for (;;) {
        const chunk = await reader?.read();
        if (chunk === undefined || chunk.done) return;
        received += (chunk.value as Uint8Array).length;
      }
    })();
    // Three times the bound in all, at a pace a reading client keeps up with.
    for (let i = 0; i < 3500; i++) {
      feed.next({ path: 'b'.repeat(1000), i });
      if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await vi.waitFor(() => expect(received).toBeGreaterThan(3 * MAX_UNREAD_STREAM_BYTES));
    expect(feed.observed).toBe(true);
    await reader?.cancel();
    await reading.catch(() => undefined); // the cancel ends the read loop
  });
});
