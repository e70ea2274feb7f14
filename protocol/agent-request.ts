/**
 * What an SDK asks a runtime for (the text of `PUT /v1/agent/config`): the spec as data and the
 * runtime's own options, the same for every runtime. sandboxd's runtime driver turns it into the
 * runtime's configuration (`runtime-drivers/<runtime>/driver.ts`) with each gateway pointed at its
 * route's listener; no SDK knows a runtime's configuration format.
 */
import { z } from 'zod';
import { AGENT_PROVIDERS } from '../rules/agent-providers.js';

/** A runtime's name on the wire: `runtime_<letters and digits>`, its folder `runtime-<…>`. */
export const RUNTIME_NAME = /^runtime_[a-z][a-z0-9]{0,31}$/;

/** A runtime's name on the wire. */
export const runtimeNameSchema = z.string().regex(RUNTIME_NAME, 'must be runtime_<letters and digits>');

const action = z.enum(['allow', 'deny']);

/** SPEC "AgentPermissions": key order is meaning (the last matching pattern wins). */
export const wirePermissionsSchema = z.strictObject({
  default: action,
  tools: z.record(z.string(), z.union([action, z.record(z.string(), action)])),
});

const wireModelSchema = z.strictObject({
  provider: z.enum(AGENT_PROVIDERS),
  id: z.string().min(1),
  gateway: z.string().min(1),
  region: z.string().optional(),
  basePath: z.string().optional(),
  promptCaching: z.boolean(),
});

const wireSubAgentSchema = z.strictObject({
  description: z.string(),
  instructions: z.string(),
  model: z.string().optional(),
  permissions: wirePermissionsSchema.optional(),
});

const wireMcpSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('local'),
    command: z.array(z.string()).min(1),
    envs: z.record(z.string(), z.string()),
    timeoutMs: z.number().int().positive().optional(),
  }),
  z.strictObject({ kind: z.literal('remote'), gateway: z.string().min(1), path: z.string() }),
]);

/** SPEC "AgentSpec" as data (no class, no credential field). */
export const wireAgentSpecSchema = z.strictObject({
  model: wireModelSchema,
  smallModel: z.string().min(1),
  instructions: z.string().optional(),
  permissions: wirePermissionsSchema,
  agents: z.record(z.string(), wireSubAgentSchema),
  mcp: z.record(z.string(), wireMcpSchema),
  rawConfig: z.record(z.string(), z.json()).optional(),
});

/** SPEC "AgentSpec" as data. */
export type WireAgentSpec = z.infer<typeof wireAgentSpecSchema>;

/** The request: the spec and the runtime's own options (runtime_b: `entrypoint`), checked by its driver. */
export const agentRequestSchema = z.strictObject({
  spec: wireAgentSpecSchema,
  options: z.record(z.string(), z.json()),
});

/** What an SDK asks a runtime for. */
export type AgentRequest = z.infer<typeof agentRequestSchema>;

/** Largest request text (the instructions are at most 1 MiB of it). */
export const MAX_AGENT_REQUEST_BYTES = 2 * 1024 * 1024;

/** Largest instructions. */
export const MAX_INSTRUCTIONS_BYTES = 1024 * 1024;
