/**
 * E2B's `getMetrics` over the native `sbx.getMetrics()` (issue 28): E2B's `SandboxMetrics` shape (a
 * `Date` timestamp, bytes), its `start` / `end` as a `Date` or a date string. The native samples carry
 * network bytes too; E2B's shape has none, so they are left out (`sbx.native.getMetrics()` has them).
 */
import type { SandboxMetric } from '../../../protocol/control-plane-api.js';
import type { ConnectionOpts } from './connection.js';
import { invalidArgument } from './errors.js';

/** E2B's `SandboxMetrics`: one sample of the sandbox's use. */
export interface SandboxMetrics {
  readonly timestamp: Date;
  /** CPU time since the sample before, in percent of `cpuCount` CPUs. */
  readonly cpuUsedPct: number;
  /** The sandbox's CPU limit (may be a fraction here: `cpus: 0.5`). */
  readonly cpuCount: number;
  readonly memUsed: number;
  readonly memTotal: number;
  readonly diskUsed: number;
  readonly diskTotal: number;
}

/** E2B's `SandboxMetricsOpts`: the range of samples, both ends optional. */
export interface SandboxMetricsOpts extends ConnectionOpts {
  /** Samples taken at or after it; the sandbox's start by default. */
  readonly start?: string | Date;
  /** Samples taken at or before it; now by default. */
  readonly end?: string | Date;
}

/** `start` / `end` as ms since the epoch, checked before any call. */
export function metricsRange(
  call: string,
  opts: Pick<SandboxMetricsOpts, 'start' | 'end'> | undefined,
): { start?: number; end?: number } {
  const instant = (name: 'start' | 'end'): number | undefined => {
    const value = opts?.[name];
    if (value === undefined) return undefined;
    const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN;
    if (!Number.isFinite(ms) || ms < 0) {
      throw invalidArgument(`${call}: ${name} must be a Date or a date string`, name);
    }
    return ms;
  };
  const start = instant('start');
  const end = instant('end');
  if (start !== undefined && end !== undefined && start > end) {
    throw invalidArgument(`${call}: start must not be after end`, 'start');
  }
  return { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) };
}

/** A native sample in E2B's shape. */
export function e2bMetric(sample: SandboxMetric): SandboxMetrics {
  return {
    timestamp: new Date(sample.timestamp),
    cpuUsedPct: sample.cpuUsedPct,
    cpuCount: sample.cpuCount,
    memUsed: sample.memUsedBytes,
    memTotal: sample.memTotalBytes,
    diskUsed: sample.diskUsedBytes,
    diskTotal: sample.diskTotalBytes,
  };
}
