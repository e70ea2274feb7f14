/** `SubAgent`: a named helper agent the primary agent can delegate to (SPEC "AgentSpec", `agents`). */
import { z } from 'zod';
import { printableText } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import { AgentPermissions } from './agent-permissions.js';

const subAgentOptions = z.strictObject({
  description: z.string().regex(printableText(1024), 'must be 1-1024 characters without control characters'),
  instructions: z.string(),
  model: z.string().regex(printableText(256), 'must be a model id of 1-256 characters').optional(),
  permissions: z.instanceof(AgentPermissions, { message: 'must be an AgentPermissions' }).optional(),
});

/** Options of `SubAgent`. */
export type SubAgentOptions = z.input<typeof subAgentOptions>;

/**
 * A subagent: what it is for, its instructions, and optionally its own model id and permissions.
 *
 * @example
 * ```ts
 * new SubAgent({ description: 'Reviews diffs', instructions: 'Review the change; never edit.' });
 * ```
 */
export class SubAgent {
  /** When the primary agent should use it. */
  readonly description: string;
  /** Its system instructions. */
  readonly instructions: string;
  /** Model id on the spec's gateway; the spec's model when undefined. */
  readonly model: string | undefined;
  /** Its permissions; the spec's when undefined. */
  readonly permissions: AgentPermissions | undefined;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: SubAgentOptions) {
    const o = parseOptions(subAgentOptions, options, 'SubAgent');
    this.description = o.description;
    this.instructions = o.instructions;
    this.model = o.model;
    this.permissions = o.permissions;
    Object.freeze(this);
  }
}
