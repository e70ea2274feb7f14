/**
 * The agent's public data types (SPEC "Events", "AgentResult and TokenUsage"): the events of an
 * execution as sandboxd sends them (`protocol/agent-wire.ts`), the result built from its summary, and
 * what `sbx.agent.executions()` lists.
 */
import type {
  AgentEvent,
  ExecutionSummary,
  executionInfoSchema,
  executionListSchema,
  tokenUsageSchema,
} from '../protocol/agent-wire.js';
import type { z } from 'zod';

export type { AgentEvent };

/** SPEC `TokenUsage`: tokens of one step (`step_finished`) or of the whole execution (`AgentResult`). */
export type TokenUsage = Readonly<z.infer<typeof tokenUsageSchema>>;

/** A step begins. */
export type StepStarted = Extract<AgentEvent, { type: 'step_started' }>;
/** The complete text of one part (runtime_a emits no deltas). */
export type Text = Extract<AgentEvent, { type: 'text' }>;
/** A streamed text chunk (runtime_b only). */
export type TextDelta = Extract<AgentEvent, { type: 'text_delta' }>;
/** Reasoning text, only when the call asked for `reasoning`. */
export type Reasoning = Extract<AgentEvent, { type: 'reasoning' }>;
/** A tool call: `name`, `status` (`running`, `completed`, `error`), `input`, `output` (truncated). */
export type ToolCall = Extract<AgentEvent, { type: 'tool_call' }>;
/** A step ends, with its `usage`. */
export type StepFinished = Extract<AgentEvent, { type: 'step_finished' }>;
/** The execution failed or was stopped: the last event, with its `reason`. */
export type AgentFailed = Extract<AgentEvent, { type: 'agent_failed' }>;
/** The execution ended normally: the last event. */
export type Done = Extract<AgentEvent, { type: 'done' }>;

/** One entry of `AgentResult.toolCalls`. */
export type AgentToolCall = Readonly<ExecutionSummary['toolCalls'][number]>;

/**
 * What a finished execution produced (SPEC "AgentResult"). Frozen.
 *
 * @example
 * ```ts
 * const { text, sessionId, usage } = await sbx.agent.run('add a test', { spec });
 * await sbx.agent.run('now run it', { spec, sessionId }); // the same session, continued
 * ```
 */
export interface AgentResult {
  /** The last assistant text. */
  readonly text: string;
  /** The session to continue with the `sessionId` call option. */
  readonly sessionId: string;
  /** Number of steps. */
  readonly steps: number;
  /** Tokens of the whole execution. */
  readonly usage: TokenUsage;
  /** The runtime's exit code; null when a signal ended it or it never started. */
  readonly exitCode: number | null;
  /** Tool calls in order (those beyond `maxOutputBytes` are not kept). */
  readonly toolCalls: readonly AgentToolCall[];
  /** Runtime output lines discarded: by sandboxd, and by the SDK beyond `maxOutputBytes`. */
  readonly droppedLines: number;
}

/** One execution as `sbx.agent.executions()` lists it. */
export type ExecutionInfo = Readonly<z.infer<typeof executionInfoSchema>>;

/** `sbx.agent.executions()`: the running execution's id (or null) and every execution sandboxd knows. */
export type ExecutionList = Readonly<z.infer<typeof executionListSchema>>;

/** The last event types: every stream ends with one of them. */
export function isLastEvent(event: AgentEvent): event is AgentFailed | Done {
  return event.type === 'done' || event.type === 'agent_failed';
}

/** UTF-8 size of a value as JSON: what keeping it costs against `maxOutputBytes`. */
export function keptSize(value: object): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** `value`, frozen all the way down (events and results are shared between readers). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** At most `maxBytes` of `text` in UTF-8, cut on a character boundary. */
function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  // A character cut in half decodes as U+FFFD at the end: drop it.
  return cut.endsWith('\uFFFD') && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}

/**
 * The `AgentResult` of a summary: text and tool calls kept within `maxOutputBytes` (the text first,
 * then tool calls in order while they fit), `droppedLines` the daemon's count plus `droppedBySdk`.
 */
export function resultOf(
  summary: ExecutionSummary,
  maxOutputBytes: number,
  droppedBySdk: number,
): AgentResult {
  const text = truncateUtf8(summary.text, maxOutputBytes);
  let budget = maxOutputBytes - Buffer.byteLength(text, 'utf8');
  const toolCalls: AgentToolCall[] = [];
  for (const call of summary.toolCalls) {
    const size = keptSize(call);
    if (size > budget) break;
    budget -= size;
    toolCalls.push(call);
  }
  return deepFreeze({
    text,
    sessionId: summary.sessionId,
    steps: summary.steps,
    usage: { ...summary.usage },
    exitCode: summary.exitCode,
    toolCalls: structuredClone(toolCalls),
    droppedLines: summary.droppedLines + droppedBySdk,
  });
}
