/**
 * Whole-tree kill (DESIGN.md §7, after cloudflare sandbox-sdk): snapshot the tree under a root pid from
 * /proc, SIGTERM it, wait, walk again, and SIGKILL the union. Only the root and processes that descend
 * from it are ever signalled, and a pid is signalled only while it still names the same process (its
 * start time is compared), so a pid reused by another process is left alone.
 *
 * A snapshot alone misses a child forked between the walk and the signal: its parent dies of the
 * SIGTERM, the child is orphaned, no walk finds it again, and it keeps the command's output pipe open
 * (`wait()` never returns). So a root that leads its own process group (commands start with `setsid`)
 * also has the group signalled: the kernel delivers a group signal to a child still being forked too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A process as /proc/<pid>/stat shows it. */
interface ProcStat {
  readonly parent: number;
  /** True for a zombie: it has ended and only waits to be reaped. */
  readonly ended: boolean;
  /** Start time in clock ticks after boot: with the pid, it names one process. */
  readonly start: string;
  /** Its process group. */
  readonly group: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'latin1');
    // The command name may hold spaces or parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      parent: Number(fields[1]),
      group: Number(fields[2]),
      ended: fields[0] === 'Z',
      start: fields[19] ?? '',
    };
  } catch {
    return undefined; // the process ended while we looked
  }
}

/** The processes that descend from `root` now (not `root` itself), with their start times. */
export function descendantsOf(root: number): Map<number, string> {
  const children = new Map<number, [number, string][]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat === undefined) continue;
    const list = children.get(stat.parent) ?? [];
    list.push([Number(entry), stat.start]);
    children.set(stat.parent, list);
  }
  const found = new Map<number, string>();
  const stack = [root];
  while (stack.length > 0) {
    for (const [pid, start] of children.get(stack.pop() ?? -1) ?? []) {
      found.set(pid, start);
      stack.push(pid);
    }
  }
  return found;
}

/** True while `pid` still names the running process that started at `start`. */
function same(pid: number, start: string): boolean {
  const stat = readStat(pid);
  return stat !== undefined && !stat.ended && stat.start === start;
}

/**
 * Signals `processes`, and first the process group `group` leads when given. The group is signalled
 * only while one of `processes` is still in it: a group id stays taken while it has a member, so the
 * signal cannot reach a group that reused the number.
 */
function signal(processes: Map<number, string>, name: NodeJS.Signals, group?: number): void {
  const groupAlive = [...processes].some(
    ([pid, start]) => readStat(pid)?.group === group && same(pid, start),
  );
  if (group !== undefined && groupAlive) {
    try {
      process.kill(-group, name);
    } catch {
      // the group ended meanwhile
    }
  }
  for (const [pid, start] of processes) {
    if (!same(pid, start)) continue;
    try {
      process.kill(pid, name);
    } catch {
      // already gone
    }
  }
}

/**
 * Ends `root` and everything under it: SIGTERM to the snapshot, up to `graceMs` for them to go, then
 * SIGKILL to the snapshot and to whatever descends from it by then.
 */
export async function killTree(root: number, graceMs = 2_000): Promise<void> {
  const rootStat = readStat(root);
  if (rootStat === undefined) return;
  const group = rootStat.group === root ? root : undefined;
  const snapshot = new Map([[root, rootStat.start], ...descendantsOf(root)]);
  signal(snapshot, 'SIGTERM', group);
  const deadline = Date.now() + graceMs;
  const anyLeft = (): boolean => [...snapshot].some(([pid, start]) => same(pid, start));
  while (Date.now() < deadline && anyLeft()) await sleep(20);
  const union = new Map(snapshot);
  for (const [pid, start] of snapshot) {
    if (same(pid, start)) for (const [child, childStart] of descendantsOf(pid)) union.set(child, childStart);
  }
  signal(union, 'SIGKILL', group);
}
