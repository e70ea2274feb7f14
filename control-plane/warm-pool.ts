/**
 * A warm pool: sandboxes launched ahead of demand for the common launch specs, so `create` only has to
 * hand one over. A pooled sandbox is journaled as launching only; if the control plane stops before
 * handing it over, the next start destroys it like any launch cut short. Its access token stays in this
 * process's memory until it is handed to the creator.
 */
import type { Isolation } from '../sandbox-drivers/sandbox-driver.js';

/** What a launch needs beside the id and the token. */
export interface LaunchSpec {
  readonly isolation: Isolation;
  readonly template: string;
  readonly allowInternetAccess: boolean;
  readonly memoryMb: number;
  readonly maxPids: number;
  readonly cpus: number;
}

/** A launched sandbox not yet created for anyone. */
export interface LaunchedSandboxd {
  readonly id: string;
  readonly accessToken: string;
  readonly daemonUrl: string;
}

const keyOf = (spec: LaunchSpec): string =>
  `${spec.isolation}|${spec.template}|${String(spec.allowInternetAccess)}|${String(spec.memoryMb)}|${String(spec.maxPids)}|${String(spec.cpus)}`;

/** Keeps `size` launched sandboxes ready for each of `specs`. */
export class WarmPool {
  readonly #ready = new Map<string, LaunchedSandboxd[]>();
  readonly #filling = new Map<string, number>();
  #stopped = false;

  constructor(
    readonly size: number,
    readonly specs: readonly LaunchSpec[],
    private readonly launch: (spec: LaunchSpec) => Promise<LaunchedSandboxd>,
  ) {}

  /** Starts launching up to `size` sandboxes per spec, in the background. */
  fill(): void {
    for (const spec of this.specs) this.#top(spec);
  }

  /** A ready sandbox for `spec`, or undefined; the pool refills behind it. */
  take(spec: LaunchSpec): LaunchedSandboxd | undefined {
    const taken = this.#ready.get(keyOf(spec))?.shift();
    if (this.specs.some((s) => keyOf(s) === keyOf(spec))) this.#top(spec);
    return taken;
  }

  /** Drops a ready sandbox that died before it was handed over; true when it was in the pool. */
  discard(id: string): boolean {
    for (const list of this.#ready.values()) {
      const at = list.findIndex((launched) => launched.id === id);
      if (at >= 0) {
        list.splice(at, 1);
        return true;
      }
    }
    return false;
  }

  /** Sandboxes ready to hand over, over every spec. */
  get readyCount(): number {
    return [...this.#ready.values()].reduce((sum, list) => sum + list.length, 0);
  }

  /** Stops refilling. Sandboxes still in the pool are left for the next start to destroy. */
  stop(): void {
    this.#stopped = true;
  }

  #top(spec: LaunchSpec): void {
    const key = keyOf(spec);
    const ready = this.#ready.get(key) ?? [];
    this.#ready.set(key, ready);
    while (!this.#stopped && ready.length + (this.#filling.get(key) ?? 0) < this.size) {
      this.#filling.set(key, (this.#filling.get(key) ?? 0) + 1);
      this.launch(spec)
        .then(
          (launched) => ready.push(launched),
          () => undefined, // a failed warm launch is simply not in the pool; the next take retries
        )
        .finally(() => this.#filling.set(key, (this.#filling.get(key) ?? 1) - 1));
    }
  }
}
