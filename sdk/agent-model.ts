/** `AgentModel`: which model an agent uses, through which gateway route (SPEC "AgentModel"). */
import { z } from 'zod';
import { basePathProblem } from '../rules/request-path.js';
import { AGENT_PROVIDERS, type AgentProvider } from '../rules/agent-providers.js';
import { NAME_RULES, REGION, ROUTE_NAME, printableText } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';

const agentModelOptions = z
  .strictObject({
    provider: z.enum(AGENT_PROVIDERS),
    id: z.string().regex(printableText(256), 'must be 1-256 characters without control characters'),
    gateway: z.string().regex(ROUTE_NAME, `must be a route name: ${NAME_RULES.route}`),
    region: z.string().regex(REGION, 'must be a region such as us-east-1').optional(),
    basePath: z.string().default(''),
    promptCaching: z.boolean().default(true),
  })
  .superRefine((o, ctx) => {
    if (o.provider === 'vendor_a' && o.region === undefined) {
      ctx.addIssue({ code: 'custom', path: ['region'], message: 'is required with provider vendor_a' });
    }
    if (o.provider !== 'vendor_a' && o.region !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['region'], message: 'is only for provider vendor_a' });
    }
    if (o.provider !== 'compatible' && o.basePath !== '') {
      ctx.addIssue({ code: 'custom', path: ['basePath'], message: 'is only for provider compatible' });
    }
    const problem = basePathProblem(o.basePath);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['basePath'], message: problem });
    if (o.provider === 'vendor_d' && o.id.startsWith('models/')) {
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'must not carry the models/ prefix' });
    }
  });

/** Options of `AgentModel`. */
export type AgentModelOptions = z.input<typeof agentModelOptions>;

/**
 * The agent's model: provider, model id and the gateway route that reaches it. It has no credential
 * field: the gateway injects the key.
 *
 * @example
 * ```ts
 * const model = new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' });
 * ```
 */
export class AgentModel {
  /** Provider token. */
  readonly provider: AgentProvider;
  /** Model id (vendor_e: the deployment name; vendor_d: without `models/`). */
  readonly id: string;
  /** Key of the sandbox's `gateways` map that reaches the model. */
  readonly gateway: string;
  /** Region, vendor_a only. */
  readonly region: string | undefined;
  /** Base path, `compatible` only; must equal the preset's. */
  readonly basePath: string;
  /**
   * Whether the runtime asks for prompt caching (default true). runtime_a (opencode 1.18.33) caches
   * wherever its provider package does and has no switch to turn that off: `false` changes nothing
   * there.
   */
  readonly promptCaching: boolean;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: AgentModelOptions) {
    const o = parseOptions(agentModelOptions, options, 'AgentModel');
    this.provider = o.provider;
    this.id = o.id;
    this.gateway = o.gateway;
    this.region = o.region;
    this.basePath = o.basePath;
    this.promptCaching = o.promptCaching;
    Object.freeze(this);
  }
}
