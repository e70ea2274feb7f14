/**
 * Agent runtimes (SPEC "Runtimes"): `runtime_a` (the default) and `runtime_b` (graph-based, optionally
 * built by a user `entrypoint`), and the spec rules that depend on which one runs.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import { RUNTIME_B_ENTRYPOINT, RUNTIME_B_TOOLS, runtimeBProblems } from '../rules/runtime-b-spec.js';
import type { AgentSpec } from './agent-spec.js';

/** Runtime names. */
export type RuntimeName = 'runtime_a' | 'runtime_b';

export { RUNTIME_B_TOOLS };

const runtimeBOptions = z.strictObject({
  entrypoint: z.string().regex(RUNTIME_B_ENTRYPOINT, 'must be package.module:function').optional(),
});

/** Options of `RuntimeB`. */
export type RuntimeBOptions = z.input<typeof runtimeBOptions>;

/**
 * runtime_b with an optional `entrypoint` (`package.module:build`) imported from the working directory.
 *
 * @example
 * ```ts
 * await sbx.agent.run('fix the tests', { spec, runtime: new RuntimeB({ entrypoint: 'agent.graph:build' }) });
 * ```
 */
export class RuntimeB {
  /** Runtime name. */
  readonly name = 'runtime_b';
  /** The graph builder, or undefined for the built-in graph. */
  readonly entrypoint: string | undefined;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: RuntimeBOptions = {}) {
    this.entrypoint = parseOptions(runtimeBOptions, options, 'RuntimeB').entrypoint;
    Object.freeze(this);
  }
}

/** What the `runtime` call option accepts. */
export type RuntimeChoice = RuntimeName | RuntimeB;

/**
 * Checks the parts of a spec that depend on the runtime, before any call: runtime_b has no `mcp` or
 * `rawConfig`, only its eight tools, and patterns only for `bash`.
 *
 * @throws InvalidArgumentError naming the first offending field
 */
export function checkSpecForRuntime(spec: AgentSpec, runtime: RuntimeChoice): void {
  const name = typeof runtime === 'string' ? runtime : runtime.name;
  if (name !== 'runtime_b') return;
  const problems = runtimeBProblems(spec);
  const first = problems[0];
  if (first !== undefined) {
    throw new InvalidArgumentError(`AgentSpec: ${problems.join('; ')}`, {
      field: first.slice(0, first.indexOf(':')),
    });
  }
}

/** The `entrypoint` of a runtime choice (RuntimeB's), if any. */
export function entrypointOf(runtime: RuntimeChoice): string | undefined {
  return typeof runtime === 'string' ? undefined : runtime.entrypoint;
}
