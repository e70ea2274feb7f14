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

/**
 * Where each provider's API starts under a gateway listener: the paths the catalogue's presets admit
 * (vendor_e's preset admits `/vendor_c/v1/responses`). `compatible` takes the model's own `basePath`.
 */
export const PROVIDER_BASE_PATHS: Readonly<Record<AgentProvider, string>> = {
  vendor_a: '',
  vendor_b: '/v1',
  vendor_c: '/v1',
  vendor_d: '/v1beta',
  vendor_e: '/vendor_c/v1',
  compatible: '',
};
