/**
 * Package tools from the host laid into a running sandbox for tests: pip, Python's `requests` and
 * `httpx` (with the packages they need), npm and uv. The template images have none of them and a test
 * reaches no registry, so they are the CI host's own: its Python's packages (pure Python only: the
 * sandbox's interpreter is another build), its Node's npm, the uv binary that `.ci/run` installs
 * from PyPI, and Debian's cargo unpacked from the `.deb` files `.ci/run` downloads. One tar.gz is built per test process, on first use, and removed when the process exits.
 */
import { execFile } from 'node:child_process';
import {
  createReadStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Sandbox } from '../../../sdk/sandbox.js';

const execFileAsync = promisify(execFile);

/** Where the tools are extracted in a sandbox (writable by the sandbox user). */
export const SANDBOX_TOOLS_DIR = '/tmp/test-tools';

/** The uv that `.ci/run` installs from PyPI (the same pin). */
export const UV_PIN = 'uv==0.13.9';

/**
 * Debian's cargo and the libraries of its that the template lacks, as `.deb` files `.ci/run` downloads
 * (`apt-get download`, nothing installed on the host); unpacked, never installed, in the sandbox.
 */
export const CARGO_DEBS = [
  'cargo',
  'libgit2-1.5',
  'libhttp-parser2.9',
  'libmbedcrypto7',
  'libmbedx509-1',
  'libmbedtls14',
  'libssh2-1',
  'libcurl3-gnutls',
] as const;
/** Where `.ci/run` puts them (`SDK_TEST_DEBS` overrides). */
export const CARGO_DEBS_DIR = process.env.SDK_TEST_DEBS ?? '/var/cache/sdk-test-debs';

/** The Python distributions laid in, with everything they require on the host's Python. */
const PYTHON_ROOTS = ['pip', 'requests', 'httpx'];

/** Commands for the tools in a sandbox, as prefixes of a shell command run there. */
export interface SandboxTools {
  /** The folder the tools are in. */
  readonly dir: string;
  /** The folder of the Python packages, for `PYTHONPATH`. */
  readonly pythonPath: string;
  /** `python3` seeing the packages: `${tools.python} -c 'import requests'`. */
  readonly python: string;
  /** pip: `${tools.pip} install ...`. */
  readonly pip: string;
  /** npm on the sandbox's Node: `${tools.npm} install ...`. */
  readonly npm: string;
  /** The uv binary: `${tools.uv} pip install ...`. */
  readonly uv: string;
  /** Debian's cargo with its libraries: `${tools.cargo} generate-lockfile`. */
  readonly cargo: string;
}

/** One Python distribution in the bundle. */
export interface BundledDistribution {
  readonly name: string;
  readonly version: string;
}

/** The tar.gz on the host and what it holds. */
export interface SandboxToolsBundle {
  readonly file: string;
  readonly bytes: number;
  /** The host Python's `major.minor`, which the sandbox's must equal. */
  readonly python: string;
  readonly distributions: readonly BundledDistribution[];
  readonly npmVersion: string;
  readonly uvVersion: string;
}

/**
 * Prints, as JSON, the host Python's version and, for each distribution named on the command line and
 * each it requires (markers evaluated for this interpreter), the files its RECORD lists under its
 * folder (its `.dist-info` among them), less caches, compiled extensions and pip's Windows launchers. A distribution whose
 * `.so` is left out runs its pure-Python fallback (charset_normalizer's `md.py`); the bundle is
 * checked to import in the sandbox.
 */
const CLOSURE_SCRIPT = `
import importlib.metadata as md, json, os, sys
from pip._vendor.packaging.requirements import Requirement
todo, seen, out = list(sys.argv[1:]), set(), []
while todo:
    dist = md.distribution(todo.pop())
    name = dist.metadata["Name"].lower().replace("_", "-")
    if name in seen:
        continue
    seen.add(name)
    if dist.files is None:
        sys.exit(name + " has no RECORD of its files")
    base = os.path.realpath(str(dist.locate_file("")))
    def kept(f):
        return (not f.startswith("..") and "__pycache__" not in f.split("/")
                and not f.endswith((".so", ".pyc", ".exe")) and os.path.isfile(os.path.join(base, f)))
    files = [str(f) for f in dist.files if kept(str(f))]
    out.append({"name": name, "version": dist.version, "base": base, "files": files})
    for spec in dist.requires or []:
        req = Requirement(spec)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            todo.append(req.name)
print(json.dumps({"python": "%d.%d" % sys.version_info[:2], "dists": out}))
`;

