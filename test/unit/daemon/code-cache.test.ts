/**
 * How sandboxd's bundle starts (`daemon/code-cache.ts`): a CommonJS script run with its module
 * variables, a code cache made after a run that V8 takes on the next compile, and a cache V8 refuses
 * (here one made for another script) falling back to the source with the same result.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileScript } from '../../../daemon/code-cache.js';

const dir = mkdtempSync(join(tmpdir(), 'sdk-code-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const results: string[] = [];
const sink = Symbol.for('sdk.code-cache-test');
(globalThis as Record<symbol, unknown>)[sink] = results;

/** A script reporting what it was run with to `results`. */
function writeScript(name: string, extra = ''): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    `'use strict';
const { basename } = require('node:path');
module.exports.answer = 42;
globalThis[Symbol.for('sdk.code-cache-test')].push(
  [basename(__filename), basename(__dirname) === basename(${JSON.stringify(dir)}), this === exports].join(' '),
);${extra}
`,
  );
  return file;
}

describe('compileScript', () => {
  const file = writeScript('bundle.cjs');
  const cacheFile = join(dir, 'bundle.code-cache');

  it('runs a script as a CommonJS module without a cache', () => {
    const script = compileScript(file, cacheFile);
    expect(script.cacheRejected).toBeUndefined();
    script.run();
    expect(results.pop()).toBe('bundle.cjs true true');
    writeFileSync(cacheFile, script.codeCache());
  });

  it('takes the cache a run made, and V8 does not refuse it', () => {
    const script = compileScript(file, cacheFile);
    expect(script.cacheRejected).toBe(false);
    script.run();
    expect(results.pop()).toBe('bundle.cjs true true');
  });

  it("falls back to the source when V8 refuses the cache (another script's)", () => {
    const other = writeScript('other.cjs', '\n// a longer script than the one the cache was made for');
    const script = compileScript(other, cacheFile);
    expect(script.cacheRejected).toBe(true);
    script.run();
    expect(results.pop()).toBe('other.cjs true true');
  });
});
