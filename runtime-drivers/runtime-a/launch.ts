/**
 * How sandboxd starts runtime_a (opencode 1.18.33, runtimes.md §1.7, §4): `opencode run --format json`
 * with a title (no title call to the model), the prompt on stdin, the configuration in
 * `OPENCODE_CONFIG_CONTENT`, every other network attempt off, and the template's tools first on PATH.
 */
import { quote } from '../../rules/shell-quote.js';
import type { RunFacts, RuntimeSite } from '../runtime-driver.js';
import { toolsPath } from '../runtime-site.js';
import { RUNTIME_A_ENVIRONMENT } from './environment.js';

/** The runtime_a binary in the template's agents folder. */
export const runtimeABinary = (site: Pick<RuntimeSite, 'agentsDir'>): string =>
  `${site.agentsDir}/bin/opencode`;

/**
 * The command line: `exec` so the runtime is the process sandboxd started. `model` is opencode's
 * `provider/model`.
 */
export function runtimeACommand(run: Omit<RunFacts, 'workdir'>, binary: string): string {
  const args = [binary, 'run', '--format', 'json', '--title', 'sdk agent run'];
  // `--name=value`: a value is never read as a flag of its own.
  if (run.model !== undefined) args.push(`--model=${run.model}`);
  if (run.sessionId !== undefined) args.push(`--session=${run.sessionId}`);
  if (run.reasoning) args.push('--thinking');
  return `exec ${args.map(quote).join(' ')}`;
}

/** The runtime's environment: the provider package's placeholder key, network extras off, the configuration. */
export function runtimeAEnvironment(
  text: string,
  keyEnv: Readonly<Record<string, string>>,
  site: RuntimeSite,
): Record<string, string> {
  return {
    ...keyEnv,
    ...RUNTIME_A_ENVIRONMENT,
    PATH: toolsPath(site),
    XDG_CONFIG_HOME: site.configHome,
    OPENCODE_CONFIG_CONTENT: text,
  };
}
