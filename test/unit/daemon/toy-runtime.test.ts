/**
 * A runtime is its folder (issue 29): a toy third runtime added as `runtime-drivers/runtime-toy/` and
 * nothing else runs through sandboxd's agent host, and is refused again once the folder is removed.
 * The test works on a copy of the sources (the repository's own tree is never changed while other jobs
 * read it) and bundles the host with esbuild as the daemon's build does, so the folder is found the way
 * sandboxd finds it.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const FIXTURES = join(import.meta.dirname, 'toy-runtime');
/** What the agent host is built from. */
const FOLDERS = [
  'rules',
  'protocol',
  'actors',
  'machines',
  'runtime-drivers',
  'daemon',
  'gateway',
  'sandbox-drivers',
];

const copy = mkdtempSync(join(tmpdir(), 'sdk-toy-runtime-'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

for (const folder of FOLDERS) {
  cpSync(join(ROOT, folder), join(copy, folder), {
    recursive: true,
    filter: (path) => !path.includes('/node_modules') && !path.endsWith('/test'),
  });
}
symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
writeFileSync(join(copy, 'entry.ts'), readFileSync(join(FIXTURES, 'entry.ts.txt')));
const work = join(copy, 'work');
mkdirSync(work);

/** Bundles the host from the copy (every `runtime-drivers/*\/driver.ts` there) and runs one execution. */
async function runToy(): Promise<unknown> {
  await build({
    entryPoints: [join(copy, 'entry.ts')],
    outfile: join(copy, 'entry.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    define: { 'process.env.SDK_RUNTIME_DRIVERS_BUNDLED': '"1"' }, // as daemon/build.mjs
    logLevel: 'silent',
  });
  return JSON.parse(execFileSync(process.execPath, [join(copy, 'entry.mjs'), work], { encoding: 'utf8' }));
}

it('runs a runtime added as one folder, and refuses it once the folder is gone', async () => {
  const toy = join(copy, 'runtime-drivers', 'runtime-toy');
  mkdirSync(toy);
  writeFileSync(join(toy, 'driver.ts'), readFileSync(join(FIXTURES, 'driver.ts.txt')));
  const ran = (await runToy()) as {
    lines: { event?: unknown }[];
    list: { executions: { runtime: string }[] };
  };
  const events = ran.lines.flatMap((line) => (line.event === undefined ? [] : [line.event]));
  expect(events).toEqual([
    { type: 'text', text: 'hello from toy-model via http://127.0.0.1:41001: world' },
    { type: 'done' },
  ]);
  expect(ran.list.executions.map((execution) => execution.runtime)).toEqual(['runtime_toy']);

  rmSync(toy, { recursive: true });
  expect(await runToy()).toMatchObject({
    refused: 'invalid_argument',
    message: expect.stringContaining('this sandbox has no runtime runtime_toy') as unknown,
  });
});
