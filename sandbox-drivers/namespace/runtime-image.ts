/**
 * The read-only files every sandbox of this host binds: each template's root filesystem
 * (`image-root.ts`), sandboxd's runtime (its bundle from the package's `dist/sandboxd/`, with the V8
 * code cache a warm-up run writes), copied once into `/run/sdk/images/<kind>-<content hash>/`. Two
 * reasons: the sandbox's root is a host uid of its own range,
 * which may not search the folders above a state folder or a checkout; and a sandbox then sees no host
 * path, not even in `/proc/self/mountinfo` (a bind shows its source's path inside its filesystem, here
 * only `/run/sdk/images/...`, or `/sdk/images/...` where /run is a tmpfs). Images are named by content,
 * shared by every driver on the host, collected an hour after their last use when no sandbox binds them,
 * and gone at boot where /run is a tmpfs.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { SANDBOXD_NODE_FLAGS } from '../../protocol/sandboxd-node.js';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { BOX_RESOLV_CONF, GVISOR_EXEC } from '../gvisor/gvisor-exec-path.js';
import { HOST_TOOLS_ENV, SDK_EXEC } from './sandboxd-process.js';
import { PTY_HELPER_NAME } from '../../protocol/process-events.js';

/**
 * The static helpers of the image (`sdk-exec`, `gvisor-exec` for gVisor boxes, and `sdk-pty`, which runs
 * a terminal inside either).
 */
const HELPERS: readonly string[] = [SDK_EXEC, GVISOR_EXEC, PTY_HELPER_NAME];

/** Where images live. */
const IMAGES_DIR = '/run/sdk/images';

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
export function materialize(
  kind: string,
  hash: string,
  fill: (dir: string) => void,
  options: { readonly openUp?: boolean } = {},
): string {
  const dir = join(IMAGES_DIR, `${kind}-${hash.slice(0, 32)}`);
  // A root image is host root's alone (0700): sandboxes see it through their views and sandboxd's root,
  // both mounted by host root, and a host account never runs its setuid programs (sudo).
  const topMode = options.openUp === false ? 0o700 : 0o755;
  if (keepImage(dir)) {
    chmodSync(dir, topMode); // one built before images were closed
    return dir; // in use now: `collectUnusedImages` leaves it alone
  }
  mkdirSync(IMAGES_DIR, { recursive: true });
  for (let path = IMAGES_DIR; path !== '/run'; path = dirname(path)) chmodSync(path, 0o755);
  const building = `${dir}.${randomBytes(4).toString('hex')}`;
  try {
    fill(building);
    writeFileSync(join(building, '.complete'), '');
    // A root image keeps its files' own modes (what is not world-readable stays so for the sandbox).
    if (options.openUp !== false) openUp(building);
    else chmodSync(building, topMode);
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, '.complete'))) throw error; // else another driver built it meanwhile
  }
  return dir;
}

/** How long an image no sandbox binds is kept after its last use (a driver about to launch from it). */
const UNUSED_IMAGE_MS = 60 * 60 * 1000;

