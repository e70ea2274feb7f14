/**
 * What a sandbox uses now (`SandboxDriver.usage`), read from what the host already keeps for it: CPU time
 * from its v2 cgroup (`cpu.stat`, every process of the sandbox: sandboxd and a gVisor kernel too),
 * memory from its `user` cgroup (`sandbox-cgroups.ts`), disk from its view's two tmpfs (`root-view.ts`:
 * the layer over the template and `/home`; `/tmp` is a tmpfs of the box, counted as memory), network
 * from its veth's counters on the host's side (what the host side received the sandbox sent). Derived
 * on every call; nothing is kept here.
 */
import { readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxUsage } from '../sandbox-driver.js';
import { cgroupPaths, sandboxMemory } from './sandbox-cgroups.js';
import { viewPaths } from './root-view.js';
import { networkNames } from './sandbox-network.js';

/** `usage_usec` of a v2 `cpu.stat`. */
function cpuUsecOf(stat: string): number {
  const line = stat.split('\n').find((entry) => entry.startsWith('usage_usec '));
  return line === undefined ? 0 : Number(line.slice('usage_usec '.length));
}

/** Bytes used and size of the file system mounted at `path`. */
async function fileSystem(path: string): Promise<{ used: number; size: number }> {
  const stats = await statfs(path);
  return { used: (stats.blocks - stats.bfree) * stats.bsize, size: stats.blocks * stats.bsize };
}

/** A counter of the host's side of the sandbox's veth. */
async function linkCounter(link: string, counter: 'rx_bytes' | 'tx_bytes'): Promise<number> {
  return Number(await readFile(`/sys/class/net/${link}/statistics/${counter}`, 'utf8'));
}

/** What sandbox `id` of driver `instance` uses now; undefined when its resources are gone. */
export async function sandboxUsage(instance: string, id: string): Promise<SandboxUsage | undefined> {
  const view = viewPaths(instance, id);
  const link = networkNames(instance, id).hostVeth;
  try {
    const [memory, stat, layer, home, received, sent] = await Promise.all([
      sandboxMemory(instance, id),
      readFile(join(cgroupPaths(instance, id).unified, 'cpu.stat'), 'utf8'),
      fileSystem(view.dir),
      fileSystem(view.home),
      linkCounter(link, 'rx_bytes'),
      linkCounter(link, 'tx_bytes'),
    ]);
    if (memory === undefined) return undefined;
    return {
      cpuUsec: cpuUsecOf(stat),
      memoryUsedBytes: memory.usedBytes,
      memoryLimitBytes: memory.limitBytes,
      diskUsedBytes: layer.used + home.used,
      diskLimitBytes: layer.size + home.size,
      // The host side receives what the sandbox sends.
      netRxBytes: sent,
      netTxBytes: received,
    };
  } catch {
    return undefined; // destroyed meanwhile, or not yet made
  }
}
