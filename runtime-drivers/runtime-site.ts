/** Where the sdk-agent template puts what every runtime shares. */
import type { RuntimeSite } from './runtime-driver.js';

/** The template's agents folder in a sandbox. */
export const AGENTS_DIR = '/opt/agents';

/** PATH for a runtime: the template's tools (ripgrep) first. */
export const toolsPath = (site: Pick<RuntimeSite, 'agentsDir'>): string =>
  `${site.agentsDir}/bin:/usr/local/bin:/usr/bin:/bin`;
