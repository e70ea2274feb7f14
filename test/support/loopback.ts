/** Loopback helpers shared by test projects. */
import { connect } from 'node:net';

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
