/**
 * The control plane follows each live sandbox's daemon (DESIGN.md §5: events flow up, nothing polls),
 * one `followDaemon` per sandbox with its credential. What sandboxd saw (calls to its API,
 * requests through its gateway routes) is traffic for the idle policy, journaled at the time sandboxd
 * saw it; its actors' transitions (routes, the agent) join the inspection feed. A follower stops when its sandbox ends.
 */
import { TRAFFIC_EVENTS, type DaemonEvent } from '../protocol/daemon-events.js';
import { followDaemon } from './daemon-feed.js';
import { controlTokenFor } from './operator-key.js';
import type { LiveSandbox } from './sandbox-registry.js';

/** Traffic closer than this (or a quarter of the idle time) to the last activity is not journaled again. */
const TRAFFIC_RESOLUTION_MS = 1_000;

/** What the followers report to, and with what credential. */
export interface DaemonFollowersOptions {
  /** Derives each sandbox's credential for its daemon (event stream, agent reads, abort). */
  readonly controlKey: string;
  /**
   * True when the machines' time is the wall clock: only then do sandboxd's timestamps compare with it,
   * so only then are daemons followed.
   */
  readonly wallClock: boolean;
  /** Journals traffic sandboxd saw at `at`. */
  readonly onTraffic: (sandbox: LiveSandbox, at: number) => Promise<void>;
  /** Every event of a live sandbox's daemon, in order (transitions of the actors it hosts included). */
  readonly onEvent: (sandboxId: string, event: DaemonEvent) => void;
}

/**
 * One follower per live sandbox.
 *
 * @example
 * ```ts
 * const followers = new DaemonFollowers({ controlKey, wallClock: true, onTraffic, onEvent });
 * followers.follow(registry.adopt(id, input, facts));
 * ```
 */
export class DaemonFollowers {
  readonly #options: DaemonFollowersOptions;
  /** Sandbox id → stops following its daemon's event stream. */
  readonly #stops = new Map<string, () => void>();
  #closed = false;

  constructor(options: DaemonFollowersOptions) {
    this.#options = options;
  }

  /** Follows the sandbox's daemon until the sandbox ends (once per sandbox; none for an ended one). */
  follow(sandbox: LiveSandbox): void {
    const { id } = sandbox.actor;
    if (!this.#options.wallClock || this.#closed || sandbox.actor.state === 'ended' || this.#stops.has(id)) {
      return;
    }
    const stop = followDaemon({
      url: sandbox.facts.daemonUrl,
      token: controlTokenFor(this.#options.controlKey, id),
      onEvent: (event) => {
        if (TRAFFIC_EVENTS.has(event.type)) this.#noteTraffic(sandbox, event.at);
        this.#options.onEvent(id, event);
      },
    });
    // Stops with its sandbox's end, or with `close`, whichever comes first (and only once).
    const ended = sandbox.actor.state$.subscribe((state) => {
      if (state === 'ended') this.#stops.get(id)?.();
    });
    this.#stops.set(id, () => {
      stop();
      ended.unsubscribe();
      this.#stops.delete(id);
    });
  }

  /** Stops every follower for good. */
  close(): void {
    this.#closed = true;
    for (const stop of [...this.#stops.values()]) stop();
  }

  /** At most one `traffic` a second (or per quarter of the idle time, when shorter) per running sandbox. */
  #noteTraffic(sandbox: LiveSandbox, at: number): void {
    const { lastActivityAt, maxIdleMs } = sandbox.actor.snapshot.context;
    const resolution = Math.min(TRAFFIC_RESOLUTION_MS, maxIdleMs / 4);
    if (sandbox.actor.state !== 'running' || at < lastActivityAt + resolution) return;
    // A traffic record that cannot be journaled (the plane is closing) is dropped; the next one counts.
    this.#options.onTraffic(sandbox, at).catch(() => undefined);
  }
}
