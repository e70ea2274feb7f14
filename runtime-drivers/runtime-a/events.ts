/**
 * opencode 1.18.33's NDJSON output (runtimes.md §1.8) as SPEC "Events". A line that is not an event
 * this parser knows is dropped (and counted by `RunAccumulator`), never thrown.
 */
import {
  truncateUtf8,
  type ParsedLine,
  type ParseOptions,
  type RuntimeEvent,
  type RuntimeFailure,
  type TokenUsage,
  type ToolCall,
} from '../run-accumulator.js';
import { DEFAULT_PARSE_OPTIONS } from '../run-accumulator.js';

export * from '../run-accumulator.js';

/** opencode's session ids. */
const OPENCODE_SESSION = /^ses_[A-Za-z0-9]{1,100}$/;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A token count: missing is 0; anything but a non-negative safe integer makes the line malformed. */
function count(value: unknown): number | undefined {
  if (value === undefined) return 0;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

function usageOf(tokens: unknown): TokenUsage | undefined {
  if (!isObject(tokens)) return undefined;
  const cache = tokens.cache ?? {};
  if (!isObject(cache)) return undefined;
  const input = count(tokens.input);
  const output = count(tokens.output);
  const reasoning = count(tokens.reasoning);
  const cacheRead = count(cache.read);
  const cacheWrite = count(cache.write);
  const total = count(tokens.total);
  if (
    input === undefined ||
    output === undefined ||
    reasoning === undefined ||
    cacheRead === undefined ||
    cacheWrite === undefined ||
    total === undefined
  ) {
    return undefined;
  }
  const sum = input + output + reasoning + cacheRead + cacheWrite;
  return {
    input,
    output,
    reasoning,
    cacheRead,
    cacheWrite,
    total: tokens.total === undefined ? sum : total,
  };
}

function toolCallOf(part: Json, options: ParseOptions): ToolCall | undefined {
  const { tool, state } = part;
  if (typeof tool !== 'string' || !isObject(state)) return undefined;
  const cut = (value: unknown): string =>
    truncateUtf8(typeof value === 'string' ? value : '', options.toolOutputBytes);
  switch (state.status) {
    case 'completed':
      return { name: tool, status: 'completed', input: state.input ?? {}, output: cut(state.output) };
    case 'error':
      return { name: tool, status: 'error', input: state.input ?? {}, output: cut(state.error) };
    // 1.18.33 emits finished tools only; a newer build may report one still running.
    case 'pending':
    case 'running':
      return { name: tool, status: 'running', input: state.input ?? {}, output: '' };
    default:
      return undefined;
  }
}

function eventOf(type: unknown, part: Json, options: ParseOptions): RuntimeEvent | 'skip' | undefined {
  switch (type) {
    case 'step_start':
      return { type: 'step_started' };
    case 'text':
      return typeof part.text === 'string' ? { type: 'text', text: part.text } : undefined;
    case 'reasoning':
      if (typeof part.text !== 'string') return undefined;
      return options.reasoning ? { type: 'reasoning', text: part.text } : 'skip';
    case 'tool_use': {
      const call = toolCallOf(part, options);
      return call === undefined ? undefined : { type: 'tool_call', ...call };
    }
    case 'step_finish': {
      const usage = usageOf(part.tokens);
      return usage === undefined ? undefined : { type: 'step_finished', usage };
    }
    default:
      return undefined;
  }
}

function failureOf(error: unknown): RuntimeFailure | undefined {
  if (!isObject(error) || typeof error.name !== 'string') return undefined;
  const data = isObject(error.data) ? error.data : {};
  return {
    name: error.name,
    statusCode: typeof data.statusCode === 'number' ? data.statusCode : undefined,
    retryable: typeof data.isRetryable === 'boolean' ? data.isRetryable : undefined,
  };
}

/**
 * Parses one line of `opencode run --format json` output.
 *
 * @example
 * ```ts
 * parseLine('{"type":"text","sessionID":"ses_1","part":{"text":"hi"}}');
 * // { kind: 'event', event: { type: 'text', text: 'hi' }, sessionId: 'ses_1' }
 * ```
 */
export function parseLine(line: string, options: ParseOptions = DEFAULT_PARSE_OPTIONS): ParsedLine {
  if (line.trim() === '') return { kind: 'skipped' };
  let envelope: unknown;
  try {
    envelope = JSON.parse(line);
  } catch {
    return { kind: 'dropped' };
  }
  if (!isObject(envelope)) return { kind: 'dropped' };
  // Only opencode's own shape is taken: the runtime is sandbox code, and the id goes back on a command line.
  const sessionId =
    typeof envelope.sessionID === 'string' && OPENCODE_SESSION.test(envelope.sessionID)
      ? envelope.sessionID
      : undefined;
  if (envelope.type === 'error') {
    const failure = failureOf(envelope.error);
    return failure === undefined ? { kind: 'dropped' } : { kind: 'failure', failure, sessionId };
  }
  if (!isObject(envelope.part)) return { kind: 'dropped' };
  const event = eventOf(envelope.type, envelope.part, options);
  if (event === undefined) return { kind: 'dropped' };
  if (event === 'skip') return { kind: 'skipped' };
  return { kind: 'event', event, sessionId };
}
