/**
 * One agent execution as its subscribers see it: the runtime's output lines turned into SPEC events
 * (`RunAccumulator`), numbered in a log that any holder of the sandbox's token can read from a cursor,
 * and closed by exactly one final event (`done` or `agent_failed`) carrying the summary. Live readers
 * get every line; what is kept for later readers is bounded (`DAEMON_KEPT_BYTES`, `maxOutputBytes`).
 */
import { StringDecoder } from 'node:string_decoder';
import { Observable, Subject } from 'rxjs';
import type {
  ExecutionInfo,
  AgentEvent,
  AgentWireLine,
  WireExecutionLimits,
  ExecutionSummary,
} from '../protocol/agent-wire.js';
import type { AgentFailureReason } from '../rules/agent-reasons.js';
import { RunAccumulator, type LineParser, type RuntimeEvent } from '../runtime-drivers/run-accumulator.js';

/**
 * Most a runtime line may hold: longer ones are dropped (and counted) as they arrive, so output without
 * newlines cannot grow sandboxd's memory.
 */
export const MAX_LINE_CHARS = 1024 * 1024;

/** Most output sandboxd keeps for one execution, whatever `maxOutputBytes` asks (the SDK keeps its own). */
export const DAEMON_KEPT_BYTES = 8 * 1024 * 1024;

/** Events that stay in the log past `maxOutputBytes`: the step boundaries limits are counted on. */
const ALWAYS_KEPT: ReadonlySet<string> = new Set(['step_started', 'step_finished']);

/** Tool output kept per call, in UTF-8 bytes (SPEC: `tool_call` output is truncated). */
const TOOL_OUTPUT_BYTES = 8192;

/** What an execution is made with. */
export interface ExecutionOptions {
  readonly id: string;
  readonly limits: WireExecutionLimits;
  readonly startedAt: number;
  /** The session the call continues, if any (the summary's until the runtime reports its own). */
  readonly sessionId: string | undefined;
  /** Emit `reasoning` events. */
  readonly reasoning: boolean;
  /** The runtime's line parser. */
  readonly parse: LineParser;
}

/** How an execution ended. */
export type ExecutionOutcomeEvent =
  { readonly type: 'done' } | { readonly type: 'agent_failed'; readonly reason: AgentFailureReason };

/** The wire line without its keepalive form. */
type NumberedLine = Exclude<AgentWireLine, { keepalive: true }>;

/** One execution. */
export class AgentExecution {
  /** The lines kept for readers that come later (past the kept bytes, only step boundaries). */
  readonly #lines: NumberedLine[] = [];
  #seq = 0;
  readonly #live = new Subject<NumberedLine>();
  readonly #run: RunAccumulator;
  /** Characters split across chunks are decoded whole. */
  readonly #decoder = new StringDecoder('utf8');
  #partial = '';
  /** True while the rest of an over-long line is being skipped. */
  #skipping = false;
  #keptBytes = 0;
  /** What this log keeps: `maxOutputBytes`, at most `DAEMON_KEPT_BYTES`. */
  readonly #keepBytes: number;
  #droppedLong = 0;
  #announcedSession = false;
  #outcome: ExecutionOutcomeEvent | undefined;
  #exitCode: number | null = null;

  readonly id: string;
  readonly limits: WireExecutionLimits;
  readonly startedAt: number;
  readonly #requestedSession: string | undefined;

