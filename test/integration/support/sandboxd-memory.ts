/**
 * sandboxd's resident memory as the kernel counts it for its process: the peak since the last reset
 * (VmHWM), to check against its stated bound (`SANDBOXD_MEMORY_BOUND`, daemon/README.md "Bounds").
 */
import { readFileSync, writeFileSync } from 'node:fs';

export { SANDBOXD_MEMORY_BOUND } from '../../../protocol/sandboxd-node.js';

/** Peak resident memory of process `pid` since it started or `resetPeak`, in bytes. */
export function peakBytes(pid: number | string): number {
  const status = readFileSync(`/proc/${String(pid)}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) * 1024;
}

/** Starts `pid`'s peak again from its resident memory now. */
export function resetPeak(pid: number | string): void {
  writeFileSync(`/proc/${String(pid)}/clear_refs`, '5');
}
