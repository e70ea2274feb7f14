/**
 * `sbx.getMetrics()` (issue 28): every running sandbox's use (CPU, memory, disk, network) read from its
 * driver every few seconds and kept in a bounded history for its whole life (`metric-history.ts`), and
 * for a while after it ended. Derived, never journaled: a restarted control plane starts new histories.
 */
import type { SandboxMetric } from '../protocol/control-plane-api.js';
import type { SandboxDriver, SandboxUsage } from '../sandbox-drivers/sandbox-driver.js';
import { settleInBatches } from './batches.js';
import { MetricHistory } from './metric-history.js';
import type { LiveSandbox } from './sandbox-registry.js';

/** How often a running sandbox is sampled by default (E2B samples every few seconds too). */
export const METRICS_INTERVAL_MS = 5_000;

/** Histories of ended sandboxes kept (the newest), as the inspector keeps their rows. */
const ENDED_HISTORIES = 50;

/** Driver reads at once (each is a few small file reads on the host). */
const SAMPLE_CONCURRENCY = 16;

/** A watched sandbox: its history and the reading its next CPU share is measured from. */
interface Watched {
  readonly sandbox: LiveSandbox;
  readonly history: MetricHistory;
  previous?: { readonly cpuUsec: number; readonly at: number };
  /** A read of its use is under way. */
  reading?: boolean;
}

/** Options of the sampler. */
export interface MetricsSamplerOptions {
  readonly driver: SandboxDriver;
  readonly now: () => number;
  /** Between two samples of a running sandbox, ms. */
  readonly intervalMs: number;
  /** Sample on a timer (false: only `sample()` samples, as the control plane's `tick()`). */
  readonly timers: boolean;
}

/**
 * Samples watched sandboxes while they run.
 *
 * @example
 * ```ts
 * const sampler = new MetricsSampler({ driver, now: Date.now, intervalMs: 5_000, timers: true });
 * sampler.watch(sandbox);
 * sampler.metrics(sandbox.actor.id); // oldest first
 * ```
 */
export class MetricsSampler {
  readonly #options: MetricsSamplerOptions;
  readonly #live = new Map<string, Watched>();
  readonly #ended = new Map<string, MetricHistory>();
  readonly #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | undefined;

  constructor(options: MetricsSamplerOptions) {
    this.#options = options;
    if (options.timers) {
      this.#timer = setInterval(() => void this.sample(), options.intervalMs);
      this.#timer.unref();
    }
  }

  /** Samples the sandbox from now to its end (its first sample at once, when it runs). */
  watch(sandbox: LiveSandbox): void {
    const { id } = sandbox.actor;
    if (this.#live.has(id)) return;
    const watched: Watched = { sandbox, history: new MetricHistory() };
    this.#live.set(id, watched);
    const subscription = sandbox.actor.state$.subscribe((state) => {
      if (state !== 'ended') return;
      this.#live.delete(id);
      this.#ended.delete(id);
      this.#ended.set(id, watched.history);
      for (const old of [...this.#ended.keys()].slice(0, Math.max(0, this.#ended.size - ENDED_HISTORIES))) {
        this.#ended.delete(old);
      }
      queueMicrotask(() => subscription.unsubscribe());
    });
    if (sandbox.actor.state === 'running') void this.#sampleOne(watched);
  }

  /** Samples every running sandbox once (a round already under way is joined, not repeated). */
  sample(): Promise<void> {
    this.#sampling ??= this.#sampleRunning().finally(() => {
      this.#sampling = undefined;
    });
    return this.#sampling;
  }

  /** A sandbox's samples in `[start, end]` (ms since the epoch), oldest first; none for one never seen. */
  metrics(
    id: string,
    range: { readonly start?: number | undefined; readonly end?: number | undefined } = {},
  ): SandboxMetric[] {
    return (this.#live.get(id)?.history ?? this.#ended.get(id))?.samples(range) ?? [];
  }

  /** Stops the timer. */
  close(): void {
    clearInterval(this.#timer);
  }

  async #sampleRunning(): Promise<void> {
    const running = [...this.#live.values()].filter((watched) => watched.sandbox.actor.state === 'running');
    let next = 0;
    await settleInBatches(running.length, SAMPLE_CONCURRENCY, async () => {
      const watched = running[next++];
      if (watched !== undefined) await this.#sampleOne(watched);
    });
  }

  async #sampleOne(watched: Watched): Promise<void> {
    if (watched.reading) return; // its first sample, still being read
    const { sandbox } = watched;
    watched.reading = true;
    const usage = await this.#options.driver
      .usage(sandbox.actor.id)
      .catch(() => undefined)
      .finally(() => {
        watched.reading = false;
      });
    // Gone meanwhile (ended, or destroyed under it), or paused while read: no sample.
    if (usage === undefined || sandbox.actor.state !== 'running') return;
    const at = this.#options.now();
    // The first sample has no share: the counter began with the launch, before the sandbox's creation
    // time, so no span of wall time is known for it.
    const previous = watched.previous ?? { cpuUsec: usage.cpuUsec, at };
    watched.previous = { cpuUsec: usage.cpuUsec, at };
    const spanMs = at - previous.at;
    const cpuCount = sandbox.facts.limits?.cpus ?? 1;
    watched.history.add(
      sampleOf(usage, at, cpuCount, cpuShare(usage.cpuUsec - previous.cpuUsec, spanMs, cpuCount)),
      spanMs,
    );
  }
}

/**
 * CPU time `cpuUsec` over `spanMs` of wall time, in percent of `cpus` CPUs (0 over no time), at most 100:
 * the sandbox's CPU quota bounds it, and a reading's own delay must not show as more.
 */
export function cpuShare(cpuUsec: number, spanMs: number, cpus: number): number {
  if (spanMs <= 0 || cpus <= 0 || cpuUsec <= 0) return 0;
  return Math.min(100, Math.round((cpuUsec / 1000 / spanMs / cpus) * 100 * 100) / 100);
}

function sampleOf(
  usage: SandboxUsage,
  timestamp: number,
  cpuCount: number,
  cpuUsedPct: number,
): SandboxMetric {
  return {
    timestamp,
    cpuCount,
    cpuUsedPct,
    memUsedBytes: usage.memoryUsedBytes,
    memTotalBytes: usage.memoryLimitBytes,
    diskUsedBytes: usage.diskUsedBytes,
    diskTotalBytes: usage.diskLimitBytes,
    netRxBytes: usage.netRxBytes,
    netTxBytes: usage.netTxBytes,
  };
}
