/**
 * Agent templates (SPEC "Image tooling", issue 14): an image of its own on `sdk-base` or `sdk-base-caps`
 * with the agents' runtime under /opt/agents (runtime_a and ripgrep always, runtime_b unless left out),
 * as one more layer of the base's recipe. The runtime is the folder `templates/sdk-agent/build.mjs`
 * builds from npm and Debian (`npm run template:agent`), named by that build's stamp, so a template is
 * rebuilt only when the runtime's inputs change. The manifest says what the template is: its base, its
 * memory and CPU defaults, and whether the runtime is read into the page cache at start and resume.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { AgentTemplateSpec } from '../../protocol/template-api.js';
import { AGENT_TEMPLATE_CPUS, AGENT_TEMPLATE_MEMORY_MB } from '../../rules/limits.js';
import { AGENT_TEMPLATE } from '../../rules/names.js';
import type { TemplateManifest } from '../sandbox-driver.js';
import { inputHash, type ImageRecipe } from './image-recipe.js';
import { ImageBuildError, type BuildContext, type TreeSource } from './image-layers.js';

const run = promisify(execFile);

/** Where the agents' runtime is in a sandbox (opencode and rg in `bin/`, runtime_b in `runtime-b/`). */
export const AGENTS_DIR = '/opt/agents';

/** The tree placement's name of the agents' runtime. */
export const AGENTS_TREE = 'agents';

/** The step that builds or finds the agents' runtime folder. */
export const AGENTS_STEP = 'agents runtime (npm, Debian ripgrep)';

/** What an agent template holds beyond its base. */
export interface AgentFacts {
  readonly runtimeB: boolean;
  readonly prefetch: boolean;
  readonly kernelWarmup: boolean;
}

/** The manifest of a template with a recipe: the driver's facts, what its image is built from. */
export interface RecipeManifest extends TemplateManifest {
  readonly recipe: ImageRecipe;
  readonly recipeHash: string;
  /** The template it stands on (agent templates). */
  readonly base?: string;
  /** Present on agent templates. */
  readonly agent?: AgentFacts;
}

/** The default agent template's options (`sdk-agent`, what `AgentTemplate()` builds). */
export const DEFAULT_AGENT_SPEC: AgentTemplateSpec = {
  name: AGENT_TEMPLATE,
  base: 'sdk-base-caps',
  runtimeB: true,
  prefetch: true,
  kernelWarmup: false,
};

/** `base`'s recipe with the agents' runtime at /opt/agents (runtime_b and its Node left out when not wanted). */
export function agentRecipe(base: ImageRecipe, runtimeB: boolean): ImageRecipe {
  return {
    ...base,
    trees: [{ name: AGENTS_TREE, to: AGENTS_DIR, without: runtimeB ? [] : ['node', 'runtime-b'] }],
  };
}

/** The manifest of the agent template `spec` describes, standing on `base`'s manifest. */
export function agentManifest(spec: AgentTemplateSpec, base: RecipeManifest): RecipeManifest {
  const recipe = agentRecipe(base.recipe, spec.runtimeB);
  return {
    name: spec.name,
    sandboxdVersion: base.sandboxdVersion,
    canCloseEgress: base.canCloseEgress,
    base: base.name,
    memoryMb: spec.memoryMb ?? AGENT_TEMPLATE_MEMORY_MB,
    cpus: AGENT_TEMPLATE_CPUS,
    agent: { runtimeB: spec.runtimeB, prefetch: spec.prefetch, kernelWarmup: spec.kernelWarmup },
    recipe,
    recipeHash: inputHash(recipe),
  };
}

/** The options an agent template was built with, read back from its manifest. */
export function agentSpecOf(manifest: RecipeManifest & { readonly agent: AgentFacts }): AgentTemplateSpec {
  return {
    name: manifest.name,
    base: manifest.base === 'sdk-base' ? 'sdk-base' : 'sdk-base-caps',
    ...(manifest.memoryMb === undefined || manifest.memoryMb === AGENT_TEMPLATE_MEMORY_MB
      ? {}
      : { memoryMb: manifest.memoryMb }),
    runtimeB: manifest.agent.runtimeB,
    prefetch: manifest.agent.prefetch,
    kernelWarmup: false,
  };
}

/** The files a sandbox of `manifest` reads into the page cache when it starts and resumes. */
export function prefetchFiles(manifest: TemplateManifest): string[] {
  const agent = (manifest as RecipeManifest).agent;
  if (agent?.prefetch !== true) return [];
  return [`${AGENTS_DIR}/bin/opencode`, ...(agent.runtimeB ? [`${AGENTS_DIR}/node/bin/node`] : [])];
}

/**
 * Every folder and file under `dir`, sorted, a line each (a file with its size, mtime, inode and mode):
 * what names a runtime folder built without a stamp (the runtime is hundreds of MiB: not hashed by
 * content).
 */
function fingerprintOf(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(dir, entry.name);
    const rel = `${prefix}/${entry.name}`;
    if (entry.isDirectory()) out.push(`${rel}/`, ...fingerprintOf(path, rel));
    else if (entry.isFile()) {
      const stat = statSync(path);
      out.push(
        `${rel} ${String(stat.size)} ${String(stat.mtimeMs)} ${String(stat.ino)} ${String(stat.mode)}`,
      );
    }
  }
  return out;
}

/**
 * The agents' runtime folder as a tree layer's source: `dir`, built first by `buildScript`
 * (`templates/sdk-agent/build.mjs`, idempotent) when one is given and the folder is missing, or always
 * when `force`. Named by the build's stamp beside the folder, else by its files' identities.
 *
 * @throws ImageBuildError (step {@link AGENTS_STEP}) when the build fails or no folder is there
 */
export async function agentsSource(
  dir: string,
  buildScript: string | undefined,
  context: BuildContext & { readonly force?: boolean },
): Promise<TreeSource> {
  const stamp = join(dirname(dir), 'stamp');
  const needsBuild = context.force === true || !existsSync(stamp) || !existsSync(dir);
  if (buildScript !== undefined && needsBuild) {
    context.onStep?.(AGENTS_STEP, false);
    if (context.force === true) rmSync(stamp, { force: true }); // the script rebuilds the folder
    try {
      await run(process.execPath, [buildScript], {
        maxBuffer: 64 * 2 ** 20,
        ...(context.signal === undefined ? {} : { signal: context.signal }),
      });
    } catch (error) {
      const { stderr, message } = error as { stderr?: string; message?: string };
      const detail = context.signal?.aborted === true ? 'the build timed out' : (stderr ?? message ?? '');
      throw new ImageBuildError(AGENTS_STEP, detail.trim().split('\n').slice(-3).join(' | '));
    }
  } else context.onStep?.(AGENTS_STEP, true);
  if (!existsSync(dir)) {
    throw new ImageBuildError(AGENTS_STEP, `no agents runtime at ${dir} (npm run template:agent builds it)`);
  }
  const fingerprint = existsSync(stamp)
    ? `stamp ${readFileSync(stamp, 'utf8').trim()}`
    : createHash('sha256').update(fingerprintOf(dir).join('\n')).digest('hex');
  return { dir, fingerprint };
}
