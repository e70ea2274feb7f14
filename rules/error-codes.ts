/**
 * The error-code registry: every code that crosses a process boundary, with its HTTP status and the SDK
 * class it becomes. `Record<ErrorCode, …>` makes the compiler reject a code without an entry.
 */

/** Every stable error code of the SDK, the control plane and the daemon API. */
export type ErrorCode =
  | 'invalid_argument'
  | 'invalid_allow_path'
  | 'secret_not_found'
  | 'unauthenticated'
  /** A browser request from another origin carried a credential (the control plane refuses it). */
  | 'forbidden_origin'
  /** A request named another host than the control plane's in `Host` (DNS rebinding; refused). */
  | 'forbidden_host'
  | 'sandbox_not_found'
  | 'process_not_found'
  /** No such endpoint, on either server. */
  | 'not_found'
  /** sandboxd holds no agent configuration with the hash a start named: write it, then start again. */
  | 'agent_config_missing'
  /** The endpoint exists, not with this method (the answer's `Allow` header lists the methods). */
  | 'method_not_allowed'
  | 'sandbox_ended'
  /** The call needs the sandbox running and it is suspended (an operator call never resumes it). */
  | 'sandbox_suspended'
  | 'configuration_rejected'
  | 'unimplemented'
  | 'sandbox_error'
  | 'agent_failed'
  /** Files API: no such file or directory. */
  | 'file_not_found'
  /** Files API: a path's component, or the directory to list, is not a directory. */
  | 'not_a_directory'
  /** Files API: the path is a directory where a file is needed. */
  | 'is_a_directory'
  /** Files API: the sandbox user may not do this to this path. */
  | 'permission_denied'
  /** Files API: the sandbox's disk (or the user's quota) is full. */
  | 'no_space'
  /** Preview URLs: nothing in the sandbox listens on that port of its loopback. */
  | 'port_closed'
  /** Preview URLs: the port is sandboxd's own (its API, a gateway route, the egress proxy), never forwarded. */
  | 'port_forbidden';

/** The SDK exception classes of SPEC "Errors", by name. */
export type ErrorClassName =
  'InvalidArgumentError' | 'SecretNotFoundError' | 'SandboxError' | 'AuthenticationError' | 'AgentError';

/** HTTP status of each code on the wire. */
export const ERROR_HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_argument: 400,
  invalid_allow_path: 400,
  secret_not_found: 404,
  unauthenticated: 401,
  forbidden_origin: 403,
  forbidden_host: 403,
  sandbox_not_found: 404,
  process_not_found: 404,
  not_found: 404,
  agent_config_missing: 404,
  method_not_allowed: 405,
  sandbox_ended: 409,
  sandbox_suspended: 409,
  configuration_rejected: 422,
  unimplemented: 501,
  sandbox_error: 500,
  agent_failed: 500,
  file_not_found: 404,
  not_a_directory: 409,
  is_a_directory: 409,
  permission_denied: 403,
  no_space: 507,
  port_closed: 502,
  port_forbidden: 403,
};

/** SDK class of each code. */
export const ERROR_CLASS: Readonly<Record<ErrorCode, ErrorClassName>> = {
  invalid_argument: 'InvalidArgumentError',
  invalid_allow_path: 'InvalidArgumentError',
  secret_not_found: 'SecretNotFoundError',
  unauthenticated: 'AuthenticationError',
  forbidden_origin: 'AuthenticationError',
  forbidden_host: 'AuthenticationError',
  sandbox_not_found: 'SandboxError',
  process_not_found: 'SandboxError',
  not_found: 'SandboxError',
  agent_config_missing: 'SandboxError',
  method_not_allowed: 'SandboxError',
  sandbox_ended: 'SandboxError',
  sandbox_suspended: 'SandboxError',
  configuration_rejected: 'SandboxError',
  unimplemented: 'SandboxError',
  sandbox_error: 'SandboxError',
  agent_failed: 'AgentError',
  file_not_found: 'SandboxError',
  not_a_directory: 'SandboxError',
  is_a_directory: 'SandboxError',
  permission_denied: 'SandboxError',
  no_space: 'SandboxError',
  port_closed: 'SandboxError',
  port_forbidden: 'SandboxError',
};

/** Every code, in registry order. */
export const ERROR_CODES = Object.keys(ERROR_HTTP_STATUS) as readonly ErrorCode[];

/**
 * Rejections the in-sandbox gateway answers to sandbox code as HTTP responses (SPEC "In-sandbox gateway
 * listener"). They never become SDK exceptions: the SDK has no gateway-specific exception.
 */
export type GatewayRejectionCode =
  'bad_request' | 'path_forbidden' | 'not_allowed' | 'rate_limited' | 'upstream_error' | 'upstream_timeout';

/** HTTP status of each gateway rejection. */
export const GATEWAY_REJECTION_STATUS: Readonly<Record<GatewayRejectionCode, number>> = {
  bad_request: 400,
  path_forbidden: 403,
  not_allowed: 403,
  rate_limited: 429,
  upstream_error: 502,
  upstream_timeout: 504,
};
