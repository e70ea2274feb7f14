/**
 * The layers of a template image, each built once and cached by the hash of its inputs under
 * `/var/cache/sdk/layers/<hash>/root` (`SDK_LAYER_CACHE` moves it): the Debian layer (`mmdebstrap` of a
 * suite with its packages), one layer per npm package placed in the image, and host tools built with Go
 * (`goLayer`: runsc for the gVisor driver). A layer is built aside
 * and renamed into place, so a crash or a failed step leaves no half layer, and two builders at once
 * both succeed. A rebuild redoes only the layers whose inputs changed.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import {
  inputHash,
  type GoPlacement,
  type ImageRecipe,
  type NpmPlacement,
  type TreePlacement,
} from './image-recipe.js';

const run = promisify(execFile);

/** Where layers are cached. */
export function layerCacheDir(): string {
  return process.env.SDK_LAYER_CACHE ?? '/var/cache/sdk/layers';
}

/** A built layer: its hash and the root of its files. */
export interface Layer {
  readonly kind: 'debian' | 'npm' | 'tree' | 'go';
  readonly hash: string;
  readonly root: string;
}

/** A build step failed: which one, and the tool's last words (never an environment value). */
export class ImageBuildError extends Error {
  constructor(
    readonly step: string,
    detail: string,
  ) {
    super(`template build step "${step}" failed: ${detail}`);
    this.name = 'ImageBuildError';
  }
}

/**
 * The environment of the build tools: the host's tools, npm's home, proxies and trust stores, nothing
 * else (an operator key or cloud credentials in the caller's environment stay there).
 */
function toolEnv(): NodeJS.ProcessEnv {
  const kept = [
    'HOME',
    ...['http_proxy', 'https_proxy', 'no_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY'],
    // Trust stores a registry behind a proxy of the host's needs (paths, never credentials).
    ...['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'CURL_CA_BUNDLE'],
  ];
  return {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/bin',
    ...Object.fromEntries(
      kept.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])),
    ),
  };
}

/** Longest a build tool may run: a hung download fails its step (and leaves nothing) instead of hanging. */
const STEP_TIMEOUT_MS = 15 * 60_000;

/** Reports each layer's step as it starts (`cached: false`) or when the cache already holds it. */
export type StepListener = (step: string, cached: boolean) => void;

/** How a build runs: who hears of its steps, when it gives up, whether cached layers are made again. */
export interface BuildContext {
  readonly onStep?: StepListener;
  /** Aborts the running tool and fails the step (a build's `--timeout`). */
  readonly signal?: AbortSignal;
  /** Layers of these kinds are built again even when cached (`sdk template build --force`). */
  readonly rebuild?: readonly Layer['kind'][];
}

/** A folder a tree layer is made from, and what names its content (a build's stamp). */
export interface TreeSource {
  readonly dir: string;
  readonly fingerprint: string;
}

/** How build tools run: their environment, a time limit per step, the build's abort signal. */
function toolOptions(context: BuildContext): {
  maxBuffer: number;
  env: NodeJS.ProcessEnv;
  timeout: number;
  signal?: AbortSignal;
} {
  return {
    maxBuffer: 64 * 2 ** 20,
    env: toolEnv(),
    timeout: STEP_TIMEOUT_MS,
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  };
}

/** True once the build's signal has fired (a function: the signal changes under awaits). */
function aborted(context: BuildContext): boolean {
  return context.signal?.aborted === true;
}

/** The last lines of a failed tool's output. */
function tail(error: unknown): string {
  const { stderr, message } = error as { stderr?: string; message?: string };
  return (stderr ?? message ?? String(error)).trim().split('\n').slice(-3).join(' | ');
}

/** Where the layer named by `inputs` has (or would have) its files, built or not. */
export function layerRoot(kind: Layer['kind'], inputs: unknown): string {
  return join(layerCacheDir(), inputHash({ kind, inputs }), 'root');
}

/**
 * The layer named by `inputs`, built by `fill(root)` into a folder aside when it is not cached yet.
 */
