/**
 * runtime_a's configuration: the JSON opencode 1.18.33 reads from `OPENCODE_CONFIG_CONTENT`
 * (runtimes.md §1.2), built from plain, already-validated input. Pure: no I/O, no process.
 */
import type { ConfigFile } from '../runtime-driver.js';
import { opencodePermissions, type PermissionsInput } from './permissions.js';
import { OPENCODE_PROVIDERS, type ProviderToken } from './providers.js';
import { filterRawConfig } from './raw-config.js';

/** The agent's model (SPEC "AgentModel", minus nothing but the SDK classes). */
export interface ModelInput {
  /** Our provider token. */
  readonly provider: ProviderToken;
  /** Model id (vendor_e: deployment name). */
  readonly id: string;
  /** Gateway name whose listener reaches the model. */
  readonly gateway: string;
  /** Region, vendor_a only. */
  readonly region?: string | undefined;
  /** Base path, `compatible` only. */
  readonly basePath?: string | undefined;
  /** Whether prompt caching is wanted: opencode 1.18.33 caches by default with no switch, so unused. */
  readonly promptCaching: boolean;
}

/** A subagent (SPEC `SubAgent`). */
export interface SubAgentInput {
  /** When the primary agent should delegate to it. */
  readonly description: string;
  /** Its system prompt. */
  readonly instructions: string;
  /** Model id on the main model's provider; the main model when undefined. */
  readonly model?: string | undefined;
  /** Its permissions; the spec's when undefined. */
  readonly permissions?: PermissionsInput | undefined;
}

/** A local MCP server: argument list, no shell. */
export interface McpLocalInput {
  /** Discriminator. */
  readonly kind: 'local';
  /** Program and arguments. */
  readonly command: readonly string[];
  /** Its environment; never credentials (it is readable by the sandbox user). */
  readonly envs: Readonly<Record<string, string>>;
  /** Start-up time-out in milliseconds. */
  readonly timeoutMs?: number | undefined;
}

/** A remote MCP server behind a gateway listener. */
export interface McpRemoteInput {
  /** Discriminator. */
  readonly kind: 'remote';
  /** Gateway name. */
  readonly gateway: string;
  /** Path on that gateway, starting with `/`. */
  readonly path: string;
}

/** Everything the configuration is built from. */
export interface RuntimeAConfigInput {
  /** The model. */
  readonly model: ModelInput;
  /** Model id for titles and summaries (SPEC default: `model.id`). */
  readonly smallModel: string;
  /** System instructions, written to `instructionsPath` and named by `instructions`. */
  readonly instructions?: string | undefined;
  /** Absolute path in the sandbox where the driver writes `instructions`. */
  readonly instructionsPath: string;
  /** Permissions of the primary agent. */
  readonly permissions: PermissionsInput;
  /** Subagents by name (`build` is reserved). */
  readonly agents: Readonly<Record<string, SubAgentInput>>;
  /** MCP servers by name. */
  readonly mcp: Readonly<Record<string, McpLocalInput | McpRemoteInput>>;
  /** Extra configuration; reserved keys never override ours. */
  readonly rawConfig?: Readonly<Record<string, unknown>> | undefined;
  /** Gateway name → its loopback listener, `http://127.0.0.1:<port>`. */
  readonly gateways: Readonly<Record<string, string>>;
  /** Model ids a run may choose instead of `model.id` (the `model` call option): declared too. */
  readonly otherModels?: readonly string[] | undefined;
}

/** The built configuration. */
export interface RuntimeAConfig {
  /** The configuration object. */
  readonly config: Readonly<Record<string, unknown>>;
  /** `config` as the text for `OPENCODE_CONFIG_CONTENT`. */
  readonly text: string;
  /** Files the configuration refers to. */
  readonly files: readonly ConfigFile[];
  /** `rawConfig` paths that were not merged (for a warning). */
  readonly droppedRawConfig: readonly string[];
}

/** Input the builder cannot turn into a configuration (the SDK's validation should have caught it). */
export class RuntimeAConfigError extends Error {
  override readonly name = 'RuntimeAConfigError';
}

/** The primary agent's name in opencode; no subagent may take it (SPEC "AgentSpec"). */
export const PRIMARY_AGENT = 'build';

const LOOPBACK_URL = /^http:\/\/127\.0\.0\.1:(?:[1-9][0-9]{0,4})$/;

function listener(gateways: Readonly<Record<string, string>>, name: string, at: string): string {
  const url = Object.hasOwn(gateways, name) ? gateways[name] : undefined;
  if (url === undefined) throw new RuntimeAConfigError(`${at}: no listener for gateway ${name}`);
  if (!LOOPBACK_URL.test(url) || Number(url.slice(url.lastIndexOf(':') + 1)) > 65535) {
    throw new RuntimeAConfigError(`${at}: the listener of gateway ${name} is not http://127.0.0.1:<port>`);
  }
  return url;
}

