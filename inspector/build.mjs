// Bundles the inspector page into dist/inspector/: app.js (every module of page/ in one same-origin
// script, which the page's Content-Security-Policy `script-src 'self'` admits), index.html and
// inspector.css. Run by `npm run build` after tsc; the control plane serves the folder at /inspector/.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { build } from 'esbuild';

const here = import.meta.dirname;
const root = resolve(here, '..');
const out = join(root, 'dist', 'inspector');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: [join(here, 'page', 'main.ts')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: false,
  // Written beside app.js for debugging, not linked from it: the control plane serves only the page's
  // three files, and a linked map would be a 404 in every open devtools.
  sourcemap: 'external',
  legalComments: 'none',
  tsconfig: join(here, 'tsconfig.json'),
  metafile: true,
  logLevel: 'warning',
});

// The page imports only types from protocol/: a value import would pull zod and the rules into the
// page. Lint refuses it; this refuses a bundle that holds anything but the page's own modules.
const page = relative(root, join(here, 'page')) + '/';
const foreign = Object.keys(result.metafile.inputs).filter((input) => !input.startsWith(page));
if (foreign.length > 0) {
  throw new Error(`inspector bundle must hold only ${page} modules; it holds ${foreign.join(', ')}`);
}

await copyFile(join(here, 'index.html'), join(out, 'index.html'));
await copyFile(join(here, 'inspector.css'), join(out, 'inspector.css'));
