/**
 * opencode 1.18.33's NDJSON output (runtimes.md §1.8) as SPEC "Events", plus what `AgentResult` needs.
 * A line that is not an event this parser knows is counted as dropped, never thrown.
 */

/** SPEC `TokenUsage` (TypeScript names: `cacheRead`, `cacheWrite`). Parts are disjoint, as opencode reports them: `input` excludes cached tokens,
 * `output` excludes reasoning, and `total` is their sum. */
export interface TokenUsage {
  readonly input: number;
  readonly output: number;
  readonly reasoning: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly total: number;
}

/** A tool call as SPEC's `tool_call` event and `AgentResult.toolCalls` carry it. */
export interface ToolCall {
  readonly name: string;
  readonly status: 'running' | 'completed' | 'error';
  readonly input: unknown;
  /** Tool output or error text, cut to the parser's limit. */
  readonly output: string;
}

/** The events of SPEC "Events" that runtime_a produces (`done`/`agent_failed` come from the driver). */
export type RuntimeEvent =
  | { readonly type: 'step_started' }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'reasoning'; readonly text: string }
  | ({ readonly type: 'tool_call' } & ToolCall)
  | { readonly type: 'step_finished'; readonly usage: TokenUsage };

/** opencode's `error` event, without its message (it may carry vendor text: SPEC "Errors"). */
export interface RuntimeFailure {
  readonly name: string;
  readonly statusCode: number | undefined;
  readonly retryable: boolean | undefined;
}

/** What one line gave. */
export type ParsedLine =
  | { readonly kind: 'event'; readonly event: RuntimeEvent; readonly sessionId: string | undefined }
  | { readonly kind: 'failure'; readonly failure: RuntimeFailure; readonly sessionId: string | undefined }
  /** A known line the caller did not ask for (reasoning without `reasoning: true`), or a blank line. */
  | { readonly kind: 'skipped' }
  | { readonly kind: 'dropped' };

/** Parser options. */
export interface ParseOptions {
  /** Emit `reasoning` events (SPEC: only when asked). */
  readonly reasoning: boolean;
  /** Longest tool output kept, in UTF-8 bytes. */
  readonly toolOutputBytes: number;
}

/** Defaults: no reasoning, 8 KiB of tool output. */
export const DEFAULT_PARSE_OPTIONS: ParseOptions = { reasoning: false, toolOutputBytes: 8192 };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const encoder = new TextEncoder();

/** Cuts `text` to at most `bytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, bytes: number): string {
  if (encoder.encode(text).length <= bytes) return text;
  let used = 0;
  let out = '';
  for (const char of text) {
    const size = encoder.encode(char).length;
    if (used + size > bytes) break;
    used += size;
    out += char;
  }
  return out;
}

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
  const sessionId =
    typeof envelope.sessionID === 'string' && envelope.sessionID !== '' ? envelope.sessionID : undefined;
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

/** What `AgentResult` needs from the output, so far. */
export interface RunSummary {
  /** Last `text`. */
  readonly text: string;
  /** `step_started` events seen. */
  readonly steps: number;
  /** Sum of the `step_finished` usages. */
  readonly usage: TokenUsage;
  /** Every tool call, in order. */
  readonly toolCalls: readonly ToolCall[];
  /** The session id opencode reported first. */
  readonly sessionId: string | undefined;
  /** Lines dropped as unknown or malformed. */
  readonly droppedLines: number;
  /** The last `error` event, if any. */
  readonly failure: RuntimeFailure | undefined;
}

const ZERO: TokenUsage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 0 };

/**
 * Feeds lines through `parseLine` and keeps a running `RunSummary`.
 *
 * @example
 * ```ts
 * const run = new RunAccumulator();
 * for (const line of lines) for (const event of run.push(line)) emit(event);
 * run.summary().usage.total;
 * ```
 */
export class RunAccumulator {
  private text = '';
  private steps = 0;
  private usage: TokenUsage = ZERO;
  private readonly toolCalls: ToolCall[] = [];
  private sessionId: string | undefined;
  private droppedLines = 0;
  private failure: RuntimeFailure | undefined;

  #keptToolCallBytes = 0;

  /**
   * @param options - what the parser emits
   * @param keepBytes - tool calls kept for the summary, by their JSON size; later ones are not kept
   *   (their events are still returned)
   */
  constructor(
    private readonly options: ParseOptions = DEFAULT_PARSE_OPTIONS,
    private readonly keepBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** Takes one line; returns the events to emit (zero or one). */
  push(line: string): RuntimeEvent[] {
    const parsed = parseLine(line, this.options);
    if (parsed.kind === 'dropped') this.droppedLines += 1;
    if (parsed.kind === 'dropped' || parsed.kind === 'skipped') return [];
    this.sessionId ??= parsed.sessionId;
    if (parsed.kind === 'failure') {
      this.failure = parsed.failure;
      return [];
    }
    const { event } = parsed;
    if (event.type === 'step_started') this.steps += 1;
    else if (event.type === 'text') this.text = event.text;
    else if (event.type === 'tool_call') {
      const { name, status, input, output } = event;
      const call = { name, status, input, output };
      const size = JSON.stringify(call).length;
      if (this.#keptToolCallBytes + size <= this.keepBytes) {
        this.#keptToolCallBytes += size;
        this.toolCalls.push(call);
      }
    } else if (event.type === 'step_finished') {
      const u = event.usage;
      this.usage = {
        input: this.usage.input + u.input,
        output: this.usage.output + u.output,
        reasoning: this.usage.reasoning + u.reasoning,
        cacheRead: this.usage.cacheRead + u.cacheRead,
        cacheWrite: this.usage.cacheWrite + u.cacheWrite,
        total: this.usage.total + u.total,
      };
    }
    return [event];
  }

  /** The summary so far. */
  summary(): RunSummary {
    return {
      text: this.text,
      steps: this.steps,
      usage: this.usage,
      toolCalls: [...this.toolCalls],
      sessionId: this.sessionId,
      droppedLines: this.droppedLines,
      failure: this.failure,
    };
  }
}
