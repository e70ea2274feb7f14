/**
 * The options of `sbx.agent.run`, `stream`, `attach` and `prepare` (SPEC "Agent call options"), checked
 * with zod before any call: a malformed one is an `InvalidArgumentError` naming the field.
 */
import { z } from 'zod';
import { AGENT_MODEL_ID, AGENT_SESSION_ID } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import { AgentLimits } from './agent-limits.js';
import { AgentSpec } from './agent-spec.js';
import { RuntimeB, type RuntimeChoice, type RuntimeName } from './runtimes.js';

const runtime = z
  .union([z.enum(['runtime_a', 'runtime_b']), z.instanceof(RuntimeB)], {
    message: 'must be runtime_a, runtime_b or a RuntimeB',
  })
  .default('runtime_a');

const runOptions = z.strictObject({
  spec: z.instanceof(AgentSpec, { message: 'must be an AgentSpec' }),
  runtime,
  sessionId: z
    .string()
    .regex(AGENT_SESSION_ID, 'must be a session id from an earlier result (ses_… or rda_<32 hex>)')
    .optional(),
  model: z
    .string()
    .regex(
      AGENT_MODEL_ID,
      'must be a model id of 1-200 characters [A-Za-z0-9._:@/-], starting with a letter or digit',
    )
    .optional(),
  limits: z.instanceof(AgentLimits, { message: 'must be an AgentLimits' }).optional(),
  workdir: z
    .string()
    .max(4096, 'must be at most 4096 characters')
    .regex(/^\/[^\0]*$/, 'must be an absolute path without NUL')
    .default('/home/user'),
  reasoning: z.boolean().default(false),
  signal: z.instanceof(AbortSignal, { message: 'must be an AbortSignal' }).optional(),
});

/**
 * Options of `sbx.agent.run` and `sbx.agent.stream`.
 *
 * @example
 * ```ts
 * const options: RunOptions = { spec, limits: new AgentLimits({ maxSteps: 20 }), signal: AbortSignal.timeout(60_000) };
 * ```
 */
export interface RunOptions {
  /** What the agent runs with (SPEC "AgentSpec"). */
  readonly spec: AgentSpec;
  /** `runtime_a` (default, opencode), `runtime_b` (deep agents) or `new RuntimeB({ entrypoint })`. */
  readonly runtime?: RuntimeChoice | undefined;
  /** A session to continue: `sessionId` of an earlier result of the same runtime. */
  readonly sessionId?: string | undefined;
  /** Another model id of the same provider and gateway (vendor_a: one of its preset's models). */
  readonly model?: string | undefined;
  /** Deadline, step limit, token budget, kept output (`AgentLimits()` by default). */
  readonly limits?: AgentLimits | undefined;
  /** The agent's working directory (default `/home/user`). */
  readonly workdir?: string | undefined;
  /** Also emit `reasoning` events (default false). */
  readonly reasoning?: boolean | undefined;
  /** Aborts the execution: frozen and killed without grace, reason `aborted`. */
  readonly signal?: AbortSignal | undefined;
}

type Agrees<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
/** Compile time only: `RunOptions` (what callers read) and the schema that checks them agree. */
export type RunOptionsMatchTheirSchema = Expect<
  Agrees<Required<RunOptions>, Required<z.input<typeof runOptions>>>
>;

/** `RunOptions` with every default applied. */
export type ResolvedRunOptions = Omit<z.output<typeof runOptions>, 'limits' | 'runtime'> & {
  readonly limits: AgentLimits;
  readonly runtime: RuntimeChoice;
};

/** The prompt and options of `run`/`stream`, checked. */
export function parseRunOptions(
  operation: string,
  prompt: unknown,
  options: unknown,
): { readonly prompt: string; readonly options: ResolvedRunOptions } {
  const text = parseOptions(z.string().min(1, 'must not be empty'), prompt, operation, ['prompt']);
  const o = parseOptions(runOptions, options, operation);
  return { prompt: text, options: { ...o, limits: o.limits ?? new AgentLimits() } };
}

/** The name of a runtime choice. */
export function runtimeName(choice: RuntimeChoice): RuntimeName {
  return typeof choice === 'string' ? choice : choice.name;
}

const executionId = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, 'must be an execution id');

const attachOptions = z.strictObject({
  after: z
    .number()
    .int('must be a whole number')
    .min(0, 'must be 0 (from the start) or a cursor')
    .max(Number.MAX_SAFE_INTEGER)
    .default(0),
  maxOutputBytes: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(2 ** 32)
    .optional(),
});

/** Options of `sbx.agent.attach`. */
export interface AttachOptions {
  /** Read the events after this cursor (`stream.cursor` of an earlier reader); 0, the default, is the start. */
  readonly after?: number;
  /** What the SDK keeps of the events (default: the execution's `maxOutputBytes`). */
  readonly maxOutputBytes?: number;
}

/** The execution id and options of `attach`, checked. */
export function parseAttachOptions(
  id: unknown,
  options: unknown,
): { readonly executionId: string | undefined; readonly after: number; readonly maxOutputBytes?: number } {
  const checkedId =
    id === undefined ? undefined : parseOptions(executionId, id, 'agent.attach', ['executionId']);
  const o = parseOptions(attachOptions, options, 'agent.attach');
  return {
    executionId: checkedId,
    after: o.after,
    ...(o.maxOutputBytes === undefined ? {} : { maxOutputBytes: o.maxOutputBytes }),
  };
}

const prepareOptions = z.strictObject({
  runtime,
  spec: z.instanceof(AgentSpec, { message: 'must be an AgentSpec' }).optional(),
});

/** Options of `sbx.agent.prepare`. */
export interface PrepareOptions {
  /** The runtime to warm up (default `runtime_a`). */
  readonly runtime?: RuntimeChoice | undefined;
  /**
   * The spec of the runs to come: its configuration is written and the runtime started with it (without
   * it, with the configuration written last; none yet, nothing is started).
   */
  readonly spec?: AgentSpec | undefined;
}

/** The runtime `prepare` warms up and the spec it is for, checked. */
export function parsePrepareOptions(options: unknown): {
  readonly runtime: RuntimeName;
  readonly spec: AgentSpec | undefined;
} {
  const o = parseOptions(prepareOptions, options, 'agent.prepare');
  return { runtime: runtimeName(o.runtime), spec: o.spec };
}
