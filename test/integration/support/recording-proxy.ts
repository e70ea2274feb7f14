/**
 * A TCP proxy on loopback that records every byte it passes each way: put between a browser and the
 * control plane, it holds every HTTP response, stream frame and request the page exchanged, so a test
 * can assert that a value never crossed.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A running proxy. */
export interface RecordingProxy {
  /** `http://127.0.0.1:<port>`: open the page here. */
  readonly url: string;
  /** Everything sent to the browser so far. */
  received(): Buffer;
  /** Everything the browser sent so far. */
  sent(): Buffer;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`http://host:port`). */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const { hostname, port } = new URL(target);
  const toBrowser: Buffer[] = [];
  const fromBrowser: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      fromBrowser.push(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      toBrowser.push(chunk);
      client.write(chunk);
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    received: () => Buffer.concat(toBrowser),
    sent: () => Buffer.concat(fromBrowser),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
