/**
 * The read-only files every sandbox of this host binds: each template's `/etc` and sandboxd's runtime
 * (the package's `dist/`, the npm packages sandboxd imports, `package.json`), copied once into
 * `/run/sdk/images/<kind>-<content hash>/`. Two reasons: the sandbox's root is a host uid of its own range,
 * which may not search the folders above a state folder or a checkout; and a sandbox then sees no host
 * path, not even in `/proc/self/mountinfo` (a bind shows its source's path inside its filesystem, here
 * only `/run/sdk/images/...`, or `/sdk/images/...` where /run is a tmpfs). Images are named by content, shared by every driver
 * on the host, and gone at boot with `/run`.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** Where images live. */
const IMAGES_DIR = '/run/sdk/images';

/** The npm packages sandboxd imports (the rest of `dependencies` serve the SDK and control plane). */
const SANDBOXD_PACKAGES = ['zod', 'undici', 'xstate', 'rxjs'];

/** Every file under `dir` (symlinks as their target), sorted, as [relative path, content]. */
function filesOf(dir: string, prefix = ''): [string, Buffer | string][] {
  const out: [string, Buffer | string][] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(dir, entry.name);
    const rel = `${prefix}/${entry.name}`;
    if (entry.isSymbolicLink()) out.push([rel, `->${readlinkSync(path)}`]);
    else if (entry.isDirectory()) out.push(...filesOf(path, rel));
    else if (entry.isFile()) out.push([rel, readFileSync(path)]);
  }
  return out;
}

/** The npm packages sandboxd needs, with their own dependencies, by name. */
function packageClosure(nodeModules: string): string[] {
  const found = new Set<string>();
  const pending = [...SANDBOXD_PACKAGES];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (found.has(name)) continue;
    found.add(name);
    const manifest = JSON.parse(readFileSync(join(nodeModules, name, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    pending.push(...Object.keys(manifest.dependencies ?? {}));
  }
  return [...found].sort();
}

function versionOf(nodeModules: string, name: string): string {
  return (JSON.parse(readFileSync(join(nodeModules, name, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** Makes every folder of `dir` 0755 and every file at least 0644: the sandbox's root reads the image. */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) openUp(path);
    else if (entry.isFile()) chmodSync(path, statSync(path).mode | 0o644);
  }
}

/**
 * The image named by `hash` under `kind`, filled by `fill` the first time: built aside and renamed into
 * place, so a reader never sees half an image and two drivers building at once both succeed.
 */
function materialize(kind: string, hash: string, fill: (dir: string) => void): string {
  const dir = join(IMAGES_DIR, `${kind}-${hash.slice(0, 32)}`);
  if (existsSync(join(dir, '.complete'))) return dir;
  mkdirSync(IMAGES_DIR, { recursive: true });
  for (let path = IMAGES_DIR; path !== '/run'; path = dirname(path)) chmodSync(path, 0o755);
  const building = `${dir}.${randomBytes(4).toString('hex')}`;
  try {
    fill(building);
    writeFileSync(join(building, '.complete'), '');
    openUp(building);
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, '.complete'))) throw error; // else another driver built it meanwhile
  }
  return dir;
}

/** sandboxd's runtime from the package at `packageRoot`, ready to bind at /opt/sdk. */
export function ensureSdkImage(packageRoot: string): string {
  const nodeModules = join(packageRoot, 'node_modules');
  const packages = packageClosure(nodeModules);
  const hash = createHash('sha256');
  for (const [rel, content] of filesOf(join(packageRoot, 'dist'))) hash.update(rel).update(content);
  hash.update(readFileSync(join(packageRoot, 'package.json')));
  for (const name of packages) hash.update(`${name}@${versionOf(nodeModules, name)}`);
  return materialize('sdk', hash.digest('hex'), (dir) => {
    cpSync(join(packageRoot, 'dist'), join(dir, 'dist'), { recursive: true });
    cpSync(join(packageRoot, 'package.json'), join(dir, 'package.json'));
    for (const name of packages) {
      cpSync(join(nodeModules, name), join(dir, 'node_modules', name), {
        recursive: true,
        verbatimSymlinks: true,
      });
    }
  });
}

/** A template's `/etc` folder, ready to bind at /etc. */
export function ensureEtcImage(etcDir: string): string {
  const hash = createHash('sha256');
  for (const [rel, content] of filesOf(etcDir)) hash.update(rel).update(content);
  return materialize('etc', hash.digest('hex'), (dir) => {
    cpSync(etcDir, dir, { recursive: true, verbatimSymlinks: true });
  });
}
