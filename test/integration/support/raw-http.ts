/**
 * Raw HTTP/1.1 over a TCP socket to a gateway listener: what a client sends byte for byte, what comes
 * back, and whether the connection closed.
 */
import { connect, type Socket } from 'node:net';

/** A raw client connection to a loopback port. */
export class RawConnection {
  readonly #socket: Socket;
  #received = '';
  #closed = false;
  readonly #waiters = new Set<() => void>();

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => {
      this.#received += data;
      this.#wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.#closed = true;
      this.#wake();
    });
  }

  /** Opens a connection to `127.0.0.1:port`. */
  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Everything received so far. */
  get received(): string {
    return this.#received;
  }

  /** True once the peer closed the connection. */
  get closed(): boolean {
    return this.#closed;
  }

  write(text: string | Buffer): void {
    this.#socket.write(text);
  }

  destroy(): void {
    this.#socket.destroy();
  }

  /** Waits until `done` holds for the received text (or the close), failing after `timeoutMs`. */
  async until(done: (received: string, closed: boolean) => boolean, timeoutMs = 5_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.#received, this.#closed)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`timed out; received so far: ${JSON.stringify(this.#received.slice(0, 500))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.#received;
  }

  /** Waits for the close. */
  untilClosed(timeoutMs?: number): Promise<string> {
    return this.until((_, closed) => closed, timeoutMs);
  }

  #wake(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}
