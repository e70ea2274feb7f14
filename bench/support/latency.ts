/**
 * Open-loop latency: requests are sent on a fixed schedule whatever the previous ones do, so a slow
 * answer cannot hold the next request back (no coordinated omission). Each latency runs from the send
 * to the end of the response body, measured with `process.hrtime`.
 */
import { Pool } from 'undici';

/** Percentiles in milliseconds. */
export interface LatencySummary {
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Sends `GET path` to `origin` at `ratePerSecond` for `seconds` (after `warmupSeconds` not counted).
 */
export async function openLoopLatency(
  origin: string,
  path: string,
  options: { ratePerSecond: number; seconds: number; warmupSeconds: number; ca?: string },
): Promise<LatencySummary> {
  const pool = new Pool(origin, {
    connections: 4,
    ...(options.ca === undefined ? {} : { connect: { ca: options.ca } }),
  });
  const interval = 1_000 / options.ratePerSecond;
  const total = Math.round((options.seconds + options.warmupSeconds) * options.ratePerSecond);
  const warmup = Math.round(options.warmupSeconds * options.ratePerSecond);
  const latencies: number[] = [];
  let errors = 0;
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = process.hrtime.bigint();
    inFlight.push(
      pool
        .request({ path, method: 'GET' })
        .then(async (res) => {
          await res.body.dump();
          if (res.statusCode !== 200) throw new Error(`status ${String(res.statusCode)}`);
          if (i >= warmup) latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(inFlight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    samples: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
  };
}
