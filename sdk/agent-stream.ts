/// <reference lib="esnext.disposable" />
/**
 * `AgentStream` (SPEC "SDK operations"): one agent execution's events as they arrive, read once from
 * sandboxd and shared by iteration, `result()` and `events$`. An agent failure (busy, timeout, aborted…)
 * is its last event, `agent_failed`, never an exception; sandbox and transport failures are exceptions,
 * and a stream that ends without a last event is one (`SandboxError`).
 *
 * The reading follows its readers: a line is read when an iteration step waits, an `events$` observer is
 * subscribed or `result()` was called, so a slow `for await` loop holds the daemon back instead of
 * piling events up in memory.
 */
import type { Observable } from 'rxjs';
import { agentWireLineSchema, type AgentEvent, type ExecutionSummary } from '../protocol/agent-wire.js';
import type { AgentFailureReason } from '../rules/agent-reasons.js';
import { AgentError, SandboxError, SdkError } from '../rules/errors.js';
import { AgentEventHub } from './agent-event-hub.js';
import {
  deepFreeze,
  isLastEvent,
  resultOf,
  type AgentFailed,
  type AgentResult,
  type Done,
} from './agent-events.js';

/** What the stream tells its source while the source opens the execution. */
export interface OpenControl {
  /** True once `close()` was called: start nothing more. */
  closed(): boolean;
  /** True once an abort was asked (by `abort()` or the call's signal). */
  abortRequested(): boolean;
  /** Ends the reading of the answer; aborted by `close()` once the stream reads. */
  readonly signal: AbortSignal;
  /**
   * The execution started. Returns the abort call when an abort was asked before (the source then
   * reads the events instead of sending the prompt).
   */
  started(executionId: string): Promise<void> | undefined;
}

/** What opening gave: the execution's wire lines, a refusal, or nothing (the stream was closed). */
export type Opened =
  | { readonly kind: 'lines'; readonly lines: AsyncIterable<unknown> }
  | { readonly kind: 'refused'; readonly reason: AgentFailureReason }
  | { readonly kind: 'closed' };

/** Where a stream's lines come from: a new execution, or one attached to. */
export interface AgentStreamSource {
  /** The execution id when it is known before opening (an attached stream). */
  readonly executionId?: string;
  /** Opens the execution's event stream (the calls of a new execution, or the events call). */
  open(control: OpenControl): Promise<Opened>;
  /** `POST /v1/agent/executions/:id/abort`. */
  abort(executionId: string): Promise<void>;
}

/** Options of a stream, from the call that made it. */
export interface AgentStreamOptions {
  /** What the SDK keeps of the events and of the result (`AgentLimits.maxOutputBytes`). */
  readonly maxOutputBytes: number;
  /** The call's abort signal. */
  readonly signal?: AbortSignal | undefined;
  /** The cursor the stream starts after (attach). */
  readonly after?: number;
}

/**
 * The events of one agent execution, from `sbx.agent.stream()` or `sbx.agent.attach()`.
 *
 * Iterating it, `result()` and `events$` share one reading. Leaving a `for await` loop early does not
 * close it (`result()` can follow); `close()` it, or declare it with `await using`, when done. A loop
 * that keeps up sees every event; one that lags behind an observer or `result()` by more than
 * `maxOutputBytes` misses the events beyond the cap (counted in `droppedLines`).
 *
 * @example
 * ```ts
 * await using stream = sbx.agent.stream('fix the failing test', { spec });
 * for await (const event of stream) {
 *   if (event.type === 'tool_call') console.log(event.name, event.status);
 * }
 * const result = await stream.result(); // or AgentError with the reason
 * ```
 */