/** Names of the images some process on the host sees mounted (a sandbox binds them). */
function mountedImages(): Set<string> {
  const found = new Set<string>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/mountinfo`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    for (const match of text.matchAll(/\/sdk\/images\/([^/\s.,]+)/g)) found.add(match[1] ?? '');
  }
  return found;
}

/**
 * Removes images (and half-built ones) that no sandbox on the host binds and that no driver used in the
 * last hour, so a host that sees many builds does not keep every one. A driver whose image went finds
 * out before its next launch and builds it again (`NamespaceDriver`).
 */
export function collectUnusedImages(): void {
  let entries: string[];
  try {
    entries = readdirSync(IMAGES_DIR);
  } catch {
    return;
  }
  const mounted = mountedImages();
  const cutoff = Date.now() - UNUSED_IMAGE_MS;
  for (const entry of entries) {
    const path = join(IMAGES_DIR, entry);
    if (mounted.has(entry.split('.')[0] ?? '')) continue;
    try {
      if (statSync(path).mtimeMs < cutoff) rmSync(path, { recursive: true, force: true });
    } catch {
      // removed by another driver meanwhile
    }
  }
}

/** Marks an image as used now; false when it is no longer on the host (collected). */
export function keepImage(dir: string): boolean {
  if (!existsSync(join(dir, '.complete'))) return false;
  const now = new Date();
  utimesSync(dir, now, now);
  return true;
}

/**
 * sandboxd's runtime from the package at `packageRoot`, ready to bind at /opt/sdk: the `.cjs` files of
 * `dist/sandboxd/` (daemon/build.mjs: the bundle and its starter), `sdk-exec` and `gvisor-exec`, a gVisor box's `resolv.conf`, and the bundle's V8 code cache,
 * written when the image is built by a warm-up run of the Node that runs sandboxd in sandboxes (`node`:
 * the template image's, run here on the host). The image is named by the files and that Node's
 * identity: V8 refuses a cache another build of it wrote.
 */
export function ensureSdkImage(packageRoot: string, node: string): string {
  const bundleDir = join(packageRoot, 'dist', 'sandboxd');
  checkBundle(packageRoot, bundleDir);
  const files = readdirSync(bundleDir)
    .filter((name) => name.endsWith('.cjs') || HELPERS.includes(name))
    .sort();
  const hash = createHash('sha256');
  for (const name of files) hash.update(`${name}\0`).update(readFileSync(join(bundleDir, name)));
  const identity = statSync(node);
  hash.update(`${node} ${String(identity.size)} ${String(identity.mtimeMs)} ${String(identity.ino)}`);
  hash.update(SANDBOXD_NODE_FLAGS.join(' ')); // the cache is V8's under these flags
  hash.update(BOX_RESOLV_CONF.text);
  return materialize('sdk', hash.digest('hex'), (dir) => {
    mkdirSync(dir);
    for (const name of files) copyFileSync(join(bundleDir, name), join(dir, name));
    writeFileSync(join(dir, BOX_RESOLV_CONF.name), BOX_RESOLV_CONF.text);
    for (const helper of HELPERS) chmodSync(join(dir, helper), 0o755);
    writeCodeCache(dir, node);
  });
}

/**
 * Refuses a missing bundle, and one older than `dist/daemon/` (tsc ran, daemon/build.mjs did not): every
 * sandbox would run an earlier sandboxd than the package's.
 */
function checkBundle(packageRoot: string, bundleDir: string): void {
  const bundle = join(bundleDir, 'sandboxd.cjs');
  const compiled = join(packageRoot, 'dist', 'daemon', 'main.js');
  if (!existsSync(bundle)) throw new Error(`no sandboxd bundle at ${bundle}: run npm run build`);
  if (existsSync(compiled) && statSync(compiled).mtimeMs > statSync(bundle).mtimeMs) {
    throw new Error(`${bundle} is older than ${compiled}: run node daemon/build.mjs (npm run build does)`);
  }
}

/**
 * Runs the image's sandboxd once with `--write-code-cache` (daemon/sandboxd-start.ts): its start on
 * loopback, port 0, no home, the cache written into the image, the process gone before it listens.
 * The launch chain's environment only: `NODE_OPTIONS` and the like would change V8's flags, and V8
 * refuses a cache written under other flags.
 */
function writeCodeCache(dir: string, node: string): void {
  const settings = { token: randomBytes(24).toString('hex'), host: '127.0.0.1', port: 0 };
  const run = spawnSync(node, [...SANDBOXD_NODE_FLAGS, join(dir, 'start.cjs'), '--write-code-cache'], {
    input: JSON.stringify(settings),
    env: HOST_TOOLS_ENV,
    stdio: ['pipe', 'ignore', 'pipe'],
    timeout: 60_000,
  });
  if (run.status !== 0) {
    const reason = run.error?.message ?? run.stderr.toString('utf8').trim();
    throw new Error(`sandboxd's warm-up run failed (${String(run.status ?? run.signal)}): ${reason}`);
  }
}
