/**
 * The daemon calls of agent executions (`protocol/agent-wire.ts`), as the sources of `AgentStream`s. A
 * new execution is 2 calls when sandboxd already holds its configuration (start, then the prompt whose
 * answer is the event stream) and 3 when it does not (the configuration written first); an attached
 * stream is the events call.
 */
import { z } from 'zod';
import {
  executionStartedSchema,
  type AgentConfigWrite,
  type StartExecution,
} from '../protocol/agent-wire.js';
import type { AgentFailureReason } from '../rules/agent-reasons.js';
import { AgentError, SandboxError } from '../rules/errors.js';
import type { AgentStreamSource, OpenControl, Opened } from './agent-stream.js';
import type { DaemonClient } from './daemon-client.js';

const configWrittenSchema = z.object({ hash: z.string() });
const emptySchema = z.object({});

/** The path of execution `id`, and of its sub-resource `rest`. */
export function executionPath(id: string, rest = ''): string {
  return `/v1/agent/executions/${encodeURIComponent(id)}${rest}`;
}

/**
 * The configurations one sandbox handle has written, by hash, so an unchanged one is not written again.
 * A write in flight is shared; a failed one is forgotten.
 */
export class ConfigWrites {
  readonly #written = new Map<string, Promise<void>>();

  /** Writes `config` unless this handle already has. */
  ensure(client: DaemonClient, config: AgentConfigWrite): Promise<void> {
    const known = this.#written.get(config.hash);
    if (known !== undefined) return known;
    const write = client.call('PUT', '/v1/agent/config', configWrittenSchema, config).then(() => undefined);
    this.#written.set(config.hash, write);
    write.catch(() => {
      if (this.#written.get(config.hash) === write) this.#written.delete(config.hash);
    });
    return write;
  }

  /** sandboxd no longer holds `hash` (it restarted, or another process wrote others). */
  forget(hash: string): void {
    this.#written.delete(hash);
  }
}

/** A new execution: its configuration, its start and its prompt. */
export interface ExecutionPlan {
  readonly config: AgentConfigWrite;
  readonly start: StartExecution;
  readonly prompt: string;
}

/** sandboxd's refusal of a start whose configuration it does not hold. */
function configurationMissing(error: unknown): boolean {
  return error instanceof SandboxError && error.code === 'agent_config_missing';
}

type Started =
  | { readonly kind: 'started'; readonly executionId: string }
  | { readonly kind: 'refused'; readonly reason: AgentFailureReason };

/** The start call; a configuration sandboxd lost is written again and the start tried once more. */
async function start(client: DaemonClient, configs: ConfigWrites, plan: ExecutionPlan): Promise<Started> {
  for (let attempt = 0; ; attempt++) {
    try {
      const { executionId } = await client.call(
        'POST',
        '/v1/agent/executions',
        executionStartedSchema,
        plan.start,
      );
      return { kind: 'started', executionId };
    } catch (error) {
      // busy, runtime_missing: the stream holds just `agent_failed` with the reason.
      if (error instanceof AgentError) return { kind: 'refused', reason: error.reason };
      if (attempt > 0 || !configurationMissing(error)) throw error;
      configs.forget(plan.config.hash);
      await configs.ensure(client, plan.config);
    }
  }
}

/** `POST /v1/agent/executions/:id/abort`. */
export async function abortExecution(client: DaemonClient, executionId: string): Promise<void> {
  await client.call('POST', executionPath(executionId, '/abort'), emptySchema);
}

/** The source of a new execution's stream. */
export function newExecution(
  client: DaemonClient,
  configs: ConfigWrites,
  plan: ExecutionPlan,
): AgentStreamSource {
  return {
    async open(control: OpenControl): Promise<Opened> {
      if (control.abortRequested()) return { kind: 'refused', reason: 'aborted' };
      await configs.ensure(client, plan.config);
      if (control.closed()) return { kind: 'closed' };
      if (control.abortRequested()) return { kind: 'refused', reason: 'aborted' };
      const started = await start(client, configs, plan);
      if (started.kind === 'refused') return started;
      const aborting = control.started(started.executionId);
      if (aborting !== undefined) {
        // Aborted before its prompt: the prompt is never sent; the events tell how it ended.
        await aborting.catch(() => undefined);
        const lines = await client.lines('GET', executionPath(started.executionId, '/events'), {
          signal: control.signal,
        });
        return { kind: 'lines', lines };
      }
      const lines = await client.lines('POST', executionPath(started.executionId, '/prompt'), {
        text: plan.prompt,
        signal: control.signal,
      });
      return { kind: 'lines', lines };
    },
    abort: (executionId) => abortExecution(client, executionId),
  };
}

/** The source of a stream attached to execution `executionId`, after cursor `after`. */
export function attachedExecution(
  client: DaemonClient,
  executionId: string,
  after: number,
): AgentStreamSource {
  return {
    executionId,
    async open(control: OpenControl): Promise<Opened> {
      if (control.closed()) return { kind: 'closed' };
      const lines = await client.lines('GET', executionPath(executionId, `/events?after=${String(after)}`), {
        signal: control.signal,
      });
      return { kind: 'lines', lines };
    },
    abort: (id) => abortExecution(client, id),
  };
}
