/**
 * A connection of sandbox code handed on to the upstream sandboxd chose for it: sandboxd connects to
 * `address:port` itself (never to what sandbox code dialled), sends the first bytes it already read,
 * then splices both ways untouched and counts the bytes. Shared by the name checks and the proxy's
 * tunnels.
 */
import { connect, type Socket } from 'node:net';

/** How a splice ended: whether the upstream ever answered the connect, and the bytes both ways. */
export interface SpliceEnd {
  readonly connected: boolean;
  readonly bytes: number;
}

/**
 * Connects to `address:port`, writes `first`, then pipes `socket` (paused, its first bytes read) and the
 * upstream into each other; either side's end or failure ends both, and `ended` hears once.
 *
 * @param held - the set of sockets the caller closes at its own stop; the upstream joins it while open
 */
export function spliceTo(
  socket: Socket,
  target: { readonly address: string; readonly port: number },
  first: Buffer,
  held: Set<Socket>,
  ended: (end: SpliceEnd) => void,
): void {
  const upstream = connect({ host: target.address, port: target.port });
  held.add(upstream);
  let bytes = first.length;
  let connected = false;
  upstream.once('connect', () => {
    connected = true;
    upstream.write(first);
    socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
    upstream.on('data', (chunk: Buffer) => (bytes += chunk.length));
    socket.pipe(upstream);
    upstream.pipe(socket);
    socket.resume();
  });
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
  socket.once('close', () => upstream.destroy());
  upstream.once('close', () => {
    held.delete(upstream);
    socket.destroy();
    ended({ connected, bytes });
  });
}
