/**
 * A loopback TCP proxy that cuts the first connection whose request line holds `marker` right after
 * the first event carrying a `"seq"`: a reader of an event stream through it must open a second
 * connection and go on after the last event it read.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

/** A running cut proxy. */
export interface CutProxy {
  /** `http://127.0.0.1:<port>`, forwarding to the target. */
  readonly url: string;
  /** Connections whose request line held the marker, so far. */
  streams(): number;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`http://host:port`). */
export async function startCutProxy(target: string, marker: string): Promise<CutProxy> {
  const { hostname, port } = new URL(target);
  let streams = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => sockets.delete(socket));
    }
    let cut: boolean | undefined;
    client.on('data', (chunk: Buffer) => {
      if (cut === undefined) {
        cut = chunk.toString('latin1').split('\r\n', 1)[0]?.includes(marker) === true && ++streams === 1;
      }
      upstream.write(chunk);
    });
    let severed = false;
    upstream.on('data', (chunk: Buffer) => {
      if (severed) return;
      const marked = cut === true ? chunk.indexOf('"seq"') : -1;
      if (marked < 0) {
        client.write(chunk);
        return;
      }
      // The first event goes through, whole, and the connection breaks right after it: never later, or
      // a short stream could reach its end in the same read and never be cut.
      severed = true;
      const lineEnd = chunk.indexOf('\n', marked);
      client.end(lineEnd < 0 ? chunk : chunk.subarray(0, lineEnd + 1), () => {
        client.destroy();
        upstream.destroy();
      });
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const proxyPort = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${String(proxyPort)}`,
    streams: () => streams,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