export class AgentStream implements AsyncIterable<AgentEvent> {
  /**
   * The same events as an RxJS observable: each observer gets the events from the start (those kept
   * within `maxOutputBytes`) and then each new one; it errors on a sandbox or transport failure.
   */
  readonly events$: Observable<AgentEvent>;
  readonly #source: AgentStreamSource;
  readonly #hub: AgentEventHub;
  readonly #maxBytes: number;
  readonly #signal: AbortSignal | undefined;
  readonly #onSignal = (): void => {
    this.abort().catch(() => undefined); // the stream still ends with the daemon's last event
  };
  readonly #readAbort = new AbortController();
  readonly #finished: Promise<void>;
  #markFinished: () => void = () => undefined;
  #executionId: string | undefined;
  #sessionId: string | undefined;
  #cursor: number;
  #last: { readonly event: AgentFailed | Done; readonly summary: ExecutionSummary | undefined } | undefined;
  #result: AgentResult | undefined;
  #failure: SdkError | undefined;
  #closed = false;
  #reading = false;
  #opening = true;
  #draining = false;
  #abortRequested = false;
  #abortCall: Promise<void> | undefined;
  readonly #abortWaiters: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  #wake: (() => void) | undefined;

  /** @internal Made by `sbx.agent.stream()` and `sbx.agent.attach()`. */
  constructor(source: AgentStreamSource, options: AgentStreamOptions) {
    this.#source = source;
    this.#maxBytes = options.maxOutputBytes;
    this.#executionId = source.executionId;
    this.#cursor = options.after ?? 0;
    this.#hub = new AgentEventHub(options.maxOutputBytes, () => this.#wakeUp());
    this.events$ = this.#hub.observable();
    this.#finished = new Promise((resolve) => (this.#markFinished = resolve));
    this.#signal = options.signal;
    // An already-aborted signal: the source makes no call and the stream holds `agent_failed aborted`.
    if (options.signal?.aborted === true) this.#abortRequested = true;
    else options.signal?.addEventListener('abort', this.#onSignal, { once: true });
    void this.#run();
  }

  /** The execution id, once sandboxd has started it (at once for an attached stream). */
  get executionId(): string | undefined {
    return this.#executionId;
  }

  /** The session id, once sandboxd has reported it (its `session` line, or the summary at the end). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** Runtime output lines discarded so far: beyond `maxOutputBytes` here, and by sandboxd (at the end). */
  get droppedLines(): number {
    return this.#hub.dropped + (this.#last?.summary?.droppedLines ?? 0);
  }

  /**
   * The sequence number of the last line read from sandboxd (0 before any): give it as `after` to
   * `sbx.agent.attach()` to read on from there, from this process or another.
   */
  get cursor(): number {
    return this.#cursor;
  }

  /** The events in order; the last is `done` or `agent_failed`. Throws on a sandbox or transport failure. */
  [Symbol.asyncIterator](): AsyncIterator<AgentEvent, undefined> {
    return {
      next: () => this.#hub.next(),
      return: () => Promise.resolve({ value: undefined, done: true }),
    };
  }

  /**
   * Reads the rest of the stream and returns the execution's result.
   *
   * @throws AgentError with the reason when the execution ended with `agent_failed`
   * @throws SandboxError (or another SDK exception) on a sandbox or transport failure, or when the
   *   stream was closed before its last event
   */
  async result(): Promise<AgentResult> {
    this.#draining = true;
    this.#wakeUp();
    await this.#finished;
    const last = this.#last;
    if (last?.event.type === 'agent_failed') throw new AgentError(last.event.reason);
    if (this.#result !== undefined) return this.#result;
    if (this.#failure !== undefined) throw this.#failure;
    throw new SandboxError('the agent stream was closed before its last event; attach to read it again');
  }

  /**
   * Stops the execution (sandboxd freezes and kills its tree); the stream then ends with
   * `agent_failed` `aborted`. Resolves once the abort call was answered; nothing happens after the
   * last event.
   */
  abort(): Promise<void> {
    if (this.#last !== undefined || this.#failure !== undefined) return Promise.resolve();
    this.#abortRequested = true;
    const id = this.#executionId;
    if (id !== undefined) return this.#sendAbort(id);
    if (!this.#opening) return Promise.resolve(); // nothing was started
    return new Promise((resolve, reject) => this.#abortWaiters.push({ resolve, reject }));
  }

  /**
   * Stops reading: iteration ends, observers complete, the connection is released. The execution goes
   * on (abort it with `abort()`); `sbx.agent.attach()` reads it again.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#reading) this.#readAbort.abort();
    this.#wakeUp();
    this.#hub.end({ kind: 'complete' });
  }

  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    this.close();
    return Promise.resolve();
  }

  async #run(): Promise<void> {
    try {
      const opened = await this.#source.open(this.#control());
      this.#opening = false;
      this.#settleAbortWaiters(undefined);
      if (this.#closed) {
        if (opened.kind === 'lines') this.#readAbort.abort();
        return;
      }
      if (opened.kind === 'refused') this.#end({ type: 'agent_failed', reason: opened.reason }, undefined);
      else if (opened.kind === 'lines') await this.#read(opened.lines);
    } catch (error) {
      this.#opening = false;
      this.#settleAbortWaiters(undefined);
      if (!this.#closed) {
        this.#failure =
          error instanceof SdkError ? error : new SandboxError('the agent event stream of the sandbox broke');
        this.#hub.end({ kind: 'error', error: this.#failure });
      }
    } finally {
      this.#signal?.removeEventListener('abort', this.#onSignal);
      this.#markFinished();
    }
  }

  #control(): OpenControl {
    return {
      closed: () => this.#closed,
      abortRequested: () => this.#abortRequested,
      signal: this.#readAbort.signal,
      started: (executionId) => {
        this.#executionId = executionId;
        if (!this.#abortRequested) return undefined;
        const call = this.#sendAbort(executionId);
        this.#settleAbortWaiters(call);
        return call;
      },
    };
  }

  /** Reads wire lines while someone waits, until the last event. */
  async #read(lines: AsyncIterable<unknown>): Promise<void> {
    this.#reading = true;
    const iterator = lines[Symbol.asyncIterator]();
    try {
      for (;;) {
        await this.#demand();
        if (this.#closed) return;
        const step = await iterator.next();
        if (this.#isClosed()) return; // closed while the line was read
        if (step.done === true) throw new SandboxError('the agent event stream ended before its last event');
        const parsed = agentWireLineSchema.safeParse(step.value);
        if (!parsed.success) throw new SandboxError('malformed line in the agent event stream');
        const line = parsed.data;
        if (!('seq' in line)) continue; // keepalive
        this.#cursor = line.seq;
        if ('session' in line) {
          this.#sessionId = line.session;
          continue;
        }
        const event = deepFreeze(line.event);
        if (!isLastEvent(event)) {
          this.#hub.publish(event);
          continue;
        }
        if (event.type === 'done' && line.summary === undefined) {
          throw new SandboxError('the last event of the agent stream carried no summary');
        }
        this.#end(event, line.summary);
        return;
      }
    } finally {
      this.#reading = false;
      this.#readAbort.abort();
      iterator.return?.().catch(() => undefined);
    }
  }

  /** The last event: the result is settled, then the event published and the events ended. */
  #end(event: AgentFailed | Done, summary: ExecutionSummary | undefined): void {
    this.#last = { event, summary };
    if (summary !== undefined) {
      this.#sessionId = summary.sessionId;
      if (event.type === 'done') this.#result = resultOf(summary, this.#maxBytes, this.#hub.dropped);
    }
    this.#hub.publish(event);
    this.#hub.end({ kind: 'complete' });
  }

  /** Resolves when someone waits for a line: an iteration step, an observer, `result()`, or `close()`. */
  #demand(): Promise<void> {
    if (this.#closed || this.#draining || this.#hub.wantsMore()) return Promise.resolve();
    return new Promise((resolve) => (this.#wake = resolve));
  }

  #isClosed(): boolean {
    return this.#closed;
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #sendAbort(executionId: string): Promise<void> {
    this.#abortCall ??= this.#source.abort(executionId);
    return this.#abortCall;
  }

  #settleAbortWaiters(call: Promise<void> | undefined): void {
    for (const waiter of this.#abortWaiters.splice(0)) {
      if (call === undefined) waiter.resolve();
      else call.then(waiter.resolve, waiter.reject);
    }
  }
}
