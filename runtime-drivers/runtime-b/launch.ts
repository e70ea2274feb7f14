/**
 * How sandboxd starts runtime_b: the runner (`runner/` here, installed by the sdk-agent template at
 * `/opt/agents/runtime-b/`) on the template's own Node, the prompt on stdin, its configuration with this
 * run's fields in `SDK_AGENT_CONFIG`, and the template's tools (ripgrep) first on PATH.
 */
import { quote } from '../../rules/shell-quote.js';
import type { RuntimeSite } from '../runtime-driver.js';
import { toolsPath } from '../runtime-site.js';

/** The Node that runs the runner, and the runner. */
export const runtimeBFiles = (site: Pick<RuntimeSite, 'agentsDir'>): { node: string; runner: string } => ({
  node: `${site.agentsDir}/node/bin/node`,
  runner: `${site.agentsDir}/runtime-b/runner.mjs`,
});

/** The command line: `exec` so the runner is the process sandboxd started. */
export function runtimeBCommand(site: Pick<RuntimeSite, 'agentsDir'>): string {
  const { node, runner } = runtimeBFiles(site);
  return `exec ${quote(node)} ${quote(runner)}`;
}

/** The runner's environment: its configuration for this run. */
export function runtimeBEnvironment(runConfig: unknown, site: RuntimeSite): Record<string, string> {
  return { PATH: toolsPath(site), SDK_AGENT_CONFIG: JSON.stringify(runConfig) };
}
