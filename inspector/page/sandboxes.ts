/**
 * The sandbox table's data (`GET /v1/inspector/sandboxes`), read again on every sandbox transition of
 * the inspection feed (debounced) and every two seconds (memory use has no event), with the offset
 * between the control plane's clock and the page's so countdowns tick locally.
 */
import type { InspectorSandbox, InspectorSandboxes } from '../../protocol/inspector-api.js';
import type { Api } from './api.js';
import type { InspectionFeed } from './feed.js';

/** What subscribers get: the rows and the control plane's time now. */
export interface SandboxesSnapshot {
  readonly sandboxes: readonly InspectorSandbox[];
  /** The control plane's clock now (the page's clock corrected by the offset seen at the last read). */
  readonly now: () => number;
}

const POLL_MS = 2000;
const DEBOUNCE_MS = 100;

/** Reads the table while anyone listens. */
export class SandboxesSource {
  readonly #api: Api;
  readonly #feed: InspectionFeed;
  readonly #listeners = new Set<(snapshot: SandboxesSnapshot) => void>();
  readonly #errorListeners = new Set<(error: unknown) => void>();
  #offset = 0;
  #latest: SandboxesSnapshot | null = null;
  #poll: ReturnType<typeof setInterval> | undefined;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  #unsubscribeFeed: (() => void) | null = null;
  #inFlight = false;
  #again = false;

  constructor(api: Api, feed: InspectionFeed) {
    this.#api = api;
    this.#feed = feed;
  }

  /** The control plane's clock now, as best the page knows it. */
  readonly now = (): number => Date.now() - this.#offset;

  /** The last rows read, if any. */
  get latest(): SandboxesSnapshot | null {
    return this.#latest;
  }

  /** Calls `listener` with every read (at once with the last one); returns the unsubscribe. */
  subscribe(listener: (snapshot: SandboxesSnapshot) => void, onError?: (error: unknown) => void): () => void {
    this.#listeners.add(listener);
    if (onError !== undefined) this.#errorListeners.add(onError);
    if (this.#latest !== null) listener(this.#latest);
    if (this.#listeners.size === 1) this.#start();
    return () => {
      this.#listeners.delete(listener);
      if (onError !== undefined) this.#errorListeners.delete(onError);
      if (this.#listeners.size === 0) this.#stop();
    };
  }

  /** Reads again soon (after an operator action, a transition). */
  refresh(): void {
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => void this.#read(), DEBOUNCE_MS);
  }

  #start(): void {
    void this.#read();
    this.#poll = setInterval(() => void this.#read(), POLL_MS);
    // Every kind: a sandbox's state, but also its routes and agent execution, are columns.
    this.#unsubscribeFeed = this.#feed.subscribe(() => {
      this.refresh();
    });
  }

  #stop(): void {
    clearInterval(this.#poll);
    clearTimeout(this.#debounce);
    this.#unsubscribeFeed?.();
    this.#unsubscribeFeed = null;
  }

  async #read(): Promise<void> {
    if (this.#inFlight) {
      this.#again = true;
      return;
    }
    this.#inFlight = true;
    try {
      const table = await this.#api.json<InspectorSandboxes>('/v1/inspector/sandboxes');
      this.#offset = Date.now() - table.now;
      this.#latest = { sandboxes: table.sandboxes, now: this.now };
      for (const listener of this.#listeners) listener(this.#latest);
    } catch (error) {
      for (const listener of this.#errorListeners) listener(error);
    } finally {
      this.#inFlight = false;
      if (this.#again) {
        this.#again = false;
        this.refresh();
      }
    }
  }
}