  constructor(options: ExecutionOptions) {
    this.id = options.id;
    this.limits = options.limits;
    this.startedAt = options.startedAt;
    this.#requestedSession = options.sessionId;
    this.#keepBytes = Math.min(options.limits.maxOutputBytes, DAEMON_KEPT_BYTES);
    this.#run = new RunAccumulator(
      options.parse,
      { reasoning: options.reasoning, toolOutputBytes: TOOL_OUTPUT_BYTES },
      this.#keepBytes,
    );
  }

  /** Takes a chunk of the runtime's stdout; returns the events of the complete lines so far. */
  output(chunk: Uint8Array): RuntimeEvent[] {
    return this.#take(this.#decoder.write(chunk));
  }

  /** The rest of the output once the runtime's stdout closed. */
  flush(): RuntimeEvent[] {
    const events = this.#take(this.#decoder.end());
    const rest = this.#partial;
    this.#partial = '';
    return rest === '' ? events : [...events, ...this.#run.push(rest)];
  }

  /** The events of the complete lines of `text` (what follows the last newline waits for more). */
  #take(text: string): RuntimeEvent[] {
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop() ?? '';
    if (this.#skipping && lines.length > 0) {
      lines.shift(); // the end of the over-long line
      this.#skipping = false;
    }
    if (this.#skipping) this.#partial = '';
    else if (this.#partial.length > MAX_LINE_CHARS) {
      this.#partial = '';
      this.#skipping = true;
      this.#droppedLong += 1;
    }
    return lines.flatMap((line) => {
      if (line.length <= MAX_LINE_CHARS) return this.#run.push(line);
      this.#droppedLong += 1;
      return [];
    });
  }

  /** True when the runtime reported a failure of its own (an `error` event). */
  get runtimeReportedFailure(): boolean {
    return this.#run.summary().failure !== undefined;
  }

  /**
   * Logs one event: live readers get every one; past the kept bytes only step boundaries are kept for
   * readers that come later (the SDK applies `maxOutputBytes` to what it keeps, and counts what it drops).
   */
  emit(event: RuntimeEvent): void {
    this.#announceSession();
    const size = JSON.stringify(event).length;
    const keep = ALWAYS_KEPT.has(event.type) || this.#keptBytes + size <= this.#keepBytes;
    if (keep) this.#keptBytes += size;
    this.#append({ event: event as AgentEvent }, keep);
  }

  /** Records the runtime's exit code (null when a signal ended it). */
  exited(code: number | null): void {
    this.#exitCode = code;
  }

  /** Ends the execution with its final event and summary (once). */
  finish(outcome: ExecutionOutcomeEvent): void {
    if (this.#outcome !== undefined) return;
    this.#outcome = outcome;
    this.#announceSession();
    this.#append({ event: outcome, summary: this.summary() });
    this.#live.complete();
  }

  /** How it ended, once it has. */
  get outcome(): ExecutionOutcomeEvent | undefined {
    return this.#outcome;
  }

  /**
   * The execution as `GET /v1/agent/executions` lists it; `live` is the actor's view while it runs.
   */
  info(
    runtime: ExecutionInfo['runtime'],
    live?: { readonly state: string; readonly steps: number; readonly totalTokens: number },
  ): ExecutionInfo {
    const summary = this.summary();
    return {
      executionId: this.id,
      runtime,
      state: live?.state ?? 'ended',
      startedAt: this.startedAt,
      steps: live?.steps ?? summary.steps,
      totalTokens: live?.totalTokens ?? summary.usage.total,
      limits: this.limits,
      outcome: this.#outcome ?? null,
    };
  }

  /** What `AgentResult` is made of, so far. */
  summary(): ExecutionSummary {
    const run = this.#run.summary();
    return {
      text: run.text,
      sessionId: run.sessionId ?? this.#requestedSession ?? '',
      steps: run.steps,
      usage: run.usage,
      exitCode: this.#exitCode,
      toolCalls: run.toolCalls.map((call) => ({ ...call })),
      droppedLines: run.droppedLines + this.#droppedLong,
    };
  }

  /**
   * The kept lines after `after` (0: all), then every live one; completes after the final event.
   */
  lines(after = 0): Observable<NumberedLine> {
    return new Observable<NumberedLine>((subscriber) => {
      for (const line of this.#lines) if (line.seq > after) subscriber.next(line);
      if (this.#outcome !== undefined) {
        subscriber.complete();
        return undefined;
      }
      const last = this.#seq;
      const live = this.#live.subscribe({
        next: (line) => {
          if (line.seq > Math.max(after, last)) subscriber.next(line);
        },
        complete: () => subscriber.complete(),
      });
      return () => live.unsubscribe();
    });
  }

  #announceSession(): void {
    const session = this.#run.summary().sessionId;
    if (this.#announcedSession || session === undefined) return;
    this.#announcedSession = true;
    this.#append({ session });
  }

  /** Numbers a line and hands it to live readers; `keep` also keeps it for readers that come later. */
  #append(line: { event: AgentEvent; summary?: ExecutionSummary } | { session: string }, keep = true): void {
    const numbered = { ...line, seq: ++this.#seq } as NumberedLine;
    if (keep) this.#lines.push(numbered);
    this.#live.next(numbered);
  }
}
