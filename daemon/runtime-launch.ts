/**
 * What a run of each runtime is started with (`planRuntime`) and the start itself (`launchRuntime`):
 * the command line, its environment, the files it needs (missing ones end the run with
 * `runtime_missing`) and the parser of its output.
 */
import type { StartExecution } from '../protocol/agent-wire.js';
import type { LineParser } from '../runtime-drivers/run-accumulator.js';
import { parseLine } from '../runtime-drivers/runtime-a/events.js';
import { parseRunnerLine } from '../runtime-drivers/runtime-b/events.js';
import type { StoredConfig } from './agent-configs.js';
import type { ExecutionTree } from './execution-tree.js';
import { ManagedProcess } from './managed-process.js';
import type { SandboxUser } from './sandbox-spawn.js';
import { runtimeABinary, runtimeACommand, runtimeAEnvironment } from './runtime-a-launch.js';
import { runtimeBCommand, runtimeBEnvironment, runtimeBFiles } from './runtime-b-launch.js';

/** How one run starts. */
export interface RuntimePlan {
  readonly cmd: string;
  readonly environment: Record<string, string>;
  /** Files that must exist in the image. */
  readonly files: readonly string[];
  readonly parse: LineParser;
  readonly workdir: string;
}

/** Where things are. */
export interface RuntimeSite {
  /** The template's agents folder (`/opt/agents`). */
  readonly agentsDir: string;
  /** runtime_a's read-only config home. */
  readonly configHome: string;
}

/** The plan of a run of `config`'s runtime. */
export function planRuntime(
  start: Pick<StartExecution, 'model' | 'sessionId' | 'reasoning' | 'workdir'>,
  config: StoredConfig,
  site: RuntimeSite,
): RuntimePlan {
  if (config.runtime === 'runtime_b') {
    const { node, runner } = runtimeBFiles(site.agentsDir);
    return {
      cmd: runtimeBCommand(site.agentsDir),
      environment: runtimeBEnvironment(config, start, site.agentsDir),
      files: [node, runner],
      parse: parseRunnerLine,
      workdir: start.workdir,
    };
  }
  const binary = runtimeABinary(site.agentsDir);
  return {
    cmd: runtimeACommand(start, binary),
    environment: runtimeAEnvironment(config, site.configHome, site.agentsDir),
    files: [binary],
    parse: parseLine,
    workdir: start.workdir,
  };
}

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
