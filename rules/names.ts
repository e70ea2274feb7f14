/** Naming rules of SPEC "Limits" and "Resources": route names, agent and MCP names, regions. */

/** A gateway route name: 1-64 characters `[a-z0-9-]`; the public key of `sbx.gateways`. */
export const ROUTE_NAME = /^[a-z0-9-]{1,64}$/;

/** A subagent or MCP server name: 1-64 characters `[a-z0-9_-]`. */
export const AGENT_NAME = /^[a-z0-9_-]{1,64}$/;

/** The subagent name the runtime keeps for its primary agent. */
export const RESERVED_SUBAGENT_NAME = 'build';

/** Rule texts for error messages, so that every layer words a rule the same way. */
export const NAME_RULES = {
  route: '1-64 characters [a-z0-9-]',
  agent: '1-64 characters [a-z0-9_-]',
} as const;

/**
 * An environment variable name a caller may set: `commands.run`'s `envs`, the `secrets` of
 * `Sandbox.create`, and sandboxd's check of both. No name is reserved: a caller's `PATH` or `HOME` is
 * the caller's to choose, since it takes effect only after the command has become the sandbox user.
 */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The wording of the environment-name rule in error messages. */
export const ENV_NAME_RULE = 'must be an environment variable name';

/** A sandbox's id: 12 lowercase hex digits (made by the control plane). */
export const SANDBOX_ID = /^[a-f0-9]{12}$/;
export const SANDBOX_ID_RULE = 'must be a sandbox id (12 hex characters)';

/** A snapshot's id: `snap_` and 16 lowercase hex digits (made by the control plane). */
export const SNAPSHOT_ID = /^snap_[0-9a-f]{16}$/;

/** A template: an image name such as `sdk-agent`, or an ARN. */
export const TEMPLATE_NAME =
  /^(?:[a-z0-9][a-z0-9._-]{0,127}|arn:[a-z0-9-]+:[a-z0-9-]*:[a-z0-9-]*:[0-9]*:[A-Za-z0-9/._:+=@-]{1,1024})$/;

/** The agent template: runtime_a (opencode) and ripgrep under `/opt/agents`, on `sdk-base-caps`. */
export const AGENT_TEMPLATE = 'sdk-agent';

/** A role ARN, such as `arn:aws:iam::123456789012:role/sandbox`. */
export const ROLE_ARN = /^arn:[a-z0-9-]+:iam::[0-9]{12}:role\/[A-Za-z0-9+=,.@_/-]{1,512}$/;

/** A cloud region such as `us-east-1`. */
export const REGION = /^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$/;

/** Printable text without control characters, 1-n characters long. */
export function printableText(max: number): RegExp {
  return new RegExp(`^[^\\u0000-\\u001f\\u007f-\\u009f]{1,${max}}$`, 'u');
}

/**
 * Agent session ids: runtime_a's `ses_…` (opencode's) and runtime_b's `rda_<32 hex>`. Never starting
 * with `-`, so one is never read as a runtime flag.
 */
export const AGENT_SESSION_ID = /^(?:ses_[A-Za-z0-9]{1,100}|rda_[0-9a-f]{32})$/;

/** Model ids a call may name: 1-200 characters, starting with a letter or digit (never a flag). */
export const AGENT_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/;
