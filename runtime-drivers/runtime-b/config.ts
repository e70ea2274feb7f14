/**
 * runtime_b's configuration: the JSON the runner in `runner/` reads from `SDK_AGENT_CONFIG` (its
 * `config.mjs` checks it), built from a request's spec. Pure: no I/O. The driver adds the per-run
 * fields (`sessionId`, `reasoning`, `workdir`, a model the call names).
 */
import type { WireAgentSpec } from '../../protocol/agent-request.js';
import { PROVIDER_BASE_PATHS } from '../../rules/agent-providers.js';

/** Everything runtime_b's configuration is built from. */
export interface RuntimeBConfigInput extends Pick<
  WireAgentSpec,
  'model' | 'smallModel' | 'instructions' | 'permissions' | 'agents'
> {
  /** `package.module:build` from the working directory, or undefined for the built-in graph. */
  readonly entrypoint?: string | undefined;
  /** Gateway name → its loopback listener, `http://127.0.0.1:<port>`. */
  readonly gateways: Readonly<Record<string, string>>;
}

/** Input the builder cannot turn into a configuration. */
export class RuntimeBConfigError extends Error {
  override readonly name = 'RuntimeBConfigError';
}

/**
 * Builds runtime_b's configuration: the model pointed at its gateway listener plus the provider's base
 * path, no credential anywhere.
 *
 * @throws RuntimeBConfigError when the model's gateway has no listener
 */
export function buildRuntimeBConfig(input: RuntimeBConfigInput) {
  const { model } = input;
  const listener = Object.hasOwn(input.gateways, model.gateway) ? input.gateways[model.gateway] : undefined;
  if (listener === undefined)
    throw new RuntimeBConfigError(`model.gateway: no listener for ${model.gateway}`);
  const basePath =
    model.provider === 'compatible' ? (model.basePath ?? '') : PROVIDER_BASE_PATHS[model.provider];
  return {
    model: {
      provider: model.provider,
      id: model.id,
      baseURL: `${listener}${basePath}`,
      ...(model.region === undefined ? {} : { region: model.region }),
    },
    smallModel: input.smallModel,
    ...(input.instructions === undefined ? {} : { instructions: input.instructions }),
    permissions: input.permissions,
    subagents: Object.fromEntries(
      Object.entries(input.agents).map(([name, sub]) => [
        name,
        {
          description: sub.description,
          instructions: sub.instructions,
          ...(sub.model === undefined ? {} : { model: sub.model }),
          ...(sub.permissions === undefined ? {} : { permissions: sub.permissions }),
        },
      ]),
    ),
    ...(input.entrypoint === undefined ? {} : { entrypoint: input.entrypoint }),
  };
}
