/** Process helpers shared by test projects. */
import { readFileSync } from 'node:fs';

/** True while `pid` runs; a zombie waiting to be reaped counts as ended. */
export function isRunning(pid: number | string): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${String(pid)}/status`, 'utf8'));
  } catch {
    return false;
  }
}