async function cachedLayer(
  kind: Layer['kind'],
  inputs: unknown,
  step: string,
  fill: (root: string) => Promise<void>,
  context: BuildContext,
): Promise<Layer> {
  const hash = inputHash({ kind, inputs });
  const dir = join(layerCacheDir(), hash);
  const root = join(dir, 'root');
  const rebuild = context.rebuild?.includes(kind) === true;
  if (!rebuild && existsSync(join(dir, 'layer.json'))) {
    markUsed(dir);
    context.onStep?.(step, true);
    return { kind, hash, root };
  }
  context.onStep?.(step, false);
  if (aborted(context)) throw new ImageBuildError(step, 'the build timed out');
  // Root's only: images link to the layers' files, sandboxes never see the cache.
  mkdirSync(layerCacheDir(), { recursive: true, mode: 0o700 });
  chmodSync(layerCacheDir(), 0o700);
  const building = `${dir}.building-${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(building, { mode: 0o755 });
    await fill(join(building, 'root'));
    writeFileSync(join(building, 'layer.json'), `${JSON.stringify({ kind, inputs }, null, 2)}\n`);
    // A rebuilt layer replaces the cached one; images already laid keep their links to its old files.
    if (rebuild) rmSync(dir, { recursive: true, force: true });
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (aborted(context)) throw new ImageBuildError(step, 'the build timed out');
    if (existsSync(join(dir, 'layer.json'))) return { kind, hash, root }; // another builder won
    throw error instanceof ImageBuildError ? error : new ImageBuildError(step, tail(error));
  }
  return { kind, hash, root };
}

/** Marks a cached layer as used now (`collectUnusedLayers` keeps what was used lately). */
function markUsed(dir: string): void {
  const now = new Date();
  try {
    utimesSync(join(dir, 'layer.json'), now, now);
  } catch {
    // collected meanwhile: the next build makes it again
  }
}

/** How long a layer no build used is kept, and a build's leftover folder (a crashed build's). */
export const LAYER_RETENTION_MS = { unused: 30 * 24 * 60 * 60_000, building: 24 * 60 * 60_000 } as const;

/**
 * Removes cached layers no build has used for `LAYER_RETENTION_MS.unused`, and the folders of builds
 * that never finished, so a host that sees many recipes does not keep every layer. Images already laid
 * keep their files (hard links); a later build of a removed layer makes it again.
 */
export function collectUnusedLayers(now = Date.now()): void {
  let entries: string[];
  try {
    entries = readdirSync(layerCacheDir());
  } catch {
    return; // no cache yet
  }
  for (const entry of entries) {
    const dir = join(layerCacheDir(), entry);
    try {
      const building = entry.includes('.building-');
      const stamp = statSync(building ? dir : join(dir, 'layer.json')).mtimeMs;
      const keep = building ? LAYER_RETENTION_MS.building : LAYER_RETENTION_MS.unused;
      if (now - stamp > keep) rmSync(dir, { recursive: true, force: true });
    } catch {
      // not a layer (no layer.json) or removed meanwhile: left as it is
    }
  }
}

/**
 * The Debian layer: `mmdebstrap --variant=minbase` of the recipe's suite with its packages, every setuid
 * and setgid bit stripped but those of the recipe's `setuidPrograms`.
 */
export function debianLayer(recipe: ImageRecipe, context: BuildContext = {}): Promise<Layer> {
  const packages = [...recipe.debianPackages].sort();
  const kept = [...(recipe.setuidPrograms ?? [])].sort();
  const inputs = {
    suite: recipe.suite,
    mirror: recipe.mirror,
    extraSources: recipe.extraSources,
    variant: 'minbase',
    packages,
    // As it was before programs could be kept, so a recipe that keeps none keeps its layer's hash.
    setuid: kept.length === 0 ? 'stripped' : { kept },
  };
  const step = `debian ${recipe.suite} (${String(packages.length)} packages)`;
  return cachedLayer(
    'debian',
    inputs,
    step,
    async (root) => {
      await run(
        'mmdebstrap',
        [
          '--variant=minbase',
          '--mode=root',
          '--format=directory',
          '--quiet',
          ...(packages.length === 0 ? [] : [`--include=${packages.join(',')}`]),
          recipe.suite,
          root,
          recipe.mirror,
          ...recipe.extraSources,
        ],
        toolOptions(context),
      );
      // No setuid or setgid program in an image but those the recipe keeps (sudo, for the sandbox user
      // to become the sandbox's root): on the host each would widen root's surface.
      const keep = kept.flatMap((path) => ['!', '-path', join(root, path)]);
      await run(
        'find',
        [root, '-xdev', '-type', 'f', '-perm', '/6000', ...keep, '-exec', 'chmod', 'ug-s', '{}', '+'],
        toolOptions(context),
      );
      for (const path of kept) {
        const stat = lstatSync(join(root, path), { throwIfNoEntry: false });
        if (stat?.isFile() !== true || stat.uid !== 0 || (stat.mode & 0o4000) === 0)
          throw new ImageBuildError(step, `${path} is not a setuid-root program of the layer`);
      }
    },
    context,
  );
}

/** An npm package's chosen files, placed at their paths in the image. */
export function npmLayer(placement: NpmPlacement, context: BuildContext = {}): Promise<Layer> {
  return cachedLayer(
    'npm',
    placement,
    `npm ${placement.name}@${placement.version}`,
    async (root) => {
      const scratch = `${root}.npm`;
      mkdirSync(scratch, { recursive: true });
      try {
        await run(
          'npm',
          [
            'install',
            '--no-save',
            '--ignore-scripts',
            '--no-audit',
            '--no-fund',
            '--prefix',
            scratch,
            `${placement.name}@${placement.version}`,
          ],
          toolOptions(context),
        );
        for (const [from, expected] of Object.entries(placement.sha256)) {
          const actual = createHash('sha256')
            .update(readFileSync(join(scratch, 'node_modules', placement.name, from)))
            .digest('hex');
          if (actual !== expected)
            throw new ImageBuildError(
              `npm ${placement.name}@${placement.version}`,
              `${from} is not the pinned file`,
            );
        }
        for (const [from, to] of Object.entries(placement.files)) {
          const target = join(root, to);
          mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
          copyFileSync(join(scratch, 'node_modules', placement.name, from), target);
        }
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    },
    context,
  );
}

/** The go command's settings a build keeps from the caller (module proxy, caches; never a credential). */
const GO_SETTINGS = [
  'GOPATH',
  'GOCACHE',
  'GOMODCACHE',
  'GOPROXY',
  'GOSUMDB',
  'GONOSUMDB',
  'GONOPROXY',
  'GOPRIVATE',
];

/** The `go` command on the caller's PATH (Go is installed under /usr/local/go on many hosts). */
function goCommand(): string {
  for (const dir of (process.env.PATH ?? '').split(':').concat('/usr/local/go/bin')) {
    if (dir !== '' && existsSync(join(dir, 'go'))) return join(dir, 'go');
  }
  return 'go';
}

/**
 * A Go program built from the module proxy at its pinned version, without cgo (a cgo build links
 * dynamically, and runsc then dies inside its own chroot), by the pinned toolchain; the binary's
 * SHA-256 must be the pinned one. The layer holds it at `bin/<name>`.
 */
export function goLayer(placement: GoPlacement, context: BuildContext = {}): Promise<Layer> {
  const step = `go ${placement.package}@${placement.version}`;
  return cachedLayer(
    'go',
    placement,
    step,
    async (root) => {
      const bin = join(root, 'bin');
      mkdirSync(bin, { recursive: true, mode: 0o755 });
      const options = toolOptions(context);
      const settings: Record<string, string> = {};
      for (const name of GO_SETTINGS) {
        const value = process.env[name];
        if (value !== undefined) settings[name] = value;
      }
      await run(goCommand(), ['install', '-trimpath', `${placement.package}@${placement.version}`], {
        ...options,
        env: {
          ...options.env,
          ...settings,
          GOBIN: bin,
          CGO_ENABLED: '0',
          GOTOOLCHAIN: placement.toolchain,
          GOFLAGS: '',
        },
      });
      const name = placement.package.slice(placement.package.lastIndexOf('/') + 1);
      const actual = createHash('sha256')
        .update(readFileSync(join(bin, name)))
        .digest('hex');
      if (actual !== placement.sha256)
        throw new ImageBuildError(step, `the binary is not the pinned build (its SHA-256 is ${actual})`);
    },
    context,
  );
}

/**
 * Copies `from` into `to` as hard links (copies across file systems), modes kept, leaving out the
 * paths (relative to `top`) in `without`; symbolic links, devices and fifos are skipped (the agents'
 * build makes none).
 */
function linkTree(from: string, to: string, without: ReadonlySet<string>, top = from): void {
  mkdirSync(to, { recursive: true });
  chmodSync(to, lstatSync(from).mode & 0o7777);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (without.has(relative(top, source))) continue;
    const target = join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target, without, top);
    else if (entry.isFile()) {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
        chmodSync(target, lstatSync(source).mode & 0o7777);
      }
    }
  }
}

/** A built folder (`TreeSource`) at its place in the image, without the paths the placement leaves out. */
export function treeLayer(
  placement: TreePlacement,
  source: TreeSource,
  context: BuildContext = {},
): Promise<Layer> {
  const without = [...placement.without].sort();
  return cachedLayer(
    'tree',
    { name: placement.name, fingerprint: source.fingerprint, to: placement.to, without },
    `${placement.name} at ${placement.to}${without.length === 0 ? '' : ` (without ${without.join(', ')})`}`,
    (root) => {
      linkTree(source.dir, join(root, placement.to), new Set(without));
      return Promise.resolve();
    },
    context,
  );
}

/**
 * Every layer of `recipe`, in the order they are laid over each other; `trees` gives the folder each
 * tree placement is made from.
 *
 * @throws ImageBuildError when a tree placement has no source
 */
export async function recipeLayers(
  recipe: ImageRecipe,
  context: BuildContext = {},
  trees: Readonly<Record<string, TreeSource>> = {},
): Promise<Layer[]> {
  const layers = [await debianLayer(recipe, context)];
  for (const placement of recipe.npm) layers.push(await npmLayer(placement, context));
  for (const placement of recipe.trees ?? []) {
    const source = trees[placement.name];
    if (source === undefined) throw new ImageBuildError(placement.name, 'its folder is not built');
    layers.push(await treeLayer(placement, source, context));
  }
  return layers;
}
