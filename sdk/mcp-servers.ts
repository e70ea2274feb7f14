/**
 * MCP servers of an agent (SPEC "AgentSpec", `mcp`; runtime_a only): `McpLocal` runs as a child process
 * in the sandbox, `McpRemote` is reached only through a gateway route.
 */
import { z } from 'zod';
import { checkRequestPath } from '../rules/request-path.js';
import { ENV_NAME, ENV_NAME_RULE, NAME_RULES, ROUTE_NAME } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';

const noNul = z.string().refine((s) => !s.includes('\0'), 'must not contain NUL');

const mcpLocalOptions = z.strictObject({
  command: z.array(noNul.refine((s) => s !== '', 'must not be empty')).min(1, 'must name a program'),
  envs: z.record(z.string().regex(ENV_NAME, ENV_NAME_RULE), noNul).default({}),
  timeoutMs: z.number().int('must be a whole number').min(1).max(3_600_000).optional(),
});

/** Options of `McpLocal`. */
export type McpLocalOptions = z.input<typeof mcpLocalOptions>;

/**
 * A local MCP server: an argument list run without a shell. Its `envs` are written to the runtime
 * configuration, readable by the sandbox user, so they must never hold credentials.
 *
 * @example
 * ```ts
 * new McpLocal({ command: ['node', 'tools/mcp.js'], envs: { LOG_LEVEL: 'warn' } });
 * ```
 */
export class McpLocal {
  /** Discriminator. */
  readonly kind = 'local';
  /** Program and arguments. */
  readonly command: readonly string[];
  /** Environment of the server; never credentials. */
  readonly envs: Readonly<Record<string, string>>;
  /** Start-up time-out; the runtime's default when undefined. */
  readonly timeoutMs: number | undefined;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: McpLocalOptions) {
    const o = parseOptions(mcpLocalOptions, options, 'McpLocal');
    this.command = Object.freeze([...o.command]);
    this.envs = Object.freeze({ ...o.envs });
    this.timeoutMs = o.timeoutMs;
    Object.freeze(this);
  }
}

const mcpRemoteOptions = z.strictObject({
  gateway: z.string().regex(ROUTE_NAME, `must be a route name: ${NAME_RULES.route}`),
  path: z
    .string()
    .default('/')
    .superRefine((path, ctx) => {
      const verdict = checkRequestPath(path);
      if (!verdict.ok) ctx.addIssue({ code: 'custom', message: verdict.reason });
    }),
});

/** Options of `McpRemote`. */
export type McpRemoteOptions = z.input<typeof mcpRemoteOptions>;

/**
 * A remote MCP server behind a gateway route that is also in the sandbox's `gateways`.
 *
 * @example
 * ```ts
 * new McpRemote({ gateway: 'docs-mcp', path: '/mcp' });
 * ```
 */
export class McpRemote {
  /** Discriminator. */
  readonly kind = 'remote';
  /** Route name in `gateways`. */
  readonly gateway: string;
  /** Path on that route. */
  readonly path: string;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: McpRemoteOptions) {
    const o = parseOptions(mcpRemoteOptions, options, 'McpRemote');
    this.gateway = o.gateway;
    this.path = o.path;
    Object.freeze(this);
  }
}

/** Either kind of MCP server. */
export type McpServer = McpLocal | McpRemote;
