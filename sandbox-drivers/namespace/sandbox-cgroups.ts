/**
 * A sandbox's cgroups (notes/isolation.md): v1 `memory` and `pids` for limits, and a cgroup in the v2
 * hierarchy at /sys/fs/cgroup/unified for freeze/thaw (`cgroup.freeze`) and whole-sandbox kill
 * (`cgroup.kill`). All are named `sdk/<id>`.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = '/sys/fs/cgroup';
const V2 = join(ROOT, 'unified');

/** The cgroup directories of sandbox `id`. */
export function cgroupPaths(id: string): { memory: string; pids: string; unified: string } {
  return {
    memory: join(ROOT, 'memory', 'sdk', id),
    pids: join(ROOT, 'pids', 'sdk', id),
    unified: join(V2, 'sdk', id),
  };
}

/** Creates the cgroups with their limits. */
export async function createSandboxCgroups(id: string, memoryBytes: number, maxPids: number): Promise<void> {
  const paths = cgroupPaths(id);
  for (const path of Object.values(paths)) await mkdir(path, { recursive: true });
  await writeFile(join(paths.memory, 'memory.limit_in_bytes'), String(memoryBytes));
  await writeFile(join(paths.pids, 'pids.max'), String(maxPids));
}

/** The `cgroup.procs` files a process must join, in order. */
export function procsFiles(id: string): string[] {
  return Object.values(cgroupPaths(id)).map((path) => join(path, 'cgroup.procs'));
}

async function waitForEvent(id: string, key: string, value: string, timeoutMs: number): Promise<void> {
  const events = join(cgroupPaths(id).unified, 'cgroup.events');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await readFile(events, 'utf8');
    if (text.includes(`${key} ${value}`)) return;
    if (Date.now() > deadline) throw new Error(`cgroup of sandbox ${id} did not reach ${key} ${value}`);
    await sleep(1);
  }
}

/** Freezes every process of the sandbox and waits until the kernel reports it frozen. */
export async function freeze(id: string): Promise<void> {
  await writeFile(join(cgroupPaths(id).unified, 'cgroup.freeze'), '1');
  await waitForEvent(id, 'frozen', '1', 5_000);
}

/** Thaws the sandbox. */
export async function thaw(id: string): Promise<void> {
  await writeFile(join(cgroupPaths(id).unified, 'cgroup.freeze'), '0');
  await waitForEvent(id, 'frozen', '0', 5_000);
}

/** Kills every process of the sandbox (also frozen ones) and removes its cgroups. */
export async function killAndRemoveCgroups(id: string): Promise<void> {
  const paths = cgroupPaths(id);
  if (existsSync(paths.unified)) {
    await writeFile(join(paths.unified, 'cgroup.kill'), '1');
    await waitForEvent(id, 'populated', '0', 5_000);
  }
  for (const path of Object.values(paths)) {
    for (let attempt = 0; existsSync(path); attempt++) {
      try {
        await rmdir(path);
      } catch (error) {
        if (attempt > 100) throw error;
        await sleep(5); // the v1 hierarchies see the last exit a moment later
      }
    }
  }
}

/** Sandbox ids that have a cgroup on this host. */
export async function listSandboxCgroups(): Promise<string[]> {
  const entries = await readdir(join(V2, 'sdk')).catch(() => []);
  return entries.filter((name) => /^[a-z0-9]{12}$/.test(name));
}
