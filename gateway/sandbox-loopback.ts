/**
 * Where a route's listener is reachable from sandbox code. Beside a namespace sandbox sandboxd shares the
 * sandbox's network namespace, so a listener on `127.0.0.1` is on the sandbox's loopback. A gVisor box
 * has a loopback of its own, in gVisor's network stack: sandboxd listens on its side of the link to the
 * box, and the box's relay (sandbox-drivers/gvisor/) listens on the box's `127.0.0.1` at the same port
 * and carries each connection over. Either way the route's URL is `http://127.0.0.1:<port>`.
 */

/** A loopback other than sandboxd's own (a gVisor box's). */
export interface SandboxLoopback {
  /** The address sandboxd's listeners bind, which the relay reaches. */
  readonly address: string;
  /**
   * Listens on the sandbox's `127.0.0.1:port` and carries every connection to `address:port`.
   *
   * @throws Error with `code` `EADDRINUSE` when sandbox code holds that port already
   */
  open(port: number): Promise<void>;
  /** Stops listening on the sandbox's `127.0.0.1:port` (connections open keep going). */
  close(port: number): void;
}
