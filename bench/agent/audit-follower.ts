/**
 * sandboxd's own audit stream (`GET /v1/events`, daemon/daemon-server.ts) followed for the whole
 * benchmark: every call to sandboxd (its endpoint pattern) and every process start and end, each with
 * sandboxd's `Date.now()` (the host's clock: namespaces do not change it).
 */
import { Agent, request } from 'undici';
import { daemonEventSchema, type DaemonEvent } from '../../protocol/daemon-events.js';
import { ndjsonValues } from '../../protocol/ndjson.js';

/** The events seen so far, kept in order, and a way to wait for one. */
export class AuditFollower {
  readonly events: DaemonEvent[] = [];
  readonly #abort = new AbortController();
  readonly #dispatcher = new Agent({ bodyTimeout: 0 });
  #waiters: (() => void)[] = [];
  #failure: Error | undefined;

  private constructor() {}

  /** Follows the audit stream of the sandboxd at `daemonUrl` from its start. */
  static async open(daemonUrl: string, accessToken: string): Promise<AuditFollower> {
    const follower = new AuditFollower();
    const res = await request(`${daemonUrl}/v1/events?after=0`, {
      dispatcher: follower.#dispatcher,
      signal: follower.#abort.signal,
      headers: { authorization: `Bearer ${accessToken}` },
    });
    if (res.statusCode !== 200) throw new Error(`GET /v1/events answered ${String(res.statusCode)}`);
    void follower.#read(res.body);
    return follower;
  }

  /** The highest sequence number seen (0 before any). */
  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  /** The first event after `afterSeq` that `matches`, waiting up to `timeoutMs` for it. */
  async waitFor(
    afterSeq: number,
    matches: (event: DaemonEvent) => boolean,
    timeoutMs = 30_000,
  ): Promise<DaemonEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((event) => event.seq > afterSeq && matches(event));
      if (found !== undefined) return found;
      if (this.#failure !== undefined) throw this.#failure;
      if (Date.now() > deadline) throw new Error('the awaited audit event did not come');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.#abort.abort();
    void this.#dispatcher.close().catch(() => undefined);
  }

  async #read(body: AsyncIterable<unknown>): Promise<void> {
    try {
      for await (const value of ndjsonValues(body)) {
        this.events.push(daemonEventSchema.parse(value));
        const waiters = this.#waiters;
        this.#waiters = [];
        for (const wake of waiters) wake();
      }
    } catch (error) {
      if (!this.#abort.signal.aborted) {
        this.#failure = error instanceof Error ? error : new Error('the audit stream broke');
      }
    }
  }
}
