/**
 * One large streamed response: the rate the client reads it at, and the peak resident memory of the
 * process in the middle (sampled from /proc every 25 ms) over its resting size before the transfer.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

/** Resident set size of a process, in bytes. */
export function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
  return Number(match?.[1] ?? NaN) * 1024;
}

/** Result of one streamed transfer. */
export interface StreamResult {
  readonly megabytesPerSecond: number;
  /** Peak RSS growth of the process in the middle, in MB (undefined for a direct transfer). */
  readonly rssGrowthMb: number | undefined;
}

/** Reads `bytes` from `url` and measures the rate and the middle process's RSS growth. */
export async function streamThrough(
  url: string,
  bytes: number,
  middlePid: number | undefined,
  ca?: string,
): Promise<StreamResult> {
  const dispatcher = new Agent(ca === undefined ? {} : { connect: { ca } });
  const before = middlePid === undefined ? 0 : rssOf(middlePid);
  let peak = before;
  const sampler =
    middlePid === undefined ? undefined : setInterval(() => (peak = Math.max(peak, rssOf(middlePid))), 25);
  const started = performance.now();
  let received = 0;
  try {
    const res = await request(url, { dispatcher });
    for await (const chunk of res.body) received += (chunk as Buffer).length;
  } finally {
    if (sampler !== undefined) clearInterval(sampler);
    await dispatcher.close();
  }
  const seconds = (performance.now() - started) / 1_000;
  if (received !== bytes)
    throw new Error(`received ${String(received)} of ${String(bytes)} bytes from ${url}`);
  return {
    megabytesPerSecond: bytes / 1e6 / seconds,
    rssGrowthMb: middlePid === undefined ? undefined : (peak - before) / 1e6,
  };
}