function providerBlock(input: RuntimeAConfigInput): Record<string, unknown> {
  const { model } = input;
  const mapping = OPENCODE_PROVIDERS[model.provider];
  const url = listener(input.gateways, model.gateway, 'model.gateway');
  const basePath = model.provider === 'compatible' ? (model.basePath ?? '') : mapping.basePath;
  // No apiKey, headers or any other credential: the gateway injects the real header (runtimes.md §1.6).
  const options: Record<string, unknown> = { [mapping.urlOption]: `${url}${basePath}` };
  if (model.provider === 'vendor_a') {
    if (model.region === undefined) throw new RuntimeAConfigError('model.region: required with vendor_a');
    options.region = model.region;
  }
  const ids = [
    model.id,
    input.smallModel,
    ...Object.values(input.agents).map((sub) => sub.model),
    ...(input.otherModels ?? []),
  ];
  const models = Object.fromEntries(
    [...new Set(ids.filter((id) => id !== undefined))].map((id) => [id, { tool_call: true }]),
  );
  return { [mapping.id]: { npm: mapping.npm, options, models } };
}

function agentBlock(input: RuntimeAConfigInput, providerId: string): Record<string, unknown> {
  const agents: Record<string, unknown> = {};
  for (const [name, sub] of Object.entries(input.agents)) {
    if (name === PRIMARY_AGENT) throw new RuntimeAConfigError(`agents.${name}: the name is reserved`);
    agents[name] = {
      mode: 'subagent',
      description: sub.description,
      prompt: sub.instructions,
      model: `${providerId}/${sub.model ?? input.model.id}`,
      ...(sub.permissions === undefined ? {} : { permission: opencodePermissions(sub.permissions) }),
    };
  }
  return agents;
}

function mcpBlock(input: RuntimeAConfigInput): Record<string, unknown> {
  const servers: Record<string, unknown> = {};
  for (const [name, server] of Object.entries(input.mcp)) {
    if (server.kind === 'local') {
      servers[name] = {
        type: 'local',
        command: [...server.command],
        environment: { ...server.envs },
        enabled: true,
        ...(server.timeoutMs === undefined ? {} : { timeout: server.timeoutMs }),
      };
    } else {
      const url = listener(input.gateways, server.gateway, `mcp.${name}.gateway`);
      // oauth: false, or opencode answers a 401 with an OAuth sign-in flow of its own.
      servers[name] = { type: 'remote', url: `${url}${server.path}`, enabled: true, oauth: false };
    }
  }
  return servers;
}

/**
 * Builds runtime_a's configuration: one provider pointed at the model's gateway listener with no
 * credential, `model`/`small_model`, permissions with SPEC's defaults and no `ask`, subagents, MCP
 * servers, `rawConfig` under the reserved keys, and network extras off. Never writes `auth` or `plugin`.
 *
 * @example
 * ```ts
 * const built = buildRuntimeAConfig({
 *   model: { provider: 'compatible', id: 'm', gateway: 'llm', basePath: '/v1', promptCaching: true },
 *   smallModel: 'm', instructionsPath: '/home/user/.agent/instructions.md',
 *   permissions: { default: 'allow', tools: {} }, agents: {}, mcp: {},
 *   gateways: { llm: 'http://127.0.0.1:18081' },
 * });
 * // spawn with OPENCODE_CONFIG_CONTENT=built.text, after writing built.files
 * ```
 * @throws RuntimeAConfigError for input the SDK's validation should have rejected
 */
export function buildRuntimeAConfig(input: RuntimeAConfigInput): RuntimeAConfig {
  const providerId = OPENCODE_PROVIDERS[input.model.provider].id;
  const raw = filterRawConfig(input.rawConfig);
  const files: ConfigFile[] =
    input.instructions === undefined ? [] : [{ path: input.instructionsPath, content: input.instructions }];
  const config: Record<string, unknown> = {
    ...raw.kept,
    provider: providerBlock(input),
    enabled_providers: [providerId],
    model: `${providerId}/${input.model.id}`,
    small_model: `${providerId}/${input.smallModel}`,
    // Instruction files are read as they are; text inside the configuration would be open to
    // opencode's {env:…} and {file:…} interpolation (runtimes.md §1.2).
    instructions: files.map((file) => file.path),
    permission: opencodePermissions(input.permissions),
    agent: agentBlock(input, providerId),
    mcp: mcpBlock(input),
    autoupdate: false,
    share: 'disabled',
    lsp: false,
    formatter: false,
  };
  if (!Object.hasOwn(raw.kept, 'snapshot')) config.snapshot = false;
  const text = JSON.stringify(config);
  return { config, text, files, droppedRawConfig: raw.dropped };
}
