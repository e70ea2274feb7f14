/**
 * Why an agent execution failed (SPEC "Agent reasons"). `output_limit` and `runtime_version_mismatch`
 * exist but are never produced; `runtime_error` is ours: the runtime itself reported a failure.
 */
export const AGENT_FAILURE_REASONS = [
  'runtime_missing',
  'busy',
  'timeout',
  'aborted',
  'max_steps',
  'token_budget',
  'output_limit',
  'runtime_version_mismatch',
  'runtime_error',
] as const;

/** One agent failure reason. */
export type AgentFailureReason = (typeof AGENT_FAILURE_REASONS)[number];
