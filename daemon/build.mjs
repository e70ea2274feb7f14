// Bundles sandboxd for sandboxes into dist/sandboxd/: sdk-exec (the C helper that places sandboxd and
// starts every process of sandbox code, sandbox-drivers/namespace/sdk-exec/README.md, static so it runs
// in any root), gvisor-exec (its counterpart for gVisor boxes, sandbox-drivers/gvisor/gvisor-exec/),
// sandboxd.cjs (daemon/main.ts with every module and
// package it imports, one file; its source map beside it, not linked) and start.cjs (daemon/sandboxd-start.ts,
// which runs it from V8's code cache). Run by `npm run build` after tsc; the namespace driver copies the
// .cjs files into the runtime image it binds at /opt/sdk (sandbox-drivers/namespace/runtime-image.ts).
// Why: Node resolving and loading dist/ and node_modules/ module by module was most of a cold start
// (about 190 ms of Node before the ready line; bench/README.md).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const here = import.meta.dirname;
const root = resolve(here, '..');
const out = join(root, 'dist', 'sandboxd');

/**
 * sandboxd uses two things of undici (gateway/upstream-dispatcher.ts, gateway/safe-connector.ts); undici's
 * index loads all of it (fetch, websockets, mocks, caches), about 12 ms of every start. The bundle takes
 * the two from their own files; `checkUndiciImports` fails the build when a source imports anything else.
 */
const UNDICI_SUBSET = {
  Agent: 'undici/lib/dispatcher/agent.js',
  buildConnector: 'undici/lib/core/connect.js',
};

/** @type {import('esbuild').Plugin} */
const undiciSubset = {
  name: 'undici-subset',
  setup(plugin) {
    plugin.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', namespace: 'undici-subset' }));
    plugin.onLoad({ filter: /.*/, namespace: 'undici-subset' }, () => ({
      contents: Object.entries(UNDICI_SUBSET)
        .map(([name, path]) => `exports.${name} = require(${JSON.stringify(path)});`)
        .join('\n'),
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * undici's HTTP/2 client loads `node:http2` when the bundle starts, about 3 ms of every sandboxd start
 * (a CPU profile); sandboxd's gateway never speaks HTTP/2 (`allowH2: false`, gateway/upstream-dispatcher.ts,
 * so ALPN offers only http/1.1). That one import fails instead, which undici catches (it then has no
 * HTTP/2, as on a Node built without it). Any other import of http2 stays Node's own.
 */
/** @type {import('esbuild').Plugin} */
const noUndiciHttp2 = {
  name: 'no-undici-http2',
  setup(plugin) {
    plugin.onResolve({ filter: /^(node:)?http2$/ }, (args) =>
      args.importer.endsWith(join('undici', 'lib', 'dispatcher', 'client-h2.js'))
        ? { path: 'http2', namespace: 'no-undici-http2' }
        : undefined,
    );
    plugin.onLoad({ filter: /.*/, namespace: 'no-undici-http2' }, () => ({
      contents: "throw new Error('no HTTP/2 in sandboxd');",
      loader: 'js',
    }));
  },
};

/** Refuses a bundled source that takes from undici a value outside `UNDICI_SUBSET`. */
function checkUndiciImports(inputs) {
  for (const input of inputs.filter((path) => /^[a-z-]+\/.*\.ts$/.test(path))) {
    const source = readFileSync(join(root, input), 'utf8');
    for (const [, names] of source.matchAll(/^import\s+\{([^}]*)\}\s+from\s+'undici';/gm)) {
      const values = names
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '' && !name.startsWith('type '));
      const missing = values.filter((name) => !(name in UNDICI_SUBSET));
      if (missing.length > 0) {
        throw new Error(`${input} imports ${missing.join(', ')} from undici: add it to UNDICI_SUBSET`);
      }
    }
  }
}

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

/** @type {import('esbuild').BuildOptions} */
const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  // A script, not an ES module: Node 20 keeps a code cache only for scripts (daemon/code-cache.ts).
  format: 'cjs',
  target: 'node20',
  // A script compiled by vm.Script has no loader for import(): every one becomes a require.
  supported: { 'dynamic-import': false },
  // import.meta is empty in a script: a source that reads it would break in sandboxes only.
  logOverride: { 'empty-import-meta': 'error' },
  // The runtime drivers are all inside the bundle (runtime-drivers/registry.ts): it never looks for one
  // on disk, where a path a request names could lead.
  define: { 'process.env.SDK_RUNTIME_DRIVERS_BUNDLED': '"1"' },
  // Whitespace, comments and syntax only: names stay, so a fault line's frames still say where. Start
  // time is the same either way with the code cache, but an idle sandboxd's cgroup measured 13 MiB
  // against 26 unminified ten seconds after launch (V8 collected the start's garbage only here).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
};

const results = await Promise.all([
  build({
    ...common,
    entryPoints: [join(here, 'main.ts')],
    outfile: join(out, 'sandboxd.cjs'),
    // For reading a stack frame of a sandbox's sandboxd; not linked, nothing loads it at start.
    sourcemap: 'external',
    plugins: [undiciSubset, noUndiciHttp2],
  }),
  build({ ...common, entryPoints: [join(here, 'sandboxd-start.ts')], outfile: join(out, 'start.cjs') }),
]);

checkUndiciImports(Object.keys(results[0].metafile.inputs));
// A sandbox has no node_modules: whatever the bundles leave outside must be Node's own.
const builtins = new Set(builtinModules);
for (const output of results.flatMap((result) => Object.values(result.metafile.outputs))) {
  for (const { path, external } of output.imports) {
    if (external && !path.startsWith('node:') && !builtins.has(path)) {
      throw new Error(`sandboxd's bundle leaves ${path} outside; a sandbox has only Node's own modules`);
    }
  }
}

// Static: they run from the host, in sandboxd's root and in the sandbox's (a gVisor box's too), whatever
// libc each holds. sdk-exec places a namespace sandbox and enters it; gvisor-exec reaches a gVisor box;
// sdk-pty runs a terminal inside either.
const gvisorExec = join(root, 'sandbox-drivers', 'gvisor', 'gvisor-exec');
for (const [name, sources] of [
  ['sdk-exec', [join(root, 'sandbox-drivers', 'namespace', 'sdk-exec', 'sdk-exec.c')]],
  // A terminal of sandbox code (sbx.pty): run inside the sandbox, either isolation.
  ['sdk-pty', [join(root, 'sandbox-drivers', 'pty', 'sdk-pty.c')]],
  [
    'gvisor-exec',
    readdirSync(gvisorExec)
      .filter((file) => file.endsWith('.c'))
      .sort()
      .map((file) => join(gvisorExec, file)),
  ],
]) {
  execFileSync('gcc', ['-static', '-O2', '-Wall', '-Wextra', '-Werror', '-o', join(out, name), ...sources], {
    stdio: 'inherit',
  });
}
