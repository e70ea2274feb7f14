/**
 * Hears of sandboxd's death whatever else of the sandbox still runs. bubblewrap's pid 1 reaps the
 * sandbox's orphans and lives while any process does, so the sandbox's cgroup empties only when sandbox
 * code has ended too: a `sleep 600` left running kept a dead sandboxd's sandbox `running`.
 *
 * - The driver that launched the sandbox hears it at once: the launch chain's process (its child,
 *   `sandboxd-process.ts`) is by then bubblewrap's monitor, which exits as soon as sandboxd (pid 2 of
 *   the sandbox's pid namespace) does, whatever else runs: bwrap's pid 1 reports pid 2's exit over an
 *   eventfd (bubblewrap.c, `do_init` and `monitor_child`).
 * - A driver that adopted the sandbox after a restart is no longer that process's parent: it finds
 *   sandboxd's host pid (pid 2 of the sandbox's pid namespace, in the sandbox's own cgroup, started with
 *   its pid 1) and looks at it every `SANDBOXD_POLL_MS`, by pid and start time (a pid may be reused).
 *   The launching driver looks too: a sandboxd killed while its sandbox is frozen is seen only so.
 *
 * Nothing here signals a process; the driver kills through the sandbox's cgroup.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cgroupPaths } from './sandbox-cgroups.js';

/** How often a watched sandboxd is looked at (the launching driver hears its death sooner). */
export const SANDBOXD_POLL_MS = 500;

/** Clock ticks (USER_HZ, 100 on Linux) sandboxd may start after its pid 1: it is forked right after. */
const STARTED_WITH_INIT_TICKS = 100;

/** A process: its host pid and start time (clock ticks since boot). */
interface ProcessIdentity {
  readonly pid: string;
  readonly start: number;
}

/** The start time of `pid`, or undefined when it is gone or a zombie (ended, not yet reaped). */
async function startOf(pid: string): Promise<number | undefined> {
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
 * sandboxd of a running sandbox: pid 2 of the pid namespace bubblewrap made, one level below the host's
 * (the launch chain joins no other pid namespace, and seccomp refuses sandbox code a new one), among the
 * processes of the sandbox's own cgroup (commands live in its `user` child), started with that
 * namespace's pid 1. Undefined when sandboxd is gone.
 */
export async function findSandboxd(instance: string, id: string): Promise<ProcessIdentity | undefined> {
  const procs = await readFile(join(cgroupPaths(instance, id).memory, 'cgroup.procs'), 'utf8').catch(
    () => '',
  );
  let daemon: ProcessIdentity | undefined;
  let init: ProcessIdentity | undefined;
  for (const pid of procs.split('\n').filter((line) => line !== '')) {
    const ids = await namespacePids(pid);
    if (ids?.length !== 2 || (ids[1] !== '1' && ids[1] !== '2')) continue;
    const start = await startOf(pid);
    if (start === undefined) continue;
    if (ids[1] === '1') init = { pid, start };
    else daemon = { pid, start };
  }
  // A pid 2 that started later is a reuse of the number after sandboxd died (the namespace's pids wrap).
  return daemon !== undefined && init !== undefined && daemon.start - init.start <= STARTED_WITH_INIT_TICKS
    ? daemon
    : undefined;
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
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const dead = (): void => {
    if (stopped) return;
    stopped = true;
    clearTimeout(timer);
    onDead();
  };
  void exited?.then(dead);
  void findSandboxd(instance, id).then((daemon) => {
    if (daemon === undefined) {
      dead();
      return;
    }
    const look = (): void => {
      if (stopped) return;
      timer = setTimeout(() => {
        void startOf(daemon.pid).then((start) => {
          if (start === daemon.start) look();
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
