/**
 * The start of a run as its driver planned it (`launchRuntime`), and the take-over of one a memory
 * snapshot's copy holds (`attachRuntime`).
 */
import type { RunPlan } from '../runtime-drivers/runtime-driver.js';
import type { ExecutionTree } from './execution-tree.js';
import { ManagedProcess } from './managed-process.js';
import type { SandboxUser } from './sandbox-spawn.js';

/** A run's plan with its working directory. */
export type RuntimePlan = RunPlan & { readonly workdir: string };

/**
 * Spawns the run as the sandbox user in the execution's tree; it waits for its prompt on stdin. A runtime
 * started ahead (`hold`, `runtime-standby.ts`) outlives its bridge beside a gVisor box, so that a copy
 * restored from a snapshot can take it over (`attachRuntime`).
 */
export function launchRuntime(
  plan: RuntimePlan,
  tree: ExecutionTree,
  user: SandboxUser,
  hold = false,
): ManagedProcess {
  return rooted(
    new ManagedProcess(
      {
        cmd: plan.cmd,
        envs: plan.environment,
        cwd: plan.workdir,
        timeoutMs: undefined,
        killTree: false,
        subreaper: tree.procsFile === undefined, // no cgroup holds the tree: its root keeps its orphans
        hold,
      },
      { ...user, ...(tree.procsFile === undefined ? {} : { cgroupProcs: tree.procsFile }) },
    ),
    tree,
  );
}

/**
 * Takes over runtime `pid` of a gVisor box restored from a snapshot: started ahead and held by the box
 * (`launchRuntime` with `hold`), its bridge went with the original's sandboxd; its stdio is this
 * sandboxd's from here on, in `tree`. `cmd` is what it was started with (for the records).
 */
export function attachRuntime(
  pid: number,
  cmd: string,
  tree: ExecutionTree,
  user: SandboxUser,
): ManagedProcess {
  const spec = { cmd, envs: {}, cwd: undefined, timeoutMs: undefined, killTree: false, attach: pid };
  return rooted(new ManagedProcess(spec, user), tree);
}

/** The tree hangs from the runtime once it runs. */
function rooted(proc: ManagedProcess, tree: ExecutionTree): ManagedProcess {
  void proc.started.then(
    () => (tree.root = proc.pid),
    () => undefined,
  );
  return proc;
}
