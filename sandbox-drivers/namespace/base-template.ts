/**
 * The base templates of the namespace driver (DESIGN.md §4, issue 14): each names its root filesystem
 * by a recipe (`image-recipe.ts`: Debian packages from the registry, Node from npm, our own `/etc` files),
 * built into an image of its own (`image-root.ts`); nothing of the host's `/usr` or `/etc` is in a
 * sandbox. A manifest records the sandboxd version, the recipe (its inputs) and the recipe's hash.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOXD_VERSION } from '../../protocol/versions.js';
import { AGENT_TEMPLATE } from '../../rules/names.js';
import type { TemplateManifest } from '../sandbox-driver.js';
import { BASE_RECIPE, inputHash, type ImageRecipe } from './image-recipe.js';

/** A base template's manifest as written: the driver's facts, and what its image is built from. */
export interface BaseManifest extends TemplateManifest {
  readonly recipe: ImageRecipe;
  readonly recipeHash: string;
}

/**
 * The templates built here: `sdk-base` (egress always open), `sdk-base-caps` (can close egress), and
 * `sdk-agent`, which is `sdk-base-caps` plus the agents' runtime the driver binds at /opt/agents (built
 * by `npm run template:agent`, see templates/README.md). All three stand on `BASE_RECIPE`.
 */
export const BASE_TEMPLATES: readonly BaseManifest[] = [
  { name: 'sdk-base', canCloseEgress: false },
  { name: 'sdk-base-caps', canCloseEgress: true },
  { name: AGENT_TEMPLATE, canCloseEgress: true },
].map((template) => ({
  ...template,
  sandboxdVersion: SANDBOXD_VERSION,
  recipe: BASE_RECIPE,
  recipeHash: inputHash(BASE_RECIPE),
}));

/** Where a template's root of files lives under `stateDir`. */
function templateDir(stateDir: string, name: string): string {
  return join(stateDir, 'templates', name);
}

/**
 * Writes the base templates' manifests under `stateDir`; one that already names this sandboxd version and
 * recipe is left as it is. Their images are built when first needed (`NamespaceDriver.prepare`).
 */
export function ensureBaseTemplates(stateDir: string): void {
  for (const manifest of BASE_TEMPLATES) {
    const dir = templateDir(stateDir, manifest.name);
    const manifestFile = join(dir, 'manifest.json');
    const text = JSON.stringify(manifest);
    if (existsSync(manifestFile) && readFileSync(manifestFile, 'utf8') === text) continue;
    rmSync(dir, { recursive: true, force: true }); // an older template's files (its /etc) go with it
    mkdirSync(dir, { recursive: true });
    writeFileSync(manifestFile, text);
  }
}

/**
 * The recipe of a template's image, from its manifest; a manifest that names none (written before
 * images had recipes) stands on the base recipe.
 */
export function recipeOf(manifest: TemplateManifest): ImageRecipe {
  return (manifest as Partial<BaseManifest>).recipe ?? BASE_RECIPE;
}

/** The manifest of a template, if it exists; a name that would leave `templates/` names none. */
export function readManifest(stateDir: string, name: string): TemplateManifest | undefined {
  if (name.includes('/') || name === '.' || name === '..') return undefined;
  try {
    return JSON.parse(
      readFileSync(join(templateDir(stateDir, name), 'manifest.json'), 'utf8'),
    ) as TemplateManifest;
  } catch {
    return undefined;
  }
}
