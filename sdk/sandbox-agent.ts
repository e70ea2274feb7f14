/**
 * `sbx.agent` (SPEC "SDK operations", "Agent execution on one sandbox"): runs a coding agent in the
 * sandbox, streams its events, lists executions and attaches to them from any process holding the
 * sandbox's token. Creating it makes no call. Every argument is checked before any call; every call goes
 * through the handle's daemon client, so an ended sandbox refuses it before any traffic.
 */
import { deepFreeze, type AgentResult, type ExecutionList } from './agent-events.js';
import {
  agentWireLineSchema,
  executionListSchema,
  prepareAgentSchema,
  type AgentEvent,
  type StartExecution,
} from '../protocol/agent-wire.js';
import { defer, from, switchMap, type Observable } from 'rxjs';
import { resumableFeed } from '../protocol/resumable-feed.js';
import { InvalidArgumentError } from '../rules/errors.js';
import { checkAgentGateways } from './agent-checks.js';
import { agentRequestWrite } from './agent-request.js';
import { attachedExecution, ConfigWrites, newExecution, type ExecutionPlan } from './agent-execution.js';
import {
  parseAttachOptions,
  parsePrepareOptions,
  parseRunOptions,
  runtimeName,
  type AttachOptions,
  type PrepareOptions,
  type RunOptions,
} from './agent-options.js';
import { AgentStream } from './agent-stream.js';
import type { DaemonClient } from './daemon-client.js';
import { checkSpecForRuntime, entrypointOf } from './runtimes.js';
import type { SandboxGateways } from './sandbox-gateways.js';
import { z } from 'zod';

const emptySchema = z.object({});

/** One event of `sbx.agent.events$`: the execution, the event's cursor in it, the event. */
export interface AgentFeedEvent {
  readonly executionId: string;
  readonly cursor: number;
  readonly event: AgentEvent;
}

/** What the agent of one handle works with. */
export interface SandboxAgentContext {
  readonly sandboxId: string;
  /** The handle's daemon client (its calls refuse before any traffic once the sandbox ended). */
  readonly client: DaemonClient;
  /** The handle's gateways: routes with their listeners, and definitions on the creating handle. */
  readonly gateways: SandboxGateways;
}

/**
 * The agent of one sandbox.
 *
 * @example
 * ```ts
 * const spec = new AgentSpec({ model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }) });
 * const result = await sbx.agent.run('make the tests pass', { spec });
 * for await (const event of sbx.agent.stream('explain the change', { spec, sessionId: result.sessionId })) {
 *   if (event.type === 'text') console.log(event.text);
 * }
 * ```
 */
export class SandboxAgent {
  /** The sandbox id. */
  readonly sandboxId: string;
  readonly #client: DaemonClient;
  readonly #gateways: SandboxGateways;
  /** Configuration hashes this handle has written. */
  readonly #configs = new ConfigWrites();

  /** @internal */
  constructor(context: SandboxAgentContext) {
    this.sandboxId = context.sandboxId;
    this.#client = context.client;
    this.#gateways = context.gateways;
    Object.freeze(this);
  }

  /**
   * Runs the agent on `prompt` until it ends.
   *
   * @throws InvalidArgumentError for a malformed option or a spec the handle's gateways cannot serve,
   *   before any call
   * @throws AgentError with the reason when the execution fails (busy, timeout, aborted…)
   * @throws SandboxError on a sandbox or transport failure
   */
  async run(prompt: string, options: RunOptions): Promise<AgentResult> {
    const stream = this.#stream('agent.run', prompt, options);
    try {
      return await stream.result();
    } finally {
      stream.close();
    }
  }

  /**
   * Starts the agent on `prompt` and returns its events as they arrive. It never throws for an agent
   * failure: that is the stream's last event, `agent_failed`.
   *
   * @throws InvalidArgumentError for a malformed option or a spec the handle's gateways cannot serve,
   *   before any call (synchronously)
   */
  stream(prompt: string, options: RunOptions): AgentStream {
    return this.#stream('agent.stream', prompt, options);
  }

