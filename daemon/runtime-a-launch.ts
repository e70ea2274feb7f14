/**
 * How sandboxd starts runtime_a (opencode 1.18.33, runtimes.md §1.7, §4): `opencode run --format json`
 * with a title (no title call to the model), the prompt on stdin, the configuration in
 * `OPENCODE_CONFIG_CONTENT`, every other network attempt off, and `/opt/agents/bin` (ripgrep) first
 * on PATH.
 */
import { RUNTIME_A_ENVIRONMENT } from '../runtime-drivers/runtime-a/environment.js';
import type { StartExecution } from '../protocol/agent-wire.js';
import type { StoredConfig } from './agent-configs.js';
import type { ExecutionTree } from './execution-tree.js';
import { ManagedProcess, type SandboxUser } from './managed-process.js';

/** Where the sdk-agent template puts the runtime. */
export const AGENT_BIN_DIR = '/opt/agents/bin';

/** The runtime_a binary. */
export const RUNTIME_A_BINARY = `${AGENT_BIN_DIR}/opencode`;

/** Quotes one argument for `/bin/sh` (the command runner takes a command line). */
function quote(argument: string): string {
  return `'${argument.replaceAll("'", `'\\''`)}'`;
}

/** The command line: `exec` so the runtime is the process sandboxd started. */
export function runtimeACommand(
  start: Pick<StartExecution, 'model' | 'sessionId' | 'reasoning'>,
  binary = RUNTIME_A_BINARY,
): string {
  const args = [binary, 'run', '--format', 'json', '--title', 'sdk agent run'];
  // `--name=value`: a value is never read as a flag of its own.
  if (start.model !== undefined) args.push(`--model=${start.model}`);
  if (start.sessionId !== undefined) args.push(`--session=${start.sessionId}`);
  if (start.reasoning) args.push('--thinking');
  return `exec ${args.map(quote).join(' ')}`;
}

/** The runtime's environment, on top of the clean one every command gets. */
export function runtimeAEnvironment(config: StoredConfig, configHome: string): Record<string, string> {
  return {
    ...config.env,
    ...RUNTIME_A_ENVIRONMENT,
    PATH: `${AGENT_BIN_DIR}:/usr/local/bin:/usr/bin:/bin`,
    XDG_CONFIG_HOME: configHome,
    OPENCODE_CONFIG_CONTENT: config.text,
  };
}

/** What one runtime process is started with. */
export interface RuntimeALaunch {
  readonly start: Pick<StartExecution, 'model' | 'sessionId' | 'reasoning' | 'workdir'>;
  /** From `runtimeAEnvironment`. */
  readonly environment: Record<string, string>;
  /** Its processes' cgroup; the commands' one when the tree has none. */
  readonly tree: ExecutionTree;
  readonly user: SandboxUser;
  readonly binary: string;
}

/** Spawns runtime_a as the sandbox user in the execution's tree; it waits for its prompt on stdin. */
export function launchRuntimeA(launch: RuntimeALaunch): ManagedProcess {
  const { tree, user } = launch;
  const proc = new ManagedProcess(
    {
      cmd: runtimeACommand(launch.start, launch.binary),
      envs: launch.environment,
      cwd: launch.start.workdir,
      timeoutMs: undefined,
      killTree: false,
    },
    { ...user, ...(tree.procsFile === undefined ? {} : { cgroupProcs: tree.procsFile }) },
  );
  tree.root = proc.pid;
  return proc;
}
