/**
 * The templates of the namespace driver under `<stateDir>/templates/<name>/manifest.json` (DESIGN.md §4,
 * issue 14). Each names its root filesystem by a recipe (`image-recipe.ts`: Debian packages from the
 * registry, Node from npm, our own `/etc` files; the agents' runtime for agent templates), built into an
 * image of its own (`image-root.ts`); nothing of the host's `/usr` or `/etc` is in a sandbox. A manifest
 * records the sandboxd version, the recipe (its inputs) and the recipe's hash.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOXD_VERSION } from '../../protocol/versions.js';
import { AGENT_TEMPLATE } from '../../rules/names.js';
import type { TemplateManifest } from '../sandbox-driver.js';
import {
  agentManifest,
  agentSpecOf,
  DEFAULT_AGENT_SPEC,
  type AgentFacts,
  type RecipeManifest,
} from './agent-template.js';
import { BASE_RECIPE, inputHash, type ImageRecipe } from './image-recipe.js';

/**
 * The base templates, which the driver makes itself: `sdk-base` (egress always open) and `sdk-base-caps`
 * (can close egress), both on `BASE_RECIPE`. Agent templates stand on one of them.
 */
export const BASE_TEMPLATES: readonly RecipeManifest[] = [
  { name: 'sdk-base', canCloseEgress: false },
  { name: 'sdk-base-caps', canCloseEgress: true },
].map((template) => ({
  ...template,
  sandboxdVersion: SANDBOXD_VERSION,
  recipe: BASE_RECIPE,
  recipeHash: inputHash(BASE_RECIPE),
}));

/** The base template named `name`. */
export function baseTemplate(name: string): RecipeManifest | undefined {
  return BASE_TEMPLATES.find((template) => template.name === name);
}

/** Where a template's manifest lives under `stateDir`. */
function manifestFile(stateDir: string, name: string): string {
  return join(stateDir, 'templates', name, 'manifest.json');
}

/** Writes `manifest` in place of the template's manifest at once (aside, then renamed). */
export function writeManifest(stateDir: string, manifest: RecipeManifest): void {
  const file = manifestFile(stateDir, manifest.name);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(`${file}.new`, JSON.stringify(manifest));
  renameSync(`${file}.new`, file);
}

/** True when `manifest` describes an agent template. */
export function isAgentManifest(
  manifest: TemplateManifest | undefined,
): manifest is RecipeManifest & { readonly agent: AgentFacts } {
  return (manifest as Partial<RecipeManifest> | undefined)?.agent !== undefined;
}

/**
 * Writes the base templates' manifests under `stateDir` (one that already says the same is left as it
 * is), and `sdk-agent`'s: the default agent template when there is none, or the same options again
 * when an older sandboxd wrote it. Their images are built when first needed (`NamespaceDriver.prepare`).
 */
export function ensureBaseTemplates(stateDir: string): void {
  for (const manifest of BASE_TEMPLATES) {
    const file = manifestFile(stateDir, manifest.name);
    if (existsSync(file) && readFileSync(file, 'utf8') === JSON.stringify(manifest)) continue;
    rmSync(join(file, '..'), { recursive: true, force: true }); // an older template's files go with it
    writeManifest(stateDir, manifest);
  }
  const agent = readManifest(stateDir, AGENT_TEMPLATE);
  const spec = isAgentManifest(agent) ? agentSpecOf(agent) : DEFAULT_AGENT_SPEC;
  const wanted = agentManifest(spec, baseTemplate(spec.base) ?? (BASE_TEMPLATES[1] as RecipeManifest));
  if (JSON.stringify(agent) !== JSON.stringify(wanted)) writeManifest(stateDir, wanted);
}

/**
 * The recipe of a template's image, from its manifest; a manifest that names none (written before
 * images had recipes) stands on the base recipe.
 */
export function recipeOf(manifest: TemplateManifest): ImageRecipe {
  return (manifest as Partial<RecipeManifest>).recipe ?? BASE_RECIPE;
}

/** The manifest of a template, if it exists; a name that would leave `templates/` names none. */
export function readManifest(stateDir: string, name: string): TemplateManifest | undefined {
  if (name.includes('/') || name === '.' || name === '..') return undefined;
  try {
    return JSON.parse(readFileSync(manifestFile(stateDir, name), 'utf8')) as TemplateManifest;
  } catch {
    return undefined;
  }
}
