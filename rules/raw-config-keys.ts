/** Keys of `rawConfig` the runtime_a adapter owns (SPEC "AgentSpec"): the SDK refuses them, the adapter never lets them through. */
export const RESERVED_RAW_CONFIG_KEYS = [
  'provider',
  'autoupdate',
  'share',
  'enabled_providers',
  'model',
  'small_model',
  'mcp',
  'agent',
  'permission',
  'instructions',
  'plugin',
] as const;
