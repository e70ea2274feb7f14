/** `AgentPermissions`: what the agent's tools may do (SPEC "AgentPermissions"). Not a security boundary. */
import { z } from 'zod';
import { printableText } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';

/** A permission action; `ask` is not supported (no one is there to answer). */
export type PermissionAction = 'allow' | 'deny';

/** A tool's rule: one action, or a map of pattern to action (last matching pattern wins). */
export type ToolPermission = PermissionAction | Readonly<Record<string, PermissionAction>>;

/** Tools denied unless a tools entry says otherwise. */
export const DENIED_BY_DEFAULT = ['question', 'webfetch', 'websearch'] as const;

const action = z.enum(['allow', 'deny'], { message: 'must be allow or deny (ask is not supported)' });
/**
 * A whole number (`0`, `42`) as an object key moves ahead of every other key, in JavaScript and in the
 * JSON the runtime reads, so "the last matching pattern wins" would no longer follow the caller's order.
 */
const WHOLE_NUMBER = /^(?:0|[1-9][0-9]*)$/;
const toolName = z
  .string()
  .regex(/^[A-Za-z0-9_.*-]{1,128}$/, 'tool name must be 1-128 characters [A-Za-z0-9_.*-]');
const pattern = z
  .string()
  .regex(printableText(1024), 'pattern must be 1-1024 characters without control characters');

const agentPermissionsOptions = z.strictObject({
  default: action.default('allow'),
  tools: z
    .record(
      toolName,
      z.union([action, z.record(pattern, action)], {
        // zod reports a bad member of the union as "Invalid input"; name the rule instead.
        error: 'must be allow or deny, or patterns to allow or deny (ask is not supported)',
      }),
    )
    .superRefine((tools, ctx) => {
      for (const [tool, rule] of Object.entries(tools)) {
        const keys = typeof rule === 'string' ? [] : Object.keys(rule);
        const numeric = [tool, ...keys].find((key) => WHOLE_NUMBER.test(key));
        if (numeric === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [tool],
          message: `${numeric === tool ? 'tool name' : 'pattern'} must not be a whole number (key order would change)`,
        });
      }
    })
    .default({}),
});

/** Options of `AgentPermissions`. */
export type AgentPermissionsOptions = z.input<typeof agentPermissionsOptions>;

/**
 * Default action plus per-tool rules.
 *
 * @example
 * ```ts
 * new AgentPermissions({ default: 'allow', tools: { bash: { '*': 'deny', 'git *': 'allow' } } });
 * ```
 */
export class AgentPermissions {
  /** Action for tools without an entry. */
  readonly default: PermissionAction;
  /** Per-tool rules as given. */
  readonly tools: Readonly<Record<string, ToolPermission>>;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: AgentPermissionsOptions = {}) {
    const o = parseOptions(agentPermissionsOptions, options, 'AgentPermissions');
    this.default = o.default;
    this.tools = Object.freeze(
      Object.fromEntries(
        Object.entries(o.tools).map(([tool, rule]) => [
          tool,
          typeof rule === 'string' ? rule : Object.freeze(rule),
        ]),
      ),
    );
    Object.freeze(this);
  }

  /** The rules in force: `question`, `webfetch` and `websearch` denied unless `tools` names them. */
  effectiveTools(): Readonly<Record<string, ToolPermission>> {
    const defaults = Object.fromEntries(DENIED_BY_DEFAULT.map((tool) => [tool, 'deny' as const]));
    return { ...defaults, ...this.tools };
  }
}
