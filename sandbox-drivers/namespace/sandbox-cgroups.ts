/**
 * A sandbox's cgroups (notes/isolation.md), all under `sdk/<instance>/<id>`:
 *   - v1 `memory`: the sandbox's cgroup holds sandboxd and is limited to the sandbox's memory plus a
 *     reserve for sandboxd; its child `user` holds every command and is limited to the sandbox's memory.
 *     So sandbox code, and the tmpfs pages it writes, run out of memory inside `user`, where the OOM
 *     killer finds only sandbox code: sandboxd is never the process reclaimed for them. Kernel TCP buffer
 *     memory is limited in both (v1 does not count socket buffers in `memory.limit_in_bytes`), though not
 *     hard: the kernel still lets each stream socket finish the write it is in past the limit
 *     (sandbox-drivers/README.md, "Resources").
 *   - v1 `pids` and `cpu`: the process limit and a CFS quota for the whole sandbox.
 *   - v2 at /sys/fs/cgroup/unified: freeze/thaw (`cgroup.freeze`), whole-sandbox kill (`cgroup.kill`),
 *     and `cgroup.events`, whose `populated 0` says that every process of the sandbox has ended.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { chown, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runQuietly } from './host-commands.js';
import { SANDBOXD_MEMORY_BOUND } from '../../protocol/sandboxd-node.js';

const ROOT = '/sys/fs/cgroup';
const V2 = join(ROOT, 'unified');

/** Memory kept for sandboxd above the sandbox's own limit. */
const DAEMON_MEMORY_RESERVE = SANDBOXD_MEMORY_BOUND;

/** CFS period; the quota is `cpus` of it. */
const CPU_PERIOD_US = 100_000;

/** The limits of one sandbox. */
export interface SandboxLimits {
  /** Memory of sandbox code (its tmpfs pages included). */
  readonly memoryBytes: number;
  /** Processes of the whole sandbox. */
  readonly maxPids: number;
  /** CPUs of the whole sandbox, as a share of one CPU's time (1 = one CPU). */
  readonly cpus: number;
}

/** The cgroup directories of sandbox `id` of driver `instance`. */
export function cgroupPaths(
  instance: string,
  id: string,
): { memory: string; userMemory: string; pids: string; cpu: string; unified: string } {
  const memory = join(ROOT, 'memory', 'sdk', instance, id);
  return {
    memory,
    userMemory: join(memory, 'user'),
    pids: join(ROOT, 'pids', 'sdk', instance, id),
    cpu: join(ROOT, 'cpu', 'sdk', instance, id),
    unified: join(V2, 'sdk', instance, id),
  };
}

/**
 * `mkdir -p`, again when a parent vanished meanwhile: the last destroy of an instance removes its
 * folders, and a launch may be creating them at that moment.
 */
