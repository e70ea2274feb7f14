/**
 * runtime_a's configuration for one spec on one sandbox (the body of `PUT /v1/agent/config`): the
 * configuration from `runtime-drivers/runtime-a/config.ts`, with each gateway the spec needs pointed
 * at its route's loopback listener, the instructions in a file named by their hash, and the provider
 * package's non-secret placeholder key. No credential anywhere: the gateway injects the key.
 */
import { createHash } from 'node:crypto';
import { AGENT_CONFIG_DIR, agentConfigSchema, type AgentConfigWrite } from '../protocol/agent-wire.js';
import type { ConfigFile } from '../runtime-drivers/config-hash.js';
import { buildRuntimeAConfig, RuntimeAConfigError } from '../runtime-drivers/runtime-a/config.js';
import { OPENCODE_PROVIDERS } from '../runtime-drivers/runtime-a/providers.js';
import { buildRuntimeBConfig, RuntimeBConfigError } from '../runtime-drivers/runtime-b/config.js';
import { InvalidArgumentError } from '../rules/errors.js';
import { PLACEHOLDER_KEY } from '../rules/placeholder-key.js';
import type { AgentSpec } from './agent-spec.js';
import type { SandboxGateways } from './sandbox-gateways.js';

/** Where the instructions are written: named by the first 16 hex digits of their sha256. */
export function instructionsPath(instructions: string | undefined): string {
  const digest = createHash('sha256')
    .update(instructions ?? '')
    .digest('hex');
  return `${AGENT_CONFIG_DIR}/instructions-${digest.slice(0, 16)}.md`;
}

/** Each gateway the spec needs → its route's loopback listener. */
function listenersOf(spec: AgentSpec, gateways: SandboxGateways): Record<string, string> {
  const listeners: Record<string, string> = {};
  for (const name of spec.gatewayNames()) {
    const status = gateways.get(name);
    if (status !== undefined) listeners[name] = `http://127.0.0.1:${status.port}`;
  }
  return listeners;
}

/** What one runtime's builder makes of a spec, and how the write of it is named and filled in. */
interface RuntimeConfigBuilder {
  readonly runtime: AgentConfigWrite['runtime'];
  /** Builds the configuration with each gateway pointed at its listener. */
  readonly build: (gateways: Record<string, string>) => {
    readonly hash: string;
    readonly text: string;
    readonly files?: readonly ConfigFile[];
  };
  /** The builder's error, whose messages name fields and rules only. */
  readonly configError: new (message?: string) => Error;
  /** Non-secret environment for the provider package, asked for once the build succeeded. */
  readonly env?: () => Record<string, string>;
}

/**
 * The configuration write of `spec` as `builder` makes it, checked against the daemon's limits.
 *
 * @throws InvalidArgumentError when the configuration cannot be built or is over the daemon's limits
 */
function configWrite(
  operation: string,
  spec: AgentSpec,
  gateways: SandboxGateways,
  builder: RuntimeConfigBuilder,
): AgentConfigWrite {
  const listeners = listenersOf(spec, gateways);
  let built;
  try {
    built = builder.build(listeners);
  } catch (error) {
    if (error instanceof builder.configError) {
      throw new InvalidArgumentError(`${operation}: spec: ${error.message}`, { field: 'spec' });
    }
    throw error;
  }
  const parsed = agentConfigSchema.safeParse({
    runtime: builder.runtime,
    hash: built.hash,
    text: built.text,
    files: (built.files ?? []).map((file) => ({ path: file.path, content: file.content })),
    env: builder.env?.() ?? {},
  });
  if (!parsed.success) {
    // Only the instructions are written as files.
    const tooLong = parsed.error.issues.some((issue) => issue.path[0] === 'files');
    throw new InvalidArgumentError(
      `${operation}: spec: ${tooLong ? 'instructions are over 1 MiB' : 'the runtime configuration is over 1 MiB'}`,
      { field: tooLong ? 'spec.instructions' : 'spec' },
    );
  }
  return parsed.data;
}

/**
 * The configuration write of `spec` on this handle (declaring `model`, the call's other model, if any). Every gateway of `spec.gatewayNames()` must have
 * a status (checked before, by `checkAgentGateways`).
 *
 * @throws InvalidArgumentError when the configuration cannot be built or is over the daemon's limits
 */
export function runtimeAConfigWrite(
  operation: string,
  spec: AgentSpec,
  gateways: SandboxGateways,
  model?: string,
): AgentConfigWrite {
  return configWrite(operation, spec, gateways, {
    runtime: 'runtime_a',
    build: (listeners) =>
      buildRuntimeAConfig({
        model: spec.model,
        smallModel: spec.smallModel,
        instructions: spec.instructions,
        instructionsPath: instructionsPath(spec.instructions),
        permissions: spec.permissions,
        agents: spec.agents,
        mcp: spec.mcp,
        rawConfig: spec.rawConfig,
        gateways: listeners,
        otherModels: model === undefined ? [] : [model],
      }),
    configError: RuntimeAConfigError,
    env: () => {
      const keyEnv = OPENCODE_PROVIDERS[spec.model.provider].placeholderKeyEnv;
      return keyEnv === undefined ? {} : { [keyEnv]: PLACEHOLDER_KEY };
    },
  });
}

/**
 * The configuration write of `spec` for runtime_b (`entrypoint` from `RuntimeB`): the runner's JSON,
 * with the model pointed at its route's listener; no files, no environment (the runner gives the
 * provider packages the placeholder key itself).
 *
 * @throws InvalidArgumentError when the configuration cannot be built or is over the daemon's limits
 */
export function runtimeBConfigWrite(
  operation: string,
  spec: AgentSpec,
  gateways: SandboxGateways,
  entrypoint: string | undefined,
): AgentConfigWrite {
  return configWrite(operation, spec, gateways, {
    runtime: 'runtime_b',
    build: (listeners) =>
      buildRuntimeBConfig({
        model: spec.model,
        smallModel: spec.smallModel,
        instructions: spec.instructions,
        permissions: spec.permissions,
        agents: spec.agents,
        entrypoint,
        gateways: listeners,
      }),
    configError: RuntimeBConfigError,
  });
}
