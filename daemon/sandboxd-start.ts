/**
 * sandboxd's entry inside a sandbox (`/usr/local/bin/node /opt/sdk/start.cjs`, bundled by daemon/build.mjs):
 * runs the bundle beside it, `sandboxd.cjs` (daemon/main.ts with every module and package it imports),
 * from the V8 code cache beside it, `sandboxd.code-cache`, which the runtime image's build writes with
 * `--write-code-cache` (sandbox-drivers/namespace/runtime-image.ts): the image is read-only in the
 * sandbox. Without a cache, or with one V8 refuses, sandboxd compiles from the source and starts all
 * the same, about 20 ms later.
 *
 * `--write-code-cache` is a warm-up run on the host at image build: the bundle runs main's synchronous
 * start (the settings on stdin: loopback, port 0), then the cache is written and the process exits
 * before it listens. main reads its settings synchronously, so that start is over when `run()` returns.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compileScript } from './code-cache.js';

/** The bundle and its code cache, beside this file. */
const dir = dirname(process.argv[1] ?? '');
const cacheFile = join(dir, 'sandboxd.code-cache');
const script = compileScript(join(dir, 'sandboxd.cjs'), cacheFile);
if (script.cacheRejected === true) {
  process.stderr.write('sandboxd: code cache refused, compiled from source\n');
}
script.run();
if (process.argv[2] === '--write-code-cache') {
  writeFileSync(cacheFile, script.codeCache());
  process.exit(0);
}
