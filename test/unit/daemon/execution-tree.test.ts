/**
 * An execution's tree without a cgroup (beside a gVisor box): once the runtime has exited (on SIGTERM, at
 * a timeout) its children are re-parented away from it, and must still be the execution's, so the
 * grace's end finds and kills them (`runtime-a-control.test.ts` "ends with timeout only once a tree
 * that ignores SIGTERM is gone", run against gVisor). Real processes of this host's process space.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ExecutionTree } from '../../../daemon/execution-tree.js';
import { hostProcesses } from '../../../daemon/process-space.js';

describe('ExecutionTree without a cgroup', () => {
  it("keeps a child of the runtime after the runtime's exit, until it ends", async () => {
    // The runtime: starts a child that ignores SIGTERM, then exits when told.
    const runtime = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 300 & echo $!; read line"], {
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const root = runtime.pid ?? 0;
    onTestFinished(() => {
      try {
        process.kill(-root, 'SIGKILL'); // only what this test started
      } catch {
        // already gone
      }
    });
    const [line] = (await once(runtime.stdout.setEncoding('utf8'), 'data')) as [string];
    const child = Number(line.trim());
    const tree = ExecutionTree.create(undefined, 'execution', hostProcesses);
    tree.root = root;
    expect(new Set(await tree.pids())).toEqual(new Set([root, child]));

    const exited = once(runtime, 'exit');
    runtime.stdin.end('exit\n');
    await exited;
    expect(await tree.pids()).toEqual([child]); // re-parented, still the execution's

    await tree.freezeAndKill();
    await expect.poll(() => tree.isEmpty()).toBe(true);
  });
});
