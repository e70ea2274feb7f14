/**
 * Hears of sandboxd's death whatever else of the sandbox still runs (the sandbox's cgroup empties only
 * when sandbox code has ended too: a `sleep 600` left running would keep a dead sandboxd's sandbox
 * `running`).
 *
 * - The driver that launched the sandbox hears it at once: the launch chain's first process (its child,
 *   `sandboxd-process.ts`) waits for the pid 1 of sandboxd's pid namespace, which ends as soon as
 *   sandboxd (its pid 2) does.
 * - A driver that adopted the sandbox after a restart is no longer that process's parent: it finds
 *   sandboxd's host pid (pid 2 of sandboxd's pid namespace, in the sandbox's own cgroup) and looks at it
 *   every `SANDBOXD_POLL_MS`, by pid and start time (a pid may be reused).
 *   The launching driver looks too: a sandboxd killed while its sandbox is frozen is seen only so.
 *
 * Nothing here signals a process; the driver kills through the sandbox's cgroup.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroupPaths } from './sandbox-cgroups.js';

/** How often a watched sandboxd is looked at (the launching driver hears its death sooner). */
export const SANDBOXD_POLL_MS = 500;

/** A process: its host pid and start time (clock ticks since boot). */
export interface ProcessIdentity {
  readonly pid: string;
  readonly start: number;
}

/** The start time of host pid `pid`, or undefined when it is gone or a zombie (ended, not yet reaped). */
export async function startOf(pid: string): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return undefined;
  // After the command name (in parentheses, which may hold anything): state, ppid, … starttime (22nd).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' || fields[0] === 'X' ? undefined : Number(fields[19]);
}

/** `pid`'s ids in its pid namespaces, host first (the `NSpid` line of its status). */
async function namespacePids(pid: string): Promise<string[] | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  return /^NSpid:\s+(.*)$/m
    .exec(status ?? '')?.[1]
    ?.trim()
    .split(/\s+/);
}

/**
 * sandboxd of a running sandbox: pid 2 of its own pid namespace, one level below the host's, among the
 * processes of the sandbox's own cgroup (sandbox code lives in its `user` child). That namespace lives
 * exactly as long as sandboxd: its pid 1 (`sdk-exec daemon`) ends when sandboxd does, and the kernel then
 * ends every process of the namespace, so its pid 2 is never a later process's. Undefined when sandboxd
 * is gone.
 */
export async function findSandboxd(instance: string, id: string): Promise<ProcessIdentity | undefined> {
  const procs = await readFile(join(cgroupPaths(instance, id).memory, 'cgroup.procs'), 'utf8').catch(
    () => '',
  );
  for (const pid of procs.split('\n').filter((line) => line !== '')) {
    const ids = await namespacePids(pid);
    if (ids?.length !== 2 || ids[1] !== '2') continue;
    const start = await startOf(pid);
    if (start !== undefined) return { pid, start };
  }
  return undefined;
}

/**
 * Calls `onDead` once when the process `found` names has ended: looked at every `SANDBOXD_POLL_MS` by
 * pid and start time (at once when `found` names none), or sooner when `exited` settles. Returns the
 * stop function.
 */
export function watchProcess(
  found: Promise<ProcessIdentity | undefined>,
  onDead: () => void,
  exited?: Promise<void>,
): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const dead = (): void => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    onDead();
  };
  void exited?.then(dead);
  void found.then((process) => {
    if (process === undefined) {
      dead();
      return;
    }
    const look = (): void => {
      if (stopped) return;
      timer = setTimeout(() => {
        void startOf(process.pid).then((start) => {
          if (start === process.start) look();
          else dead();
        });
      }, SANDBOXD_POLL_MS);
      timer.unref();
    };
    look();
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * Calls `onDead` once when sandboxd has ended: when `exited` settles (the launch chain's exit, heard by
 * the driver that launched the sandbox), or when its process is found gone, looked at every
 * `SANDBOXD_POLL_MS` (at once when there is none). The look is what an adopting driver has; it also
 * sees a sandboxd killed while its sandbox is frozen, whose bubblewrap, frozen too, reports nothing
 * until a thaw. Returns the stop function.
 */
export function watchSandboxd(
  instance: string,
  id: string,
  exited: Promise<void> | undefined,
  onDead: () => void,
): () => void {
  return watchProcess(findSandboxd(instance, id), onDead, exited);
}