interface Closure {
  readonly python: string;
  readonly dists: readonly (BundledDistribution & { readonly base: string; readonly files: string[] })[];
}

async function output(command: string, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync(command, args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** The host's uv binary, installed by `.ci/run` with pip. */
async function findUv(): Promise<string> {
  try {
    return await output('python3', ['-c', 'import uv; print(uv.find_uv_bin())']);
  } catch {
    throw new Error(`sandbox tools: no uv on the host's python3: python3 -m pip install '${UV_PIN}'`);
  }
}

/** Debian's cargo and its libraries unpacked under `dir/cargo-root` (`usr/bin/cargo`, `usr/lib/…`). */
async function unpackCargo(dir: string): Promise<string> {
  const root = join(dir, 'cargo-root');
  const debs = existsSync(CARGO_DEBS_DIR)
    ? readdirSync(CARGO_DEBS_DIR).filter((f) => f.endsWith('.deb'))
    : [];
  const missing = CARGO_DEBS.filter((name) => !debs.some((deb) => deb.startsWith(`${name}_`)));
  if (missing.length > 0) {
    throw new Error(
      `sandbox tools: no ${missing.join(', ')} in ${CARGO_DEBS_DIR}: mkdir -p ${CARGO_DEBS_DIR} && cd ${CARGO_DEBS_DIR} && apt-get download ${CARGO_DEBS.join(' ')}`,
    );
  }
  for (const name of CARGO_DEBS) {
    const deb = debs.find((file) => file.startsWith(`${name}_`)) ?? '';
    await execFileAsync('dpkg-deb', ['-x', join(CARGO_DEBS_DIR, deb), root]);
  }
  return root;
}

/** The host's npm package folder. */
async function findNpm(): Promise<string> {
  const dir = join(await output('npm', ['root', '-g']), 'npm');
  if (!existsSync(join(dir, 'bin', 'npm-cli.js'))) throw new Error(`sandbox tools: no npm at ${dir}`);
  return dir;
}

/** Appends to the tar `archive` (made by the first call) the `names` under `cwd`, renamed by `rename`. */
async function addToTar(
  archive: string,
  cwd: string,
  names: readonly string[] | { readonly list: string },
  rename: string,
  extra: readonly string[] = [],
): Promise<void> {
  const mode = existsSync(archive) ? '-rf' : '-cf';
  // `S`: a symlink's target is left as it is (npm's relative `.bin` links).
  const members = 'list' in names ? ['-T', names.list] : ['--', ...names];
  await execFileAsync('tar', [mode, archive, ...extra, `--transform=${rename}S`, '-C', cwd, ...members]);
}

async function buildBundle(dir: string): Promise<SandboxToolsBundle> {
  const [closureJson, npmDir, uvBin, cargoRoot] = await Promise.all([
    output('python3', ['-c', CLOSURE_SCRIPT, ...PYTHON_ROOTS]),
    findNpm(),
    findUv(),
    unpackCargo(dir),
  ]);
  const closure = JSON.parse(closureJson) as Closure;
  const tar = join(dir, 'tools.tar');
  // One append per folder the distributions are in (a Debian host has two).
  const byBase = new Map<string, string[]>();
  for (const dist of closure.dists) byBase.set(dist.base, [...(byBase.get(dist.base) ?? []), ...dist.files]);
  let lists = 0;
  for (const [base, files] of byBase) {
    const list = join(dir, `files-${String(lists++)}.txt`);
    writeFileSync(list, `${files.join('\n')}\n`);
    await addToTar(tar, base, { list }, 's,^,python/,');
  }
  // npm's docs and man pages serve `npm help` only.
  const npmName = basename(npmDir);
  await addToTar(tar, dirname(npmDir), [npmName], `s,^${npmName},npm,`, [
    `--exclude=${npmName}/docs`,
    `--exclude=${npmName}/man`,
  ]);
  await addToTar(tar, dirname(uvBin), [basename(uvBin)], 's,^.*$,bin/uv,', ['--dereference']);
  await addToTar(tar, dir, [basename(cargoRoot)], 's,^cargo-root,cargo,', ['--exclude=cargo-root/usr/share']);
  await execFileAsync('gzip', ['-f', tar]);
  const file = `${tar}.gz`;
  const [npmVersion, uvVersion] = await Promise.all([
    output(process.execPath, [join(npmDir, 'bin', 'npm-cli.js'), '--version']),
    output(uvBin, ['--version']),
  ]);
  return {
    file,
    bytes: statSync(file).size,
    python: closure.python,
    distributions: closure.dists.map(({ name, version }) => ({ name, version })),
    npmVersion,
    uvVersion,
  };
}

let bundleDir: string | undefined;
let bundle: Promise<SandboxToolsBundle> | undefined;

/**
 * Removes the bundle built by this process, if any: call it in `afterAll` (it is also done when the
 * process exits, which a vitest worker that is killed does not).
 */
export function removeSandboxToolsBundle(): void {
  if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true });
  bundleDir = undefined;
  bundle = undefined;
}

