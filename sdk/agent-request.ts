/**
 * What a handle asks a runtime for (the body of `PUT /v1/agent/config`): the spec as data and the
 * runtime's own options, as `protocol/agent-request.ts` defines it. sandboxd's runtime driver builds the
 * runtime's configuration from it; the SDK knows no configuration format.
 */
import { agentRequestHash } from '../protocol/agent-request-hash.js';
import {
  MAX_AGENT_REQUEST_BYTES,
  MAX_INSTRUCTIONS_BYTES,
  type AgentRequest,
  type WireAgentSpec,
} from '../protocol/agent-request.js';
import type { AgentConfigWrite } from '../protocol/agent-wire.js';
import { InvalidArgumentError } from '../rules/errors.js';
import type { AgentPermissions } from './agent-permissions.js';
import type { AgentSpec } from './agent-spec.js';
import { McpLocal } from './mcp-servers.js';

function permissions(value: AgentPermissions): WireAgentSpec['permissions'] {
  return { default: value.default, tools: value.tools };
}

/** `spec` as data. */
export function wireSpec(spec: AgentSpec): WireAgentSpec {
  const { model } = spec;
  return {
    model: {
      provider: model.provider,
      id: model.id,
      gateway: model.gateway,
      ...(model.region === undefined ? {} : { region: model.region }),
      ...(model.provider === 'compatible' ? { basePath: model.basePath } : {}),
      promptCaching: model.promptCaching,
    },
    smallModel: spec.smallModel,
    ...(spec.instructions === undefined ? {} : { instructions: spec.instructions }),
    permissions: permissions(spec.permissions),
    agents: Object.fromEntries(
      Object.entries(spec.agents).map(([name, sub]) => [
        name,
        {
          description: sub.description,
          instructions: sub.instructions,
          ...(sub.model === undefined ? {} : { model: sub.model }),
          ...(sub.permissions === undefined ? {} : { permissions: permissions(sub.permissions) }),
        },
      ]),
    ),
    mcp: Object.fromEntries(
      Object.entries(spec.mcp).map(([name, server]) => [
        name,
        server instanceof McpLocal
          ? {
              kind: 'local' as const,
              command: [...server.command],
              envs: { ...server.envs },
              ...(server.timeoutMs === undefined ? {} : { timeoutMs: server.timeoutMs }),
            }
          : { kind: 'remote' as const, gateway: server.gateway, path: server.path },
      ]),
    ),
    ...(spec.rawConfig === undefined ? {} : { rawConfig: spec.rawConfig as WireAgentSpec['rawConfig'] }),
  };
}

/**
 * The write of `spec` for `runtime` with the runtime's own `options`, named by `agentRequestHash`.
 *
 * @throws InvalidArgumentError when the instructions are over 1 MiB or the request over 2 MiB
 */
export function agentRequestWrite(
  operation: string,
  runtime: string,
  spec: AgentSpec,
  options: AgentRequest['options'],
): AgentConfigWrite {
  if ((spec.instructions ?? '').length > MAX_INSTRUCTIONS_BYTES) {
    throw new InvalidArgumentError(`${operation}: spec: instructions are over 1 MiB`, {
      field: 'spec.instructions',
    });
  }
  const request: AgentRequest = { spec: wireSpec(spec), options };
  const text = JSON.stringify(request);
  if (text.length > MAX_AGENT_REQUEST_BYTES) {
    throw new InvalidArgumentError(`${operation}: spec: the agent request is over 2 MiB`, { field: 'spec' });
  }
  return { runtime, hash: agentRequestHash(runtime, text), text };
}
