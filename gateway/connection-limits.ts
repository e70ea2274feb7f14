/**
 * Bounds on the client connections a gateway host keeps, so sandbox code cannot grow sandboxd's memory
 * through its loopback listeners (issue 24: 40,000 half-open connections took sandboxd to 359 MiB). A
 * real client opens a handful of connections and sends its request head at once; these numbers are far
 * above that.
 */

/** The connection bounds of one gateway host. */
export interface ConnectionLimits {
  /** Open client connections per route; one more is closed as soon as it is accepted. */
  readonly perRoute: number;
  /** Open client connections over every route of the host (the sandbox), removed routes' included. */
  readonly perHost: number;
  /** A connection's request head must be complete this long after its first byte, or after it opened. */
  readonly requestHeadTimeoutMs: number;
  /** How often the listener looks for heads past their time-out (Node's `connectionsCheckingInterval`). */
  readonly checkIntervalMs: number;
  /**
   * Requests waiting on one connection behind the one in flight (Node parses every pipelined request it
   * reads, each up to 16 KiB of head); past it the connection is cut.
   */
  readonly pipelined: number;
  /** Requests waiting behind others over every connection of the host; past it a connection is cut. */
  readonly pipelinedPerHost: number;
}

/**
 * The bounds every gateway host uses unless a test asks otherwise (gateway/README.md, "Connections").
 * Each connection with an exchange in flight costs sandboxd about 150-190 KiB (its upstream TLS
 * connection most of it): 256 streaming exchanges took a sandbox's sandboxd from 68 to 115 MiB, inside
 * its 128 MiB bound (daemon/README.md, "Bounds"); 512 took it to 146 MiB.
 */
export const CONNECTION_LIMITS: ConnectionLimits = {
  perRoute: 128,
  perHost: 256,
  requestHeadTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  pipelined: 16,
  pipelinedPerHost: 256,
};

/** The failure class a route records when it refused a connection at a cap. */
export const CONNECTION_LIMIT_ERROR = 'ConnectionLimitError';

/** Open client connections of one host and the requests waiting on them, against the host's caps. */
export class ConnectionCount {
  #open = 0;
  #queued = 0;
  readonly #max: number;
  readonly #maxQueued: number;

  constructor(limits: Pick<ConnectionLimits, 'perHost' | 'pipelinedPerHost'>) {
    this.#max = limits.perHost;
    this.#maxQueued = limits.pipelinedPerHost;
  }

  /** Counts one more connection; false (nothing counted) when the host is at its cap. */
  take(): boolean {
    if (this.#open >= this.#max) return false;
    this.#open++;
    return true;
  }

  /** One counted connection closed. */
  release(): void {
    this.#open = Math.max(0, this.#open - 1);
  }

  /** Counts one more waiting request; false (nothing counted) when the host holds its cap. */
  takeQueued(): boolean {
    if (this.#queued >= this.#maxQueued) return false;
    this.#queued++;
    return true;
  }

  /** `count` waiting requests were served or dropped. */
  releaseQueued(count: number): void {
    this.#queued = Math.max(0, this.#queued - count);
  }

  /** Connections counted now. */
  get open(): number {
    return this.#open;
  }
}