  /**
   * Starts warming the runtime up in the background and returns at once; a failure of the warm-up is
   * ignored. sandboxd starts a runtime with `spec`'s configuration (written first), or without a spec
   * with the configuration written last, which the next run adopts when it fits (same spec and working
   * directory, a new session, the spec's model, no reasoning). A memory snapshot taken then holds the
   * warmed runtime, and a sandbox started from it adopts it too. runtime_b has nothing to warm up in
   * this release.
   *
   * @example
   * ```ts
   * sbx.agent.prepare({ spec });
   * const snapshot = await sbx.snapshot(); // gVisor: copies start with the runtime warm
   * ```
   * @throws InvalidArgumentError for a malformed option, or a spec the handle's gateways cannot serve
   */
  prepare(options: PrepareOptions = {}): void {
    const { runtime, spec } = parsePrepareOptions(options);
    if (runtime !== 'runtime_a') return;
    let written: Promise<string | undefined> = Promise.resolve(undefined);
    if (spec !== undefined) {
      checkSpecForRuntime(spec, 'runtime_a');
      checkAgentGateways('agent.prepare', spec, undefined, this.#gateways);
      const config = agentRequestWrite('agent.prepare', runtime, spec, {});
      written = this.#configs.ensure(this.#client, config).then(() => config.hash);
    }
    written
      .then((configHash) => {
        const body = prepareAgentSchema.parse({
          runtime,
          ...(configHash === undefined ? {} : { configHash }),
        });
        return this.#client.call('POST', '/v1/agent/prepare', emptySchema, body);
      })
      .catch(() => undefined);
  }

  /** The executions sandboxd knows, and the running one's id (`current`, or null). */
  async executions(): Promise<ExecutionList> {
    return deepFreeze(await this.#client.call('GET', '/v1/agent/executions', executionListSchema));
  }

  /**
   * The running execution's events as they happen, from its start, each with the execution's id and
   * its `cursor`; a broken connection goes on after the last cursor, so nothing is missed or repeated.
   * Completes after the last event (`done` or `agent_failed`); errors with `InvalidArgumentError` when
   * no execution runs. Any process holding the sandbox's token can read it.
   *
   * @example
   * ```ts
   * sbx.agent.events$.subscribe(({ event }) => console.log(event.type));
   * ```
   */
  get events$(): Observable<AgentFeedEvent> {
    return defer(() => from(this.executions())).pipe(
      switchMap(({ current }) => {
        if (current === null) {
          throw new InvalidArgumentError('agent.events$: no execution is running', { field: 'executionId' });
        }
        const parse = (value: unknown): AgentFeedEvent | undefined => {
          const line = agentWireLineSchema.safeParse(value).data;
          return line !== undefined && 'event' in line
            ? { executionId: current, cursor: line.seq, event: line.event }
            : undefined;
        };
        return resumableFeed(
          (after) =>
            this.#client.feed(`/v1/agent/executions/${current}/events?after=${String(after ?? 0)}`, parse),
          (record) => record.cursor,
        );
      }),
    );
  }

  /**
   * Attaches to an execution (the running one by default) from this or another process holding the
   * sandbox's token: its events from the start, or after `after` (a `cursor`). Its `abort()` stops
   * the execution.
   *
   * @example
   * ```ts
   * const other = await Sandbox.connect(sandboxId, { accessToken });
   * const stream = await other.agent.attach();
   * for await (const event of stream) console.log(event.type, stream.cursor);
   * ```
   * @throws InvalidArgumentError for a malformed option, when no execution runs and none is named, or
   *   when sandboxd has no execution of that id
   */
  async attach(executionId?: string, options: AttachOptions = {}): Promise<AgentStream> {
    const o = parseAttachOptions(executionId, options);
    const list = await this.executions();
    const id = o.executionId ?? list.current;
    if (id === null) {
      throw new InvalidArgumentError('agent.attach: executionId: no execution is running; name one', {
        field: 'executionId',
      });
    }
    const info = list.executions.find((execution) => execution.executionId === id);
    if (info === undefined) {
      throw new InvalidArgumentError('agent.attach: executionId: the sandbox has no such execution', {
        field: 'executionId',
      });
    }
    return new AgentStream(attachedExecution(this.#client, id, o.after), {
      maxOutputBytes: o.maxOutputBytes ?? info.limits.maxOutputBytes,
      after: o.after,
    });
  }

  #stream(operation: string, prompt: string, options: RunOptions): AgentStream {
    const { plan, signal } = this.#plan(operation, prompt, options);
    return new AgentStream(newExecution(this.#client, this.#configs, plan), {
      maxOutputBytes: plan.start.limits.maxOutputBytes,
      signal,
    });
  }

  /** Every check, then the calls' bodies; throws before any call. */
  #plan(
    operation: string,
    prompt: unknown,
    options: unknown,
  ): { readonly plan: ExecutionPlan; readonly signal: AbortSignal | undefined } {
    const { prompt: text, options: o } = parseRunOptions(operation, prompt, options);
    checkSpecForRuntime(o.spec, o.runtime);
    checkAgentGateways(operation, o.spec, o.model, this.#gateways);
    const runtime = runtimeName(o.runtime);
    const entrypoint = entrypointOf(o.runtime);
    const config = agentRequestWrite(
      operation,
      runtime,
      o.spec,
      entrypoint === undefined ? {} : { entrypoint },
    );
    const { limits } = o;
    if (o.sessionId !== undefined && !o.sessionId.startsWith(runtime === 'runtime_b' ? 'rda_' : 'ses_')) {
      throw new InvalidArgumentError(`${operation}: sessionId: is a session of the other runtime`, {
        field: 'sessionId',
      });
    }
    const start: StartExecution = {
      runtime,
      configHash: config.hash,
      ...(o.sessionId === undefined ? {} : { sessionId: o.sessionId }),
      ...(o.model === undefined ? {} : { model: o.model }),
      limits: {
        timeoutMs: limits.timeoutMs,
        maxSteps: limits.maxSteps,
        maxTotalTokens: limits.maxTotalTokens,
        maxOutputBytes: limits.maxOutputBytes,
      },
      workdir: o.workdir,
      reasoning: o.reasoning,
    };
    return { plan: { config, start, prompt: text }, signal: o.signal };
  }
}