async function makeDir(path: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(path, { recursive: true });
      return;
    } catch (error) {
      if (attempt >= 3 || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/**
 * Memory used by the sandbox's code (the `user` cgroup: its processes and the tmpfs pages they wrote)
 * and its limit; undefined when the cgroup is gone.
 */
export async function sandboxMemory(
  instance: string,
  id: string,
): Promise<{ usedBytes: number; limitBytes: number } | undefined> {
  const { userMemory } = cgroupPaths(instance, id);
  try {
    const [used, limit] = await Promise.all(
      ['memory.usage_in_bytes', 'memory.limit_in_bytes'].map((file) =>
        readFile(join(userMemory, file), 'utf8'),
      ),
    );
    return { usedBytes: Number(used), limitBytes: Number(limit) };
  } catch {
    return undefined;
  }
}

/** Kernel TCP buffer memory allowed to sandbox code: a quarter of its memory, at least 16 MiB. */
export function tcpLimitOf(memoryBytes: number): number {
  return Math.max(16 * 2 ** 20, Math.floor(memoryBytes / 4));
}

let favoring: Promise<void> | undefined;

/**
 * Sets `favordynmods` on the cgroup2 mount, once per process, as the first launch sets ip_forward. Every
 * command and every sandboxd moves itself into a cgroup (a `cgroup.procs` write); without the option the
 * kernel makes such a write wait for an RCU grace period whenever no other migration ran just before:
 * measured 7 to 17 ms per migration on a 2-vCPU host, most of a new sandbox's first command (22 ms
 * against 5 for its second). With it a migration takes under 1 ms; forks and exits cost slightly more
 * (the kernel's documented trade). Limits and isolation are unchanged. A kernel without the option
 * (before 6.0), or a mount the driver may not change, is left as it is. (Seen on a 6.18 kernel:
 * migrations stayed fast after the option was taken off again, until reboot.)
 */
function favorMigrations(): Promise<void> {
  favoring ??= readFile('/proc/self/mounts', 'utf8').then(
    async (mounts) => {
      const line = mounts.split('\n').find((entry) => entry.split(' ')[1] === V2);
      if (line !== undefined && !/[ ,]favordynmods[ ,]/.test(line)) {
        await runQuietly('mount', ['-o', 'remount,favordynmods', V2]);
      }
    },
    () => undefined,
  );
  return favoring;
}

/**
 * Creates the cgroups with their limits. `owner` is sandboxd's host uid/gid: it may move its own
 * processes into `user` (every process of sandbox code starts there) and create child cgroups under
 * `user` (one per agent execution, whose `cgroup.procs` then lists the execution's whole tree), and
 * nothing else: `user`'s own limit files stay host root's. Sandbox code has no cgroup filesystem. A child cannot exceed `user`'s limits
 * (v1 memory limits are hierarchical), and `killAndRemoveCgroups` removes every child.
 */
export async function createSandboxCgroups(
  instance: string,
  id: string,
  limits: SandboxLimits,
  owner: number,
): Promise<void> {
  const paths = cgroupPaths(instance, id);
  await favorMigrations();
  for (const path of [paths.memory, paths.pids, paths.cpu, paths.unified]) await makeDir(path);
  await mkdir(paths.userMemory);
  const tcp = tcpLimitOf(limits.memoryBytes);
  await writeFile(
    join(paths.memory, 'memory.limit_in_bytes'),
    String(limits.memoryBytes + DAEMON_MEMORY_RESERVE),
  );
  await writeFile(
    join(paths.memory, 'memory.kmem.tcp.limit_in_bytes'),
    String(tcp + DAEMON_MEMORY_RESERVE / 2),
  );
  await writeFile(join(paths.userMemory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
  await writeFile(join(paths.userMemory, 'memory.kmem.tcp.limit_in_bytes'), String(tcp));
  await chown(join(paths.userMemory, 'cgroup.procs'), owner, owner);
  await chown(paths.userMemory, owner, owner);
  await writeFile(join(paths.pids, 'pids.max'), String(limits.maxPids));
  await writeFile(join(paths.cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
  await writeFile(join(paths.cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpus * CPU_PERIOD_US)));
}

/** The `cgroup.procs` files sandboxd joins, in order. */
export function procsFiles(instance: string, id: string): string[] {
  const { memory, pids, cpu, unified } = cgroupPaths(instance, id);
  return [memory, pids, cpu, unified].map((path) => join(path, 'cgroup.procs'));
}

/** The `cgroup.procs` files the sandbox's pid 1 joins: the commands' memory cgroup, the others whole. */
export function sandboxProcsFiles(instance: string, id: string): string[] {
  const { userMemory, pids, cpu, unified } = cgroupPaths(instance, id);
  return [userMemory, pids, cpu, unified].map((path) => join(path, 'cgroup.procs'));
}

async function waitForEvent(
  instance: string,
  id: string,
  key: string,
  value: string,
  timeoutMs: number,
): Promise<void> {
  const events = join(cgroupPaths(instance, id).unified, 'cgroup.events');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(events, 'utf8');
    if (text.includes(`${key} ${value}`)) return;
    if (Date.now() > deadline) throw new Error(`cgroup of sandbox ${id} did not reach ${key} ${value}`);
    await sleep(1);
  }
}

/** Freezes every process of the sandbox and waits until the kernel reports it frozen. */
export async function freeze(instance: string, id: string): Promise<void> {
  await writeFile(join(cgroupPaths(instance, id).unified, 'cgroup.freeze'), '1');
  await waitForEvent(instance, id, 'frozen', '1', 5_000);
}

/** True while the sandbox is frozen (paused). */
export async function isFrozen(instance: string, id: string): Promise<boolean> {
  const state = await readFile(join(cgroupPaths(instance, id).unified, 'cgroup.freeze'), 'utf8');
  return state.trim() === '1';
}

/** Thaws the sandbox. */
export async function thaw(instance: string, id: string): Promise<void> {
  await writeFile(join(cgroupPaths(instance, id).unified, 'cgroup.freeze'), '0');
  await waitForEvent(instance, id, 'frozen', '0', 5_000);
}

/** True while some process of the sandbox runs (or is frozen). */
async function isPopulated(instance: string, id: string): Promise<boolean> {
  const text = await readFile(join(cgroupPaths(instance, id).unified, 'cgroup.events'), 'utf8').catch(
    () => 'populated 0',
  );
  return text.includes('populated 1');
}

/**
 * Calls `onEmpty` once when the last process of the sandbox has ended (the kernel notifies changes of
 * `cgroup.events` through inotify). Returns the stop function.
 */
export function watchEmpty(instance: string, id: string, onEmpty: () => void): () => void {
  let watcher: FSWatcher | undefined;
  let done = false;
  const stop = (): void => {
    done = true;
    watcher?.close();
  };
  const check = (): void => {
    void isPopulated(instance, id).then((populated) => {
      if (populated || done) return;
      stop();
      onEmpty();
    });
  };
  try {
    watcher = watch(join(cgroupPaths(instance, id).unified, 'cgroup.events'), check);
    watcher.on('error', () => undefined);
    watcher.unref();
  } catch {
    // no cgroup: the check below reports it empty
  }
  check();
  return stop;
}

async function removeDir(path: string): Promise<void> {
  for (let attempt = 0; existsSync(path); attempt++) {
    try {
      await rmdir(path);
    } catch (error) {
      if (attempt > 100) throw error;
      await sleep(5); // the v1 hierarchies see the last exit a moment later
    }
  }
}

/**
 * Removes the cgroup at `path` and every child cgroup below it, deepest first (a cgroup with children
 * cannot be removed). The children are those the sandbox's root made under `user`; their processes are
 * gone by now (the whole sandbox was killed through its v2 cgroup).
 */
async function removeCgroupTree(path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.isDirectory()) await removeCgroupTree(join(path, entry.name));
  }
  await removeDir(path);
}

/**
 * Kills every process of the sandbox (also frozen ones) through its v2 cgroup and waits until none is
 * left; the cgroups stay. Nothing to do for a sandbox whose cgroup is gone.
 */
export async function killSandboxProcesses(instance: string, id: string): Promise<void> {
  try {
    await writeFile(join(cgroupPaths(instance, id).unified, 'cgroup.kill'), '1');
    await waitForEvent(instance, id, 'populated', '0', 5_000);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // already gone
  }
}

/**
 * Kills every process of the sandbox (also frozen ones) and removes its cgroups, child cgroups under
 * `user` included. Reconciliation after a restart removes leftovers through this too (`destroy`).
 */
export async function killAndRemoveCgroups(instance: string, id: string): Promise<void> {
  const paths = cgroupPaths(instance, id);
  await killSandboxProcesses(instance, id);
  await removeCgroupTree(paths.userMemory);
  for (const path of [paths.memory, paths.pids, paths.cpu, paths.unified]) {
    await removeDir(path);
  }
  // The instance's folders go with its last sandbox; a launch racing with this retries its mkdir.
  for (const path of [paths.memory, paths.pids, paths.cpu, paths.unified]) {
    await rmdir(join(path, '..')).catch(() => undefined);
  }
}

/** Sandbox ids of driver `instance` that have a cgroup on this host. */
export async function listSandboxCgroups(instance: string): Promise<string[]> {
  const entries = await readdir(join(V2, 'sdk', instance)).catch(() => []);
  return entries.filter((name) => /^[a-z0-9]{12}$/.test(name));
}
