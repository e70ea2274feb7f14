/**
 * The runtimes sandboxd can start: every folder `runtime-<name>/` here with a `driver.ts`, found by its
 * name (`runtime_<name>`). The folders are the table: the daemon's bundle holds each one's driver (an
 * import pattern esbuild expands at build time), and a runtime is added or removed with its folder alone.
 */
import { RUNTIME_NAME } from '../protocol/agent-request.js';
import type { RuntimeDriver } from './runtime-driver.js';

/** Set at build time by the daemon's bundle (daemon/build.mjs `define`), whose drivers are all inside it. */
const IN_BUNDLE = process.env.SDK_RUNTIME_DRIVERS_BUNDLED === '1';

const loaded = new Map<string, Promise<RuntimeDriver | undefined>>();

/** A driver module's shape. */
function isDriverModule(value: unknown): value is { driver: RuntimeDriver } {
  return typeof value === 'object' && value !== null && 'driver' in value;
}

/**
 * The driver of runtime `name`, or undefined when no folder holds it.
 *
 * @example
 * ```ts
 * const driver = await runtimeDriver('runtime_a');
 * ```
 */
export function runtimeDriver(name: string): Promise<RuntimeDriver | undefined> {
  if (!RUNTIME_NAME.test(name)) return Promise.resolve(undefined);
  let driver = loaded.get(name);
  if (driver === undefined) {
    const folder = name.replace('_', '-');
    // A pattern, not a list: esbuild bundles every ./*/driver.ts and vitest loads the one asked for;
    // compiled output (tsc: the benchmarks) has driver.js beside this file, which the daemon's bundle
    // never looks for. (The bundle's lookup of a name it lacks throws at once, not in a promise: hence
    // the `then`s.)
    driver = Promise.resolve(folder)
      .then((found) => import(`./${found}/driver.ts`))
      .catch((error: unknown) => {
        if (IN_BUNDLE) throw error;
        const compiled = `./${folder}/driver.js`; // not a pattern: nothing for esbuild to expand
        return import(compiled);
      })
      .then(
        (module: unknown) =>
          isDriverModule(module) && module.driver.name === name ? module.driver : undefined,
        () => undefined,
      );
    loaded.set(name, driver);
    // A runtime not found now may be added later: only a found one is kept.
    void driver.then((found) => found ?? loaded.delete(name));
  }
  return driver;
}
