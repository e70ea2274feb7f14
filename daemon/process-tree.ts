/**
 * Whole-tree kill (DESIGN.md §7, after cloudflare sandbox-sdk): snapshot the tree under a root pid,
 * SIGTERM it, wait, walk again, and SIGKILL the union. Only the root and processes that descend from it
 * are ever signalled, and a pid is signalled only while it still names the same process (its start time
 * is compared), so a pid reused by another process is left alone. The processes are those of a
 * `ProcessSpace`: sandboxd's own kernel's by default, a gVisor box's when sandbox code runs there.
 *
 * A snapshot alone misses a child forked between the walk and the signal: its parent dies of the
 * SIGTERM, the child is orphaned, no walk finds it again, and it keeps the command's output pipe open
 * (`wait()` never returns). So a root that leads its own process group (commands start with `setsid`)
 * also has the group signalled: the kernel delivers a group signal to a child still being forked too.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { hostProcesses, type ProcessInfo, type ProcessSpace } from './process-space.js';

/** The processes that descend from `root` in `processes` (not `root` itself), with their start times. */
export function descendantsIn(processes: readonly ProcessInfo[], root: number): Map<number, string> {
  const children = new Map<number, ProcessInfo[]>();
  for (const entry of processes) {
    const list = children.get(entry.parent) ?? [];
    list.push(entry);
    children.set(entry.parent, list);
  }
  const found = new Map<number, string>();
  const stack = [root];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() ?? -1) ?? []) {
      if (found.has(child.pid)) continue;
      found.set(child.pid, child.start);
      stack.push(child.pid);
    }
  }
  return found;
}

/** The processes that descend from `root` now (not `root` itself), with their start times. */
export async function descendantsOf(
  root: number,
  space: ProcessSpace = hostProcesses,
): Promise<Map<number, string>> {
  return descendantsIn(await space.list(), root);
}

/** The processes of `processes` that still run as the same process, by pid. */
function stillRunning(now: readonly ProcessInfo[], processes: Map<number, string>): Map<number, ProcessInfo> {
  const running = new Map<number, ProcessInfo>();
  for (const entry of now) if (processes.get(entry.pid) === entry.start) running.set(entry.pid, entry);
  return running;
}

/**
 * Signals `processes`, and first the process group `group` leads when given. The group is signalled
 * only while one of `processes` is still in it: a group id stays taken while it has a member, so the
 * signal cannot reach a group that reused the number.
 */
async function signal(
  space: ProcessSpace,
  processes: Map<number, string>,
  name: NodeJS.Signals,
  group?: number,
): Promise<void> {
  const running = stillRunning(await space.lookup([...processes.keys()]), processes);
  if (group !== undefined && [...running.values()].some((entry) => entry.group === group)) {
    await space.signalGroup(group, name);
  }
  await Promise.all([...running.keys()].map((pid) => space.signal(pid, name)));
}

/**
 * Ends `root` and everything under it: SIGTERM to the snapshot, up to `graceMs` for them to go, then
 * SIGKILL to the snapshot and to whatever descends from it by then.
 */
export async function killTree(
  root: number,
  graceMs = 2_000,
  space: ProcessSpace = hostProcesses,
): Promise<void> {
  const processes = await space.list();
  const rootEntry = processes.find((entry) => entry.pid === root);
  if (rootEntry === undefined) return;
  const group = rootEntry.group === root ? root : undefined;
  const snapshot = new Map([[root, rootEntry.start], ...descendantsIn(processes, root)]);
  await signal(space, snapshot, 'SIGTERM', group);
  const deadline = Date.now() + graceMs;
  const anyLeft = async (): Promise<boolean> =>
    stillRunning(await space.lookup([...snapshot.keys()]), snapshot).size > 0;
  while (Date.now() < deadline && (await anyLeft())) await sleep(20);
  const now = await space.list();
  const union = new Map(snapshot);
  for (const pid of stillRunning(now, snapshot).keys()) {
    for (const [child, start] of descendantsIn(now, pid)) union.set(child, start);
  }
  await signal(space, union, 'SIGKILL', group);
}
