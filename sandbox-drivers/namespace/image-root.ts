/**
 * A template's root filesystem on this host: its recipe's layers laid over each other (later ones win)
 * and its files written last, as an image under `/run/sdk/images/template-<hash>` (`runtime-image.ts`:
 * named by content, built aside and renamed into place, collected when unused). Files are hard links
 * into the layer cache where the file system allows, so an image costs folders, not copies; a file the
 * recipe writes replaces its link, so no layer is ever changed.
 */
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  linkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { inputHash, type ImageRecipe } from './image-recipe.js';
import { recipeLayers, type BuildContext, type Layer, type TreeSource } from './image-layers.js';
import { materialize } from './runtime-image.js';

/** Lays the tree `from` over `to`: folders merged, files and links replaced, devices and fifos skipped. */
export function layOver(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      const existing = lstatSync(target, { throwIfNoEntry: false });
      if (existing !== undefined && !existing.isDirectory()) rmSync(target, { force: true });
      layOver(source, target);
      chmodSync(target, lstatSync(source).mode & 0o7777); // /root stays 0700, /tmp 1777
    } else if (entry.isSymbolicLink() || entry.isFile()) {
      rmSync(target, { force: true, recursive: true });
      if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
      else {
        try {
          linkSync(source, target);
        } catch {
          copyFileSync(source, target); // another file system
        }
      }
    }
  }
}

/**
 * Writes `recipe`'s files into the image at `root` with their modes (0644 unless the recipe says),
 * whatever the builder's umask, and `/etc/environment` from its environment. A file that is a link into
 * a layer is replaced, never written through.
 */
export function writeImageFiles(root: string, recipe: Pick<ImageRecipe, 'files' | 'modes' | 'env'>): void {
  for (const [path, content] of Object.entries(recipe.files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    rmSync(target, { force: true });
    writeFileSync(target, content, { mode: 0o600 }); // no wider than its mode while it is written
    chmodSync(target, recipe.modes?.[path] ?? 0o644);
  }
  const environment = Object.entries(recipe.env).map(([name, value]) => `${name}=${value}\n`);
  rmSync(join(root, 'etc', 'environment'), { force: true });
  writeFileSync(join(root, 'etc', 'environment'), environment.join(''), { mode: 0o644 });
  chmodSync(join(root, 'etc', 'environment'), 0o644);
}

/** How layers are laid into an image; a change here makes every image again. */
const IMAGE_FORMAT = 2;

/** What a built template image is. */
export interface RootImage {
  /** The root folder to bind from. */
  readonly dir: string;
  /** The hash naming it: its layers' and its files'. */
  readonly hash: string;
  readonly layers: readonly Layer[];
}

/**
 * The root image of `recipe`, its layers built (or taken from the cache) first; `trees` gives the
 * folders of its tree placements.
 *
 * @throws ImageBuildError naming the step that failed; nothing half-built is left
 */
export async function ensureRootImage(
  recipe: ImageRecipe,
  context: BuildContext = {},
  trees: Readonly<Record<string, TreeSource>> = {},
): Promise<RootImage> {
  const layers = await recipeLayers(recipe, context, trees);
  const hash = inputHash({
    layers: layers.map((layer) => layer.hash),
    files: recipe.files,
    modes: recipe.modes,
    env: recipe.env,
    format: IMAGE_FORMAT,
  });
  const dir = materialize(
    'template',
    hash,
    (building) => {
      for (const layer of layers) layOver(layer.root, building);
      writeImageFiles(building, recipe);
    },
    { openUp: false },
  );
  return { dir, hash, layers };
}
