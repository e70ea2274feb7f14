/**
 * The agent's routes (`protocol/agent-wire.ts`): its configuration by hash, executions started, prompted
 * (the answer is the event stream), read from a cursor and aborted, a runtime prepared ahead. Behind a
 * version gate: a template built before the agent (SPEC 0.8.0) reports an older version, and its daemon
 * has no agent.
 */
import { agentConfigSchema, prepareAgentSchema, startExecutionSchema } from '../protocol/agent-wire.js';
import type { RouteReply } from '../protocol/router.js';
import { AGENT_MIN_VERSION, meetsVersion } from '../protocol/versions.js';
import type { AgentHost } from './agent-host.js';
import { afterOf, guarded, ok, readJson, type DaemonRoutes } from './daemon-call.js';
import type { StreamQuota } from './event-streams.js';
import { streamLines } from './event-streams.js';
import { readBody } from './request-body.js';
import { RequestError } from './request-error.js';

/** Largest agent prompt. */
const MAX_PROMPT_BYTES = 4 * 1024 * 1024;

/** What the agent's routes need. */
export interface AgentRoutesOptions {
  readonly agents: AgentHost;
  /** The version this sandboxd reports (its template's). */
  readonly version: string;
  /** Open agent event streams at most. */
  readonly quota: StreamQuota;
  readonly keepaliveMs: number;
}

/** The agent's routes, each refused as `unimplemented` by a daemon older than the agent. */
export function agentRoutes({ agents, version, quota, keepaliveMs }: AgentRoutesOptions): DaemonRoutes {
  const gate = (): void => {
    if (!meetsVersion(version, AGENT_MIN_VERSION)) {
      throw new RequestError(
        'unimplemented',
        `sandbox image ${version} predates the agent (${AGENT_MIN_VERSION})`,
        'UnimplementedError',
      );
    }
  };
  return guarded(
    {
      'PUT /v1/agent/config': async ({ req }) =>
        ok(await agents.writeConfig(await readJson(req, agentConfigSchema))),
      'POST /v1/agent/executions': async ({ req }) =>
        ok({ executionId: await agents.start(await readJson(req, startExecutionSchema)) }),
      'GET /v1/agent/executions': () => ok(agents.list()),
      'POST /v1/agent/executions/:id/prompt': async ({ req, res, params }): Promise<RouteReply> => {
        const id = params['id'] ?? '';
        agents.prompt(id, await readBody(req, MAX_PROMPT_BYTES));
        quota.take(res);
        streamLines(res, agents.lines(id), keepaliveMs);
        return 'streamed';
      },
      'GET /v1/agent/executions/:id/events': ({ res, url, params }) => {
        const lines = agents.lines(params['id'] ?? '', afterOf(url) ?? 0);
        quota.take(res);
        streamLines(res, lines, keepaliveMs);
        return 'streamed';
      },
      'POST /v1/agent/executions/:id/abort': ({ params }) => {
        agents.abort(params['id'] ?? '');
        return ok();
      },
      'POST /v1/agent/prepare': async ({ req }) => {
        const { runtime, configHash } = await readJson(req, prepareAgentSchema);
        await agents.prepare(runtime, configHash);
        return ok();
      },
    },
    gate,
  );
}
