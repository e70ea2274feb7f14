/**
 * One agent template build (`sdk template build`, `AgentTemplate.build()`): the agents' runtime folder,
 * the image's layers, the image and sandboxd's image for it, then the manifest, so a template is there
 * whole or not at all. Steps are numbered against a total known before the first one starts.
 */
import type { AgentTemplateSpec, BuiltTemplate } from '../../protocol/template-api.js';
import { InvalidArgumentError } from '../../rules/errors.js';
import type { TemplateBuildOptions } from '../sandbox-driver.js';
import { agentManifest, type RecipeManifest } from './agent-template.js';
import { baseTemplate, isAgentManifest, readManifest, writeManifest } from './base-template.js';
import { ImageBuildError, type BuildContext } from './image-layers.js';
import type { ImageRecipe } from './image-recipe.js';

/** Builds (or finds) the root and sandboxd images of a recipe. */
export type ImageBuilder = (
  recipe: ImageRecipe,
  context: BuildContext & { readonly force?: boolean },
) => Promise<unknown>;

/** The build's last steps, after the layers. */
const IMAGE_STEP = 'image and sandboxd';

/** The facts a build reports of `manifest`. */
function builtFacts(manifest: RecipeManifest, built: boolean): BuiltTemplate {
  const agent = manifest.agent ?? { runtimeB: false, prefetch: false, kernelWarmup: false };
  return {
    name: manifest.name,
    base: manifest.base ?? manifest.name,
    sandboxdVersion: manifest.sandboxdVersion,
    recipeHash: manifest.recipeHash,
    memoryMb: manifest.memoryMb ?? 0,
    ...agent,
    built,
  };
}

/**
 * Builds the agent template `spec` describes under `stateDir` with `images`.
 *
 * @throws InvalidArgumentError when a template of the name has other options and `force` is false
 * @throws ImageBuildError naming the failed step
 */
export async function buildAgentTemplate(
  stateDir: string,
  spec: AgentTemplateSpec,
  options: TemplateBuildOptions,
  images: ImageBuilder,
): Promise<BuiltTemplate> {
  const base = baseTemplate(spec.base);
  if (base === undefined) {
    throw new InvalidArgumentError(`AgentTemplate: base: no base template named ${spec.base}`, {
      field: 'base',
    });
  }
  const wanted = agentManifest(spec, base);
  const existing = readManifest(stateDir, spec.name);
  const same = JSON.stringify(existing) === JSON.stringify(wanted);
  if (existing !== undefined && !same && options.force !== true) {
    const what = isAgentManifest(existing) ? 'an agent template of other options' : 'a template';
    throw new InvalidArgumentError(
      `AgentTemplate: name: ${spec.name} is ${what}; build with force to replace it`,
      { field: 'name' },
    );
  }
  // The agents' runtime, one step per layer, the image: every step is reported, cached ones too.
  const total = 1 + 1 + wanted.recipe.npm.length + (wanted.recipe.trees?.length ?? 0) + 1;
  let index = 0;
  let current = 'start';
  const step = (name: string, cached: boolean): void => {
    current = name;
    index += 1;
    options.onStep?.({ step: name, cached, index, total });
  };
  const force = options.force === true;
  try {
    await images(wanted.recipe, {
      onStep: step,
      force,
      ...(force ? { rebuild: ['tree'] as const } : {}),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    step(IMAGE_STEP, false);
    if (options.signal?.aborted === true) throw new ImageBuildError(IMAGE_STEP, 'the build timed out');
  } catch (error) {
    if (error instanceof ImageBuildError) throw error;
    throw new ImageBuildError(current, error instanceof Error ? error.message : String(error));
  }
  writeManifest(stateDir, wanted);
  return builtFacts(wanted, !same || force);
}
