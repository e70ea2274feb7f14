/**
 * sandboxd's agent calls (SPEC "Agent execution on one sandbox"). One execution is 2 or 3 calls:
 *
 *   PUT  /v1/agent/config                       write a runtime configuration (skipped by the SDK when
 *                                               the daemon already holds its hash) → { hash }
 *   POST /v1/agent/executions                   start: the runtime spawns and waits for its prompt
 *                                               → { executionId }; refused with `agent_failed` and
 *                                               context `{ reason }` for `busy`, `runtime_missing`
 *   POST /v1/agent/executions/:id/prompt        the prompt as a raw UTF-8 body, written to the runtime's
 *                                               stdin (then closed); the answer is the execution's
 *                                               event stream (NDJSON `AgentWireLine`s) from its start
 *
 * and for anyone holding the sandbox's token (another process included):
 *
 *   GET  /v1/agent/executions                   { current, executions: [ExecutionInfo] }
 *   GET  /v1/agent/executions/:id/events        NDJSON from `?after=<seq>` (default: the start)
 *   POST /v1/agent/executions/:id/abort         freeze and kill the tree → { }
 *   POST /v1/agent/prepare                      warm the runtime up in the background → { }
 */
import { z } from 'zod';
import { AGENT_FAILURE_REASONS } from '../rules/agent-reasons.js';
import { AGENT_SESSION_ID } from '../rules/names.js';
import { MAX_AGENT_REQUEST_BYTES, runtimeNameSchema } from './agent-request.js';

/** Where configuration files may be written: a root-owned folder the agent can read, not change. */
export const AGENT_CONFIG_DIR = '/run/agent';

/** Where the runtime's `XDG_CONFIG_HOME` points: read-only, holding `opencode/.gitignore`. */
export const AGENT_CONFIG_HOME = '/run/agent-config-home';

/**
 * `PUT /v1/agent/config`: an `AgentRequest` (`agent-request.ts`) as the exact text the SDK hashed, so
 * key order (last-match permissions) is kept and both SDKs name a request alike without a canonical form.
 */
export const agentConfigSchema = z.strictObject({
  runtime: runtimeNameSchema,
  /** `agentRequestHash(runtime, text)`; sandboxd computes it again. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** The request's JSON. Never holds a credential. */
  text: z.string().max(MAX_AGENT_REQUEST_BYTES),
});

/** Parsed `PUT /v1/agent/config`. */
export type AgentConfigWrite = z.output<typeof agentConfigSchema>;

/** Limits of one execution, as sent (SPEC "AgentLimits"). */
export const executionLimitsSchema = z.strictObject({
  timeoutMs: z.number().int().positive(),
  maxSteps: z.number().int().positive(),
  maxTotalTokens: z.number().int().positive().nullable(),
  maxOutputBytes: z.number().int().positive(),
});

/** Limits of one execution, as sent. */
export type WireExecutionLimits = z.infer<typeof executionLimitsSchema>;

/** `POST /v1/agent/executions`. */
export const startExecutionSchema = z.strictObject({
  runtime: runtimeNameSchema,
  configHash: z.string().regex(/^[0-9a-f]{64}$/),
  /** A session to continue (runtime_a: `ses_…`, runtime_b: `rda_<32 hex>`). */
  sessionId: z.string().regex(AGENT_SESSION_ID).optional(),
  /** A model id of the spec's provider instead of the spec's model (the driver declares it). */
  model: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,255}$/)
    .optional(),
  limits: executionLimitsSchema,
  workdir: z
    .string()
    .regex(/^\/[^\0]*$/, 'must be an absolute path')
    .max(4096),
  reasoning: z.boolean(),
});

/** Parsed `POST /v1/agent/executions`. */
export type StartExecution = z.output<typeof startExecutionSchema>;

/** SPEC `TokenUsage`. */
export const tokenUsageSchema = z.strictObject({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  reasoning: z.number().int().nonnegative(),
  cacheRead: z.number().int().nonnegative(),
  cacheWrite: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
});

const toolCallSchema = z.strictObject({
  name: z.string(),
  status: z.enum(['running', 'completed', 'error']),
  input: z.unknown(),
  output: z.string(),
});

/** One event of SPEC "Events". */
export const agentEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('step_started') }),
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({ type: z.literal('text_delta'), text: z.string() }),
  z.strictObject({ type: z.literal('reasoning'), text: z.string() }),
  z.strictObject({ type: z.literal('tool_call'), ...toolCallSchema.shape }),
  z.strictObject({ type: z.literal('step_finished'), usage: tokenUsageSchema }),
  z.strictObject({ type: z.literal('agent_failed'), reason: z.enum(AGENT_FAILURE_REASONS) }),
  z.strictObject({ type: z.literal('done') }),
]);

/** One event of SPEC "Events". */
export type AgentEvent = z.infer<typeof agentEventSchema>;

/** What `AgentResult` is made of, sent once with the last event. */
export const executionSummarySchema = z.strictObject({
  text: z.string(),
  sessionId: z.string(),
  steps: z.number().int().nonnegative(),
  usage: tokenUsageSchema,
  /** The runtime's exit code; null when it was ended by a signal or never started. */
  exitCode: z.number().int().nullable(),
  toolCalls: z.array(toolCallSchema),
  droppedLines: z.number().int().nonnegative(),
});

/** What `AgentResult` is made of. */
export type ExecutionSummary = z.infer<typeof executionSummarySchema>;

/**
 * One line of an execution's stream: an event with its sequence number (the cursor for `?after=`),
 * the session id as soon as the runtime reports it, and the summary on the last event. Lines without
 * `seq` are keepalives.
 */
export const agentWireLineSchema = z.union([
  z.strictObject({
    seq: z.number().int().positive(),
    event: agentEventSchema,
    summary: executionSummarySchema.optional(),
  }),
  z.strictObject({ seq: z.number().int().positive(), session: z.string() }),
  z.strictObject({ keepalive: z.literal(true) }),
]);

/** One line of an execution's stream. */
export type AgentWireLine = z.infer<typeof agentWireLineSchema>;

/** `POST /v1/agent/executions` answer. */
export const executionStartedSchema = z.strictObject({ executionId: z.string() });

/** One execution as `GET /v1/agent/executions` lists it. */
export const executionInfoSchema = z.strictObject({
  executionId: z.string(),
  runtime: runtimeNameSchema,
  /** The execution actor's state while this execution runs; `ended` after. */
  state: z.string(),
  startedAt: z.number(),
  steps: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  limits: executionLimitsSchema,
  /** The last event's type and reason once ended. */
  outcome: z
    .strictObject({
      type: z.enum(['done', 'agent_failed']),
      reason: z.enum(AGENT_FAILURE_REASONS).optional(),
    })
    .nullable(),
});

/** One execution as listed. */
export type ExecutionInfo = z.infer<typeof executionInfoSchema>;

/** `GET /v1/agent/executions` answer. */
export const executionListSchema = z.strictObject({
  /** The running execution, if any. */
  current: z.string().nullable(),
  executions: z.array(executionInfoSchema),
});

/** `GET /v1/agent/executions` answer. */
export type ExecutionList = z.infer<typeof executionListSchema>;

/**
 * `POST /v1/agent/prepare`: with `configHash` (a configuration written first) the runtime starts with
 * that one, else with the one written last.
 */
export const prepareAgentSchema = z.strictObject({
  runtime: runtimeNameSchema,
  configHash: z.string().min(1).max(128).optional(),
});
