/**
 * A gVisor box's host processes as the host sees them: each one's `oom_score_adj`, read from /proc (its
 * stubs are `stubsOf` in `sandbox-drivers/gvisor/runsc-box.ts`).
 */
import { readFileSync } from 'node:fs';

/** Host process `pid`'s `oom_score_adj`. */
export function oomScoreAdj(pid: number | string): string {
  return readFileSync(`/proc/${String(pid)}/oom_score_adj`, 'utf8').trim();
}
