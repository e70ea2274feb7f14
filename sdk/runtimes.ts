/**
 * Agent runtimes (SPEC "Runtimes"): `runtime_a` (the default) and `runtime_b` (graph-based, optionally
 * built by a user `entrypoint`), and the spec rules that depend on which one runs.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import type { AgentPermissions } from './agent-permissions.js';
import type { AgentSpec } from './agent-spec.js';

/** Runtime names. */
export type RuntimeName = 'runtime_a' | 'runtime_b';

/** Tools runtime_b has; only `bash` takes patterns there. */
export const RUNTIME_B_TOOLS = ['read', 'edit', 'list', 'glob', 'grep', 'bash', 'task', 'todowrite'] as const;

const runtimeBOptions = z.strictObject({
  entrypoint: z
    .string()
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_$][A-Za-z0-9_$]*$/,
      'must be package.module:function',
    )
    .optional(),
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

function permissionProblems(permissions: AgentPermissions, at: string): string[] {
  return Object.entries(permissions.tools).flatMap(([tool, rule]) => {
    if (!(RUNTIME_B_TOOLS as readonly string[]).includes(tool)) {
      return [`${at}.tools.${tool}: runtime_b has no such tool (it has ${RUNTIME_B_TOOLS.join(', ')})`];
    }
    if (typeof rule !== 'string' && tool !== 'bash')
      return [`${at}.tools.${tool}: only bash accepts patterns with runtime_b`];
    return [];
  });
}

/**
 * Checks the parts of a spec that depend on the runtime, before any call: runtime_b has no `mcp` or
 * `rawConfig`, only its eight tools, and patterns only for `bash`.
 *
 * @throws InvalidArgumentError naming the first offending field
 */
export function checkSpecForRuntime(spec: AgentSpec, runtime: RuntimeChoice): void {
  const name = typeof runtime === 'string' ? runtime : runtime.name;
  if (name !== 'runtime_b') return;
  const problems: string[] = [];
  if (Object.keys(spec.mcp).length > 0) problems.push('mcp: is not supported by runtime_b');
  if (spec.rawConfig !== undefined) problems.push('rawConfig: is not supported by runtime_b');
  problems.push(...permissionProblems(spec.permissions, 'permissions'));
  for (const [agent, sub] of Object.entries(spec.agents)) {
    if (sub.permissions !== undefined)
      problems.push(...permissionProblems(sub.permissions, `agents.${agent}.permissions`));
  }
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
