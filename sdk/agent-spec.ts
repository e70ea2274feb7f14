/** `AgentSpec`: everything an agent execution needs but the prompt (SPEC "AgentSpec"). */
import { z } from 'zod';
import { AGENT_NAME, NAME_RULES, RESERVED_SUBAGENT_NAME, printableText } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import { AgentModel } from './agent-model.js';
import { AgentPermissions } from './agent-permissions.js';
import { McpLocal, McpRemote, type McpServer } from './mcp-servers.js';
import { SubAgent } from './sub-agent.js';
import { RESERVED_RAW_CONFIG_KEYS } from '../rules/raw-config-keys.js';

export { RESERVED_RAW_CONFIG_KEYS };

/** Names of subagents and MCP servers, checked with a message of their own (zod drops record-key ones). */
function checkNames(names: readonly string[], ctx: z.RefinementCtx, reserved?: string): void {
  for (const name of names) {
    if (!AGENT_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: [name], message: `is not a name: ${NAME_RULES.agent}` });
    } else if (name === reserved) {
      ctx.addIssue({ code: 'custom', path: [name], message: `the name ${name} is reserved` });
    }
  }
}

const agentSpecOptions = z.strictObject({
  model: z.instanceof(AgentModel, { message: 'must be an AgentModel' }),
  smallModel: z.string().regex(printableText(256), 'must be a model id of 1-256 characters').optional(),
  instructions: z.string().optional(),
  permissions: z.instanceof(AgentPermissions, { message: 'must be an AgentPermissions' }).optional(),
  agents: z
    .record(z.string(), z.instanceof(SubAgent, { message: 'must be a SubAgent' }))
    .superRefine((agents, ctx) => checkNames(Object.keys(agents), ctx, RESERVED_SUBAGENT_NAME))
    .default({}),
  mcp: z
    .record(
      z.string(),
      z.union([z.instanceof(McpLocal), z.instanceof(McpRemote)], {
        message: 'must be an McpLocal or McpRemote',
      }),
    )
    .superRefine((servers, ctx) => checkNames(Object.keys(servers), ctx))
    .default({}),
  rawConfig: z
    .record(z.string(), z.json())
    .superRefine((config, ctx) => {
      for (const key of RESERVED_RAW_CONFIG_KEYS) {
        if (Object.hasOwn(config, key))
          ctx.addIssue({ code: 'custom', path: [key], message: 'is a reserved key' });
      }
    })
    .optional(),
  runtimeVersion: z
    .string()
    .regex(printableText(128), 'must be 1-128 characters without control characters')
    .optional(),
});

/** Options of `AgentSpec`. */
export type AgentSpecOptions = z.input<typeof agentSpecOptions>;

/**
 * Model, instructions, permissions, subagents, MCP servers and runtime configuration of an agent. It
 * has no credential field.
 *
 * @example
 * ```ts
 * const spec = new AgentSpec({ model: new AgentModel({ provider: 'vendor_b', id: 'm', gateway: 'llm' }) });
 * spec.gatewayNames(); // ['llm']
 * ```
 */
export class AgentSpec {
  /** The model. */
  readonly model: AgentModel;
  /** Model for titles and summaries (default: `model.id`). */
  readonly smallModel: string;
  /** System instructions. */
  readonly instructions: string | undefined;
  /** Permissions (default: allow, with the default denials). */
  readonly permissions: AgentPermissions;
  /** Subagents by name. */
  readonly agents: Readonly<Record<string, SubAgent>>;
  /** MCP servers by name (runtime_a only). */
  readonly mcp: Readonly<Record<string, McpServer>>;
  /** Extra runtime_a configuration, minus the reserved keys. */
  readonly rawConfig: Readonly<Record<string, unknown>> | undefined;
  /** Validated as text only; never compared with the image. */
  readonly runtimeVersion: string | undefined;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: AgentSpecOptions) {
    const o = parseOptions(agentSpecOptions, options, 'AgentSpec');
    this.model = o.model;
    this.smallModel = o.smallModel ?? o.model.id;
    this.instructions = o.instructions;
    this.permissions = o.permissions ?? new AgentPermissions({ default: 'allow' });
    this.agents = Object.freeze({ ...o.agents });
    this.mcp = Object.freeze({ ...o.mcp });
    this.rawConfig = o.rawConfig === undefined ? undefined : Object.freeze(structuredClone(o.rawConfig));
    this.runtimeVersion = o.runtimeVersion;
    Object.freeze(this);
  }

  /** Every gateway the spec needs: the model's, then each `McpRemote`'s, without repeats. */
  gatewayNames(): string[] {
    const remote = Object.values(this.mcp).flatMap((server) =>
      server instanceof McpRemote ? [server.gateway] : [],
    );
    return [...new Set([this.model.gateway, ...remote])];
  }
}
