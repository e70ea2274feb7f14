/**
 * What every runtime's output becomes (SPEC "Events", `AgentResult`), whatever its own format: the
 * runtime events, what one line gave, and `RunAccumulator`, which keeps the running summary. Each
 * runtime folder has its line parser (`runtime-a/events.ts`, `runtime-b/events.ts`).
 */

/**
 * SPEC `TokenUsage` (TypeScript names: `cacheRead`, `cacheWrite`). Parts are disjoint: `input` excludes
 * cached tokens, `output` excludes reasoning, and `total` is their sum (each parser converts to this).
 */
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

/** The events of SPEC "Events" a runtime produces (`done`/`agent_failed` come from the driver). */
export type RuntimeEvent =
  | { readonly type: 'step_started' }
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'text_delta'; readonly text: string }
  | { readonly type: 'reasoning'; readonly text: string }
  | ({ readonly type: 'tool_call' } & ToolCall)
  | { readonly type: 'step_finished'; readonly usage: TokenUsage };

/** A runtime's failure report, without its message (it may carry vendor text: SPEC "Errors"). */
export interface RuntimeFailure {
  readonly name: string;
  readonly statusCode: number | undefined;
  readonly retryable: boolean | undefined;
}

/** What one line gave. */
export type ParsedLine =
  | { readonly kind: 'event'; readonly event: RuntimeEvent; readonly sessionId: string | undefined }
  | { readonly kind: 'failure'; readonly failure: RuntimeFailure; readonly sessionId: string | undefined }
  /** The session id, on a line of its own (runtime_b). */
  | { readonly kind: 'session'; readonly sessionId: string }
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

/** A runtime's line parser. */
export type LineParser = (line: string, options: ParseOptions) => ParsedLine;

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
 * const run = new RunAccumulator(parseLine);
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
    private readonly parse: LineParser,
    private readonly options: ParseOptions = DEFAULT_PARSE_OPTIONS,
    private readonly keepBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** Takes one line; returns the events to emit (zero or one). */
  push(line: string): RuntimeEvent[] {
    const parsed = this.parse(line, this.options);
    if (parsed.kind === 'dropped') this.droppedLines += 1;
    if (parsed.kind === 'dropped' || parsed.kind === 'skipped') return [];
    this.sessionId ??= parsed.sessionId;
    if (parsed.kind === 'session') return [];
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
