/**
 * A sandbox's metric samples for its whole life in bounded memory (issue 28, `sbx.getMetrics()`): when
 * the history is full, each pair of neighbouring samples becomes one, so it keeps covering the life from
 * its first sample at half the resolution. A merged sample is the later one (gauges and counters as they
 * were then) with the CPU share of both, weighted by the time each covered.
 */
import type { SandboxMetric } from '../protocol/control-plane-api.js';

/** Samples a history holds at most: 30 minutes at the default interval, then coarser. */
export const METRIC_HISTORY_CAPACITY = 360;

/** A sample and the time it covers (its CPU share is over that span). */
interface Entry {
  readonly sample: SandboxMetric;
  readonly spanMs: number;
}

/** The samples of one sandbox, oldest first. */
export class MetricHistory {
  readonly #capacity: number;
  #entries: Entry[] = [];

  constructor(capacity = METRIC_HISTORY_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError('capacity: an integer ≥ 2');
    this.#capacity = capacity;
  }

  /** Adds a sample whose CPU share covers the `spanMs` before its timestamp. */
  add(sample: SandboxMetric, spanMs: number): void {
    if (this.#entries.length === this.#capacity) this.#entries = halve(this.#entries);
    this.#entries.push({ sample, spanMs: Math.max(0, spanMs) });
  }

  /** The latest sample, if any. */
  get latest(): SandboxMetric | undefined {
    return this.#entries.at(-1)?.sample;
  }

  /** Samples whose timestamps lie in `[start, end]` (either bound open when absent), oldest first. */
  samples(
    range: { readonly start?: number | undefined; readonly end?: number | undefined } = {},
  ): SandboxMetric[] {
    const start = range.start ?? -Infinity;
    const end = range.end ?? Infinity;
    return this.#entries
      .map((entry) => entry.sample)
      .filter((sample) => sample.timestamp >= start && sample.timestamp <= end);
  }
}

/** Neighbouring pairs merged into one entry each (an odd last entry kept as it is). */
function halve(entries: readonly Entry[]): Entry[] {
  const merged: Entry[] = [];
  for (let index = 0; index < entries.length; index += 2) {
    const earlier = entries[index];
    const later = entries[index + 1];
    if (earlier === undefined) break;
    merged.push(later === undefined ? earlier : merge(earlier, later));
  }
  return merged;
}

function merge(earlier: Entry, later: Entry): Entry {
  const spanMs = earlier.spanMs + later.spanMs;
  const cpuUsedPct =
    spanMs === 0
      ? later.sample.cpuUsedPct
      : (earlier.sample.cpuUsedPct * earlier.spanMs + later.sample.cpuUsedPct * later.spanMs) / spanMs;
  return { sample: { ...later.sample, cpuUsedPct }, spanMs };
}
