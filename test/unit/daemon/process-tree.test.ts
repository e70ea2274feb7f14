/**
 * `killTree` on a tree that forks while it is being killed: every process of it ends, including a child
 * forked between the tree walk and the signal (orphaned by its parent's death, it would otherwise keep
 * running and keep the command's output pipe open, so `wait()` would never return).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { descendantsOf, killTree } from '../../../daemon/process-tree.js';

/** Pids of the live processes whose process group is `group`. */
function groupMembers(group: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z' && Number(fields[2]) === group) members.push(Number(entry));
    } catch {
      // ended while we looked
    }
  }
  return members;
}

describe('killTree', () => {
  it('ends a tree that keeps forking while it is killed, leaving nothing of it', async () => {
    // A shell forking sleeps as fast as it can, as `cmd & cmd` does at its start, in a group of its own
    // as every sandbox command starts.
    const child = spawn('/bin/sh', ['-c', 'while :; do sleep 300 & done'], {
      detached: true,
      stdio: 'ignore',
    });
    const root = child.pid ?? 0;
    const exited = once(child, 'exit');
    onTestFinished(() => {
      try {
        process.kill(-root, 'SIGKILL'); // only what this test started, should the kill have missed any
      } catch {
        // all gone, as it should be
      }
    });
    await expect.poll(async () => (await descendantsOf(root)).size).toBeGreaterThanOrEqual(20);
    await killTree(root);
    await exited;
    await expect.poll(() => groupMembers(root)).toEqual([]);
  });
});
