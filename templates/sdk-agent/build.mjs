#!/usr/bin/env node
/**
 * Builds the `sdk-agent` template's `/opt/agents` (`npm run template:agent`): `build/opt-agents/bin/`
 * with `opencode` (runtime_a, npm `opencode-ai`, pinned in package-lock.json) and `rg` (Debian's
 * ripgrep, which opencode's grep and glob tools need). The namespace driver binds that folder read-only
 * at /opt/agents in sandboxes of template `sdk-agent`, so it is self-contained: real files (hard links
 * or copies), never symlinks; folders and files 0755.
 *
 * Only the registries this machine reaches: npm, and the Debian mirrors (`apt-get download`, no install).
 * Idempotent: `build/stamp` holds the hash of package-lock.json and this script's version, and nothing
 * runs when it matches. The folder is built aside and renamed into place, so a failed build leaves the
 * previous one (or none), never half of one; the failed step is named.
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
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Bump when the layout this script builds changes: the stamp then no longer matches. */
const SCRIPT_VERSION = 1;

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

/** The version package-lock.json pins for opencode-ai. */
function lockedOpencodeVersion(lock) {
  const version = JSON.parse(lock).packages?.['node_modules/opencode-ai']?.version;
  if (typeof version !== 'string') throw new Error('package-lock.json pins no opencode-ai');
  return version;
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
  const installed = JSON.parse(readFileSync(join(NODE_MODULES, 'opencode-ai', 'package.json'), 'utf8'));
  if (installed.version !== lockedOpencodeVersion(lock)) {
    throw new Error(
      `installed opencode-ai ${installed.version}, the lock pins ${lockedOpencodeVersion(lock)}`,
    );
  }
  if (!existsSync(OPENCODE)) {
    throw new Error(`opencode-ai's postinstall linked no binary at ${OPENCODE} (are npm scripts ignored?)`);
  }
  writeFileSync(INSTALLED, sha256(lock));
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

/** Both binaries start; opencode is the pinned version (its files go to a home of its own, then removed). */
function checkBinaries(bin, version) {
  const home = mkdtempSync(join(tmpdir(), 'sdk-agent-check-'));
  try {
    const xdg = ['CONFIG', 'DATA', 'CACHE', 'STATE'].map((kind) => [`XDG_${kind}_HOME`, home]);
    const env = { PATH: '/usr/bin:/bin', HOME: home, ...Object.fromEntries(xdg) };
    const printed = run(join(bin, 'opencode'), ['--version'], { env }).trim();
    if (printed !== version) throw new Error(`opencode --version printed ${printed}, expected ${version}`);
    run(join(bin, 'rg'), ['--version'], { env });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function build() {
  const lock = step('read package-lock.json', () => readFileSync(LOCK, 'utf8'));
  const stamp = `${sha256(lock)} ${String(SCRIPT_VERSION)}\n`;
  const built = ['opencode', 'rg'].every((name) => existsSync(join(TARGET, 'bin', name)));
  if (built && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) {
    console.log('template:agent: up to date');
    return;
  }
  const installed = existsSync(INSTALLED) && readFileSync(INSTALLED, 'utf8') === sha256(lock);
  if (!installed || !existsSync(OPENCODE)) step('npm ci (opencode-ai)', () => install(lock));

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
    step('apt-get download ripgrep', () => fetchRipgrep(join(bin, 'rg')));
    for (const name of ['opencode', 'rg']) chmodSync(join(bin, name), 0o755);
    step('check the binaries', () => checkBinaries(bin, lockedOpencodeVersion(lock)));
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
