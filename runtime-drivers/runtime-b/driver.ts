/**
 * runtime_b (deep agents through the runner in `runner/`) as sandboxd runs it: the request's spec as
 * the runner's JSON (`config.ts`) with this run's fields, the command line (`launch.ts`) and the
 * runner's NDJSON parser (`events.ts`). Its own option: `entrypoint`, a graph builder from the working
 * directory.
 */
import { z } from 'zod';
import { RUNTIME_B_ENTRYPOINT, runtimeBProblems } from '../../rules/runtime-b-spec.js';
import { RuntimeConfigError, type RuntimeDriver } from '../runtime-driver.js';
import { buildRuntimeBConfig, RuntimeBConfigError } from './config.js';
import { parseRunnerLine } from './events.js';
import { runtimeBCommand, runtimeBEnvironment, runtimeBFiles } from './launch.js';

const options = z.strictObject({ entrypoint: z.string().regex(RUNTIME_B_ENTRYPOINT).optional() });

/** runtime_b. */
export const driver: RuntimeDriver<z.infer<typeof options>> = {
  name: 'runtime_b',
  options,
  check(spec) {
    const problems = runtimeBProblems(spec);
    const first = problems[0];
    if (first !== undefined) {
      throw new RuntimeConfigError(
        `spec: ${problems.join('; ')}`,
        `spec.${first.slice(0, first.indexOf(':'))}`,
      );
    }
  },
  plan({ spec, options: { entrypoint } }, listeners, run, site) {
    let config;
    try {
      config = buildRuntimeBConfig({ ...spec, entrypoint, gateways: listeners });
    } catch (error) {
      if (error instanceof RuntimeBConfigError)
        throw new RuntimeConfigError(`spec: ${error.message}`, 'spec');
      throw error;
    }
    const runConfig = {
      ...config,
      ...(run.model === undefined ? {} : { model: { ...config.model, id: run.model } }),
      ...(run.sessionId === undefined ? {} : { sessionId: run.sessionId }),
      reasoning: run.reasoning,
      workdir: run.workdir,
    };
    const { node, runner } = runtimeBFiles(site);
    return {
      configFiles: [],
      cmd: runtimeBCommand(site),
      environment: runtimeBEnvironment(runConfig, site),
      files: [node, runner],
      parse: parseRunnerLine,
    };
  },
  binary: (site) => runtimeBFiles(site).node,
  startsAhead: false,
};
