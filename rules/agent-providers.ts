/** The model providers an `AgentModel` may name (SPEC "AgentModel"), shared by the SDK and the presets. */

/** Providers an `AgentModel` may name (`vendor_c` also serves vendor_j). */
export const AGENT_PROVIDERS = [
  'vendor_a',
  'vendor_b',
  'vendor_c',
  'vendor_d',
  'vendor_e',
  'compatible',
] as const;

/** One agent model provider. */
export type AgentProvider = (typeof AGENT_PROVIDERS)[number];
