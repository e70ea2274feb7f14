/** Loopback helpers shared by test projects. */
import { connect, createServer } from 'node:net';

/** True when nothing accepts connections on `127.0.0.1:port` any more. */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/**
 * A free loopback port for a server a test starts later (or starts again on the same port). It comes
 * from below the kernel's ephemeral range (32768 and up), from a block of this vitest worker's own, so
 * no other process's `listen(0)` or outgoing connection, nor another test file running beside this
 * one, takes it between this call and the bind.
 */
export async function freePort(): Promise<number> {
  const block = 20_000 + (Number(process.env.VITEST_POOL_ID ?? 0) % 40) * 300;
  for (let tries = 0; tries < 300; tries++) {
    const port = block + (nextInBlock++ % 300);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port in ${String(block)}-${String(block + 299)}`);
}

let nextInBlock = 0;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
