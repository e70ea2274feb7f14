/**
 * How sandboxd starts runtime_b: the runner of the sdk-agent template on the template's own Node
 * (`/opt/agents/node/bin/node /opt/agents/runtime-b/runner.mjs`), the prompt on stdin, its configuration
 * in `SDK_AGENT_CONFIG` with this run's fields added (session, reasoning, working directory, a model the
 * call names), and the template's tools (ripgrep) first on PATH.
 */
import type { StartExecution } from '../protocol/agent-wire.js';
import type { StoredConfig } from './agent-configs.js';
import { AGENTS_DIR, runtimePath } from './runtime-a-launch.js';
import { quote } from './shell-quote.js';

/** The Node that runs the runner, and the runner. */
export const runtimeBFiles = (agentsDir = AGENTS_DIR): { node: string; runner: string } => ({
  node: `${agentsDir}/node/bin/node`,
  runner: `${agentsDir}/runtime-b/runner.mjs`,
});

/** The command line: `exec` so the runner is the process sandboxd started. */
export function runtimeBCommand(agentsDir = AGENTS_DIR): string {
  const { node, runner } = runtimeBFiles(agentsDir);
  return `exec ${quote(node)} ${quote(runner)}`;
}

/** The runner's environment, on top of the clean one every command gets. */
export function runtimeBEnvironment(
  config: StoredConfig,
  start: Pick<StartExecution, 'model' | 'sessionId' | 'reasoning' | 'workdir'>,
  agentsDir = AGENTS_DIR,
): Record<string, string> {
  const base = JSON.parse(config.text) as { model?: Record<string, unknown> };
  const run = {
    ...base,
    ...(start.model === undefined ? {} : { model: { ...base.model, id: start.model } }),
    ...(start.sessionId === undefined ? {} : { sessionId: start.sessionId }),
    reasoning: start.reasoning,
    workdir: start.workdir,
  };
  return { PATH: runtimePath(agentsDir), SDK_AGENT_CONFIG: JSON.stringify(run) };
}