/** The bundle of this test process, built on first call. */
export function sandboxToolsBundle(): Promise<SandboxToolsBundle> {
  if (bundle === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-sandbox-tools-'));
    if (bundleDir === undefined) process.once('exit', removeSandboxToolsBundle);
    bundleDir = dir;
    bundle = buildBundle(dir);
    // A failed build is tried again by the next caller.
    bundle.catch(() => {
      if (bundleDir === dir) removeSandboxToolsBundle();
    });
  }
  return bundle;
}

/** Runs `cmd` in `sbx` as its user; its stdout, or an error with what it printed. */
async function succeed(sbx: Sandbox, cmd: string): Promise<string> {
  const { exitCode, stdout, stderr } = await sbx.commands.run(cmd, { timeoutMs: 120_000 });
  if (exitCode !== 0) throw new Error(`sandbox tools: ${cmd} exited ${String(exitCode)}: ${stderr}`);
  return stdout.trim();
}

/**
 * Lays the host's pip, requests, httpx, npm and uv into `sbx` at `/tmp/test-tools`, as its user, and
 * gives the commands that run them there. The sandbox's `python3` must be the host's `major.minor`.
 *
 * @example
 * ```ts
 * const tools = await installSandboxTools(sbx);
 * await sbx.commands.run(`${tools.pip} download --no-deps -d /tmp/d somepackage`);
 * await sbx.commands.run(`${tools.python} -c 'import httpx; print(httpx.get("https://x.test").status_code)'`);
 * ```
 */
export async function installSandboxTools(sbx: Sandbox): Promise<SandboxTools> {
  const [built, sandboxPython] = await Promise.all([
    sandboxToolsBundle(),
    succeed(sbx, `python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'`),
  ]);
  if (sandboxPython !== built.python) {
    throw new Error(
      `sandbox tools: the host's Python packages are for Python ${built.python}, the sandbox has ${sandboxPython}`,
    );
  }
  const archive = `${SANDBOX_TOOLS_DIR}.tar.gz`;
  await sbx.files.write(archive, createReadStream(built.file));
  await succeed(
    sbx,
    `mkdir -p ${SANDBOX_TOOLS_DIR} && tar -xzf ${archive} -C ${SANDBOX_TOOLS_DIR} && rm ${archive}`,
  );
  const pythonPath = `${SANDBOX_TOOLS_DIR}/python`;
  const python = `PYTHONPATH=${pythonPath} python3`;
  return {
    dir: SANDBOX_TOOLS_DIR,
    pythonPath,
    python,
    pip: `${python} -m pip`,
    npm: `node ${SANDBOX_TOOLS_DIR}/npm/bin/npm-cli.js`,
    uv: `${SANDBOX_TOOLS_DIR}/bin/uv`,
    cargo: `LD_LIBRARY_PATH=${SANDBOX_TOOLS_DIR}/cargo/usr/lib/x86_64-linux-gnu ${SANDBOX_TOOLS_DIR}/cargo/usr/bin/cargo`,
  };
}
