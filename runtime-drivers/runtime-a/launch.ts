/**
 * How sandboxd starts runtime_a (opencode 1.18.33, runtimes.md §1.7, §4): `opencode run --format json`
 * with a title (no title call to the model), the prompt on stdin, the configuration in
 * `OPENCODE_CONFIG_CONTENT`, every other network attempt off, and `/opt/agents/bin` (ripgrep) first
 * on PATH.
 */
import { RUNTIME_A_ENVIRONMENT } from '../runtime-drivers/runtime-a/environment.js';
import type { StartExecution } from '../protocol/agent-wire.js';
import type { StoredConfig } from './agent-configs.js';

import { quote } from './shell-quote.js';

/** Where the sdk-agent template puts the runtimes. */
export const AGENTS_DIR = '/opt/agents';

/** The runtime_a binary in `agentsDir`. */
export const runtimeABinary = (agentsDir = AGENTS_DIR): string => `${agentsDir}/bin/opencode`;

/** PATH for a runtime: the template's tools (ripgrep) first. */
export const runtimePath = (agentsDir = AGENTS_DIR): string =>
  `${agentsDir}/bin:/usr/local/bin:/usr/bin:/bin`;

/** The command line: `exec` so the runtime is the process sandboxd started. */
export function runtimeACommand(
  start: Pick<StartExecution, 'model' | 'sessionId' | 'reasoning'>,
  binary = runtimeABinary(),
): string {
  const args = [binary, 'run', '--format', 'json', '--title', 'sdk agent run'];
  // `--name=value`: a value is never read as a flag of its own.
  if (start.model !== undefined) args.push(`--model=${start.model}`);
  if (start.sessionId !== undefined) args.push(`--session=${start.sessionId}`);
  if (start.reasoning) args.push('--thinking');
  return `exec ${args.map(quote).join(' ')}`;
}

/** The runtime's environment, on top of the clean one every command gets. */
export function runtimeAEnvironment(
  config: StoredConfig,
  configHome: string,
  agentsDir = AGENTS_DIR,
): Record<string, string> {
  return {
    ...config.env,
    ...RUNTIME_A_ENVIRONMENT,
    PATH: runtimePath(agentsDir),
    XDG_CONFIG_HOME: configHome,
    OPENCODE_CONFIG_CONTENT: config.text,
  };
}
