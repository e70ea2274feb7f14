/**
 * Where sandboxd sees and signals the processes of sandbox code. Beside a namespace sandbox (and on a
 * host) they are processes of sandboxd's own kernel, in /proc; beside a gVisor box they live in gVisor's
 * kernel, which sandboxd asks through runsc's control socket (`gvisor-processes.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** A process as its kernel shows it. */
export interface ProcessInfo {
  readonly pid: number;
  readonly parent: number;
  /** Its process group. */
  readonly group: number;
  /** With the pid, names one process (a pid may be reused): its start time. */
  readonly start: string;
}

/** The processes of one kernel, as sandboxd reaches them. */
export interface ProcessSpace {
  /** Every running process now (zombies left out: they have ended). */
  list(): Promise<ProcessInfo[]>;
  /** Those of `pids` that run now (cheaper than `list` where a kernel can look one up). */
  lookup(pids: readonly number[]): Promise<ProcessInfo[]>;
  /** Signals one process; one that has ended meanwhile is skipped. */
  signal(pid: number, signal: NodeJS.Signals): Promise<void>;
  /**
   * Signals process group `group` as a whole (a child being forked too, where the kernel allows it);
   * the caller has checked that the group still holds one of its processes.
   */
  signalGroup(group: number, signal: NodeJS.Signals): Promise<void>;
}

function readStat(pid: number): ProcessInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'latin1');
    // The command name may hold spaces or parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    return { pid, parent: Number(fields[1]), group: Number(fields[2]), start: fields[19] ?? '' };
  } catch {
    return undefined; // the process ended while we looked
  }
}

function kill(target: number, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(target, signal);
  } catch {
    // ended meanwhile
  }
  return Promise.resolve();
}

/** Every running process of sandboxd's own kernel now, from /proc. */
export function listHostProcesses(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== undefined) found.push(stat);
  }
  return found;
}

/** sandboxd's own kernel: /proc and kill(2). */
export const hostProcesses: ProcessSpace = {
  list: () => Promise.resolve(listHostProcesses()),
  lookup: (pids) => Promise.resolve(pids.flatMap((pid) => readStat(pid) ?? [])),
  signal: kill,
  signalGroup: (group, signal) => kill(-group, signal),
};
