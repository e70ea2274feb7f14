/**
 * A gVisor box's host processes as the host sees them: its kernel's children (the systrap platform's
 * stubs, one per address space of sandbox code) and each process's `oom_score_adj`, read from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Host pids of the children of box kernel `kernel` (every thread's). */
export function stubsOf(kernel: number | string): string[] {
  return readdirSync(`/proc/${String(kernel)}/task`).flatMap((tid) =>
    readFileSync(`/proc/${String(kernel)}/task/${tid}/children`, 'utf8')
      .split(' ')
      .filter(Boolean),
  );
}

/** Host process `pid`'s `oom_score_adj`. */
export function oomScoreAdj(pid: number | string): string {
  return readFileSync(`/proc/${String(pid)}/oom_score_adj`, 'utf8').trim();
}
