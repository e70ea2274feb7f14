/**
 * runtime_a (opencode 1.18.33) as sandboxd runs it: the request's spec built into opencode's
 * configuration (`config.ts`) with the instructions in a file named by their hash, the provider
 * package's non-secret placeholder key, the command line (`launch.ts`) and the NDJSON parser (`events.ts`).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { PLACEHOLDER_KEY } from '../../rules/placeholder-key.js';
import { RuntimeConfigError, type RuntimeDriver, type RuntimeSite } from '../runtime-driver.js';
import { buildRuntimeAConfig, RuntimeAConfigError } from './config.js';
import { parseLine } from './events.js';
import { runtimeABinary, runtimeACommand, runtimeAEnvironment } from './launch.js';
import { PermissionOrderError } from './permissions.js';
import { OPENCODE_PROVIDERS } from './providers.js';

/** Where the instructions are written: named by the first 16 hex digits of their sha256. */
export function instructionsPath(
  site: Pick<RuntimeSite, 'configDir'>,
  instructions: string | undefined,
): string {
  const digest = createHash('sha256')
    .update(instructions ?? '')
    .digest('hex');
  return `${site.configDir}/instructions-${digest.slice(0, 16)}.md`;
}

/** The builder's refusals as the driver's (its messages name fields and rules only). */
function built<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof RuntimeAConfigError || error instanceof PermissionOrderError) {
      throw new RuntimeConfigError(`spec: ${error.message}`, 'spec');
    }
    throw error;
  }
}

/** runtime_a. */
export const driver: RuntimeDriver<Record<string, never>> = {
  name: 'runtime_a',
  options: z.strictObject({}),
  check: () => undefined, // every rule of a runtime_a spec is one the builder applies
  plan({ spec }, listeners, run, site) {
    const provider = OPENCODE_PROVIDERS[spec.model.provider];
    const config = built(() =>
      buildRuntimeAConfig({
        ...spec,
        instructionsPath: instructionsPath(site, spec.instructions),
        gateways: listeners,
        otherModels: run.model === undefined ? [] : [run.model],
      }),
    );
    const binary = runtimeABinary(site);
    const keyEnv =
      provider.placeholderKeyEnv === undefined ? {} : { [provider.placeholderKeyEnv]: PLACEHOLDER_KEY };
    return {
      configFiles: config.files,
      cmd: runtimeACommand(
        { ...run, model: run.model === undefined ? undefined : `${provider.id}/${run.model}` },
        binary,
      ),
      environment: runtimeAEnvironment(config.text, keyEnv, site),
      files: [binary],
      parse: parseLine,
    };
  },
  binary: runtimeABinary,
  startsAhead: true,
  // Present, so opencode never writes into its (read-only) config home: no background plugin install
  // (runtimes.md §1.4).
  homeFiles: [{ path: 'opencode/.gitignore', content: 'node_modules\npackage.json\nbun.lock\n.gitignore\n' }],
};
