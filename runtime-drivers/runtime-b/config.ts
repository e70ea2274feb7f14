/**
 * runtime_b's configuration: the JSON the runner in `templates/sdk-agent/runtime-b/` reads from
 * `SDK_AGENT_CONFIG` (its `config.mjs` checks it), built from plain, already-validated input. Pure: no
 * I/O. sandboxd adds the per-run fields (`sessionId`, `reasoning`, `workdir`, a model the call names)
 * when it starts the runner, so one configuration serves every run of a spec.
 */
import { configHash } from '../config-hash.js';
import type { ModelInput, SubAgentInput } from '../runtime-a/config.js';
import type { PermissionsInput } from '../runtime-a/permissions.js';
import { OPENCODE_PROVIDERS } from '../runtime-a/providers.js';

/** Everything runtime_b's configuration is built from. */
export interface RuntimeBConfigInput {
  readonly model: ModelInput;
  readonly smallModel: string;
  readonly instructions?: string | undefined;
  readonly permissions: PermissionsInput;
  readonly agents: Readonly<Record<string, SubAgentInput>>;
  /** `package.module:build` from the working directory, or undefined for the built-in graph. */
  readonly entrypoint?: string | undefined;
  /** Gateway name → its loopback listener, `http://127.0.0.1:<port>`. */
  readonly gateways: Readonly<Record<string, string>>;
}

/** The built configuration. */
export interface RuntimeBConfig {
  readonly text: string;
  readonly hash: string;
}

/** Input the builder cannot turn into a configuration (the SDK's validation should have caught it). */
export class RuntimeBConfigError extends Error {
  override readonly name = 'RuntimeBConfigError';
}

/**
 * Builds runtime_b's configuration: the model pointed at its gateway listener plus the provider's base
 * path (the same paths as runtime_a's packages use), no credential anywhere.
 *
 * @throws RuntimeBConfigError when the model's gateway has no listener
 */
export function buildRuntimeBConfig(input: RuntimeBConfigInput): RuntimeBConfig {
  const { model } = input;
  const listener = Object.hasOwn(input.gateways, model.gateway) ? input.gateways[model.gateway] : undefined;
  if (listener === undefined)
    throw new RuntimeBConfigError(`model.gateway: no listener for ${model.gateway}`);
  const basePath =
    model.provider === 'compatible' ? (model.basePath ?? '') : OPENCODE_PROVIDERS[model.provider].basePath;
  const config = {
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
  const text = JSON.stringify(config);
  return { text, hash: configHash(text, []) };
}
