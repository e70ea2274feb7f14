/**
 * Closed-loop throughput with wrk (Debian package `wrk`): one thread, a fixed number of keep-alive
 * connections, requests per second as wrk reports them.
 */
import { execFileSync } from 'node:child_process';

/** Requests per second at `connections` concurrent connections for `seconds`. */
export function wrkThroughput(url: string, connections: number, seconds: number): number {
  const out = execFileSync('wrk', ['-t1', `-c${String(connections)}`, `-d${String(seconds)}s`, url], {
    encoding: 'utf8',
  });
  const match = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  if (match?.[1] === undefined) throw new Error(`wrk printed no rate:\n${out}`);
  if (non2xx !== null) throw new Error(`wrk saw ${non2xx[1] ?? '?'} failed responses against ${url}`);
  return Number(match[1]);
}
