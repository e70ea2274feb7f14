/**
 * A CommonJS script run with V8's code cache: the compiled code of a run written to a file, and handed
 * back to V8 on the next run so it neither parses the script nor compiles the functions that run at
 * start again. Node 20 has no compile cache for modules (`module.enableCompileCache` is Node 22), but
 * `vm.Script` takes and makes a cache on every version since 10, so sandboxd's bundle is a script
 * (daemon/build.mjs) and this is how it starts (`sandboxd-start.ts`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/** A script compiled, with or without a cache, ready to run once. */
export interface CachedScript {
  /**
   * `undefined` without a cache file; `false` when V8 took the cache; `true` when it refused it (another
   * V8 version or flags, another script) and compiled from the source, which is slower but the same.
   */
  readonly cacheRejected: boolean | undefined;
  /** Runs the script as a CommonJS module (`exports`, `require`, `module`, `__filename`, `__dirname`). */
  run(): void;
  /** V8's code cache for the script: every function compiled so far, so make it after `run()`. */
  codeCache(): Buffer;
}

type ModuleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

/**
 * Compiles the CommonJS script at `file`, with the code cache at `cacheFile` when there is one.
 *
 * @example
 * ```ts
 * const script = compileScript('/opt/sdk/sandboxd.cjs', '/opt/sdk/sandboxd.code-cache');
 * script.run();
 * ```
 */
export function compileScript(file: string, cacheFile: string): CachedScript {
  const cachedData = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
  // Node's own module wrapper, on the first line so the script's line numbers stay its own.
  const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`;
  const script = new Script(source, { filename: file, ...(cachedData === undefined ? {} : { cachedData }) });
  return {
    cacheRejected: cachedData === undefined ? undefined : script.cachedDataRejected === true,
    run: () => {
      const module = { exports: {} };
      const fn = script.runInThisContext() as ModuleFunction;
      fn.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
    },
    codeCache: () => script.createCachedData(),
  };
}
