import { describe, expect, it } from 'vitest';
import { RuntimeAConfigError, buildRuntimeAConfig, type RuntimeAConfigInput } from '../config.js';
import { PermissionOrderError } from '../permissions.js';
import { OPENCODE_PROVIDERS, type ProviderToken } from '../providers.js';
import { RESERVED_RAW_CONFIG_KEYS, isCredentialKey } from '../raw-config.js';

const URL = 'http://127.0.0.1:18081';

function input(over: Partial<RuntimeAConfigInput> = {}): RuntimeAConfigInput {
  return {
    model: { provider: 'compatible', id: 'm1', gateway: 'llm', basePath: '/v1', promptCaching: true },
    smallModel: 'm1',
    instructionsPath: '/home/user/.agent/instructions.md',
    permissions: { default: 'allow', tools: {} },
    agents: {},
    mcp: {},
    gateways: { llm: URL, docs: 'http://127.0.0.1:18082' },
    ...over,
  };
}

/** Every key at any depth. */
function keys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keys);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keys(inner)]);
}

describe('provider mapping (runtimes.md §1.6)', () => {
  it.each<[ProviderToken, string, string, Record<string, unknown>]>([
    ['vendor_a', 'amazon-bedrock', '@ai-sdk/amazon-bedrock', { endpoint: URL, region: 'us-east-1' }],
    ['vendor_b', 'anthropic', '@ai-sdk/anthropic', { baseURL: `${URL}/v1` }],
    ['vendor_c', 'openai', '@ai-sdk/openai', { baseURL: `${URL}/v1` }],
    ['vendor_d', 'google', '@ai-sdk/google', { baseURL: `${URL}/v1beta` }],
    ['vendor_e', 'azure', '@ai-sdk/azure', { baseURL: `${URL}/vendor_c/v1` }],
    ['compatible', 'gateway', '@ai-sdk/openai-compatible', { baseURL: `${URL}/v1` }],
  ])('%s → provider %s (%s)', (provider, id, npm, options) => {
    const model = {
      provider,
      id: 'm1',
      gateway: 'llm',
      promptCaching: true,
      ...(provider === 'vendor_a' ? { region: 'us-east-1' } : {}),
      ...(provider === 'compatible' ? { basePath: '/v1' } : {}),
    };
    const { config } = buildRuntimeAConfig(input({ model, smallModel: 's1' }));
    expect(config.provider).toEqual({
      [id]: { npm, options, models: { m1: { tool_call: true }, s1: { tool_call: true } } },
    });
    expect(config.enabled_providers).toEqual([id]);
    expect(config.model).toBe(`${id}/m1`);
    expect(config.small_model).toBe(`${id}/s1`);
    expect(OPENCODE_PROVIDERS[provider].id).toBe(id);
  });

  it('puts no credential, auth or plugin anywhere', () => {
    for (const provider of Object.keys(OPENCODE_PROVIDERS) as ProviderToken[]) {
      const model = {
        provider,
        id: 'm',
        gateway: 'llm',
        promptCaching: true,
        region: provider === 'vendor_a' ? 'us-east-1' : undefined,
      };
      const built = buildRuntimeAConfig(
        input({ model, rawConfig: { auth: { x: 1 }, plugin: ['p'], tui: { apiKey: 'k' } } }),
      );
      expect(keys(built.config).filter(isCredentialKey)).toEqual([]);
      expect(built.config).not.toHaveProperty('plugin');
      expect(built.text).not.toMatch(/apiKey|Bearer|"auth"/);
    }
  });

  it('rejects a listener that is not loopback, or a missing gateway', () => {
    expect(() => buildRuntimeAConfig(input({ gateways: { llm: 'http://10.0.0.1:80' } }))).toThrow(
      RuntimeAConfigError,
    );
    expect(() => buildRuntimeAConfig(input({ gateways: {} }))).toThrow(RuntimeAConfigError);
  });
});

describe('permissions', () => {
  const permission = (permissions: RuntimeAConfigInput['permissions']) =>
    buildRuntimeAConfig(input({ permissions })).config.permission as Record<string, unknown>;

  it.each([
    [
      'default allow',
      { default: 'allow' as const, tools: {} },
      {
        '*': 'allow',
        read: 'allow',
        question: 'deny',
        webfetch: 'deny',
        websearch: 'deny',
        external_directory: 'allow',
        doom_loop: 'allow',
      },
    ],
    [
      'default deny',
      { default: 'deny' as const, tools: {} },
      { '*': 'deny', bash: 'deny', question: 'deny' },
    ],
    [
      'explicit webfetch allow',
      { default: 'allow' as const, tools: { webfetch: 'allow' as const } },
      { webfetch: 'allow', question: 'deny' },
    ],
    [
      'pattern map',
      { default: 'allow' as const, tools: { bash: { '*': 'deny' as const, 'git *': 'allow' as const } } },
      { bash: { '*': 'deny', 'git *': 'allow' } },
    ],
  ])('%s', (_, given, expected) => expect(permission(given)).toMatchObject(expected));

  it('never produces ask', () => {
    expect(JSON.stringify(permission({ default: 'deny', tools: { bash: { x: 'allow' } } }))).not.toContain(
      '"ask"',
    );
  });

  it('keeps the caller entries after the defaults and patterns in order (last match wins)', () => {
    const out = permission({
      default: 'allow',
      tools: { bash: { 'git *': 'allow', '*': 'deny' }, question: 'allow' },
    });
    expect(Object.keys(out).slice(-2)).toEqual(['bash', 'question']);
    expect(Object.keys(out)[0]).toBe('*');
    expect(Object.keys(out.bash as object)).toEqual(['git *', '*']);
  });

  it('refuses a whole-number pattern, which JSON would move to the front', () => {
    expect(() => permission({ default: 'allow', tools: { bash: { '*': 'deny', '42': 'allow' } } })).toThrow(
      PermissionOrderError,
    );
  });
});

describe('agents, mcp, instructions', () => {
  it('writes subagents, refuses build', () => {
    const { config } = buildRuntimeAConfig(
      input({
        agents: {
          review: {
            description: 'd',
            instructions: 'i',
            model: 'm2',
            permissions: { default: 'deny', tools: {} },
          },
        },
      }),
    );
    expect(config.agent).toMatchObject({
      review: {
        mode: 'subagent',
        description: 'd',
        prompt: 'i',
        model: 'gateway/m2',
        permission: { '*': 'deny' },
      },
    });
    expect(config.provider).toMatchObject({ gateway: { models: { m2: { tool_call: true } } } });
    expect(() =>
      buildRuntimeAConfig(input({ agents: { build: { description: 'd', instructions: 'i' } } })),
    ).toThrow(RuntimeAConfigError);
  });

  it('writes local and remote MCP servers', () => {
    const { config } = buildRuntimeAConfig(
      input({
        mcp: {
          local: { kind: 'local', command: ['node', 'mcp.js'], envs: { LOG: 'warn' }, timeoutMs: 5000 },
          remote: { kind: 'remote', gateway: 'docs', path: '/mcp' },
        },
      }),
    );
    expect(config.mcp).toEqual({
      local: {
        type: 'local',
        command: ['node', 'mcp.js'],
        environment: { LOG: 'warn' },
        enabled: true,
        timeout: 5000,
      },
      remote: { type: 'remote', url: 'http://127.0.0.1:18082/mcp', enabled: true, oauth: false },
    });
  });

  it('names the instructions file and returns it to write', () => {
    const built = buildRuntimeAConfig(input({ instructions: 'Be brief.' }));
    expect(built.config.instructions).toEqual(['/home/user/.agent/instructions.md']);
    expect(built.files).toEqual([{ path: '/home/user/.agent/instructions.md', content: 'Be brief.' }]);
  });

  it('turns network extras off', () => {
    expect(buildRuntimeAConfig(input()).config).toMatchObject({
      autoupdate: false,
      share: 'disabled',
      lsp: false,
      formatter: false,
      snapshot: false,
    });
  });
});

describe('rawConfig', () => {
  it.each(RESERVED_RAW_CONFIG_KEYS.map((key) => [key]))('never lets %s override', (key) => {
    const base = buildRuntimeAConfig(input()).config;
    const built = buildRuntimeAConfig(input({ rawConfig: { [key]: 'bogus' } }));
    expect(built.config[key]).toEqual(base[key]);
    expect(built.droppedRawConfig).toEqual([`rawConfig.${key}`]);
  });

  it('merges other keys', () => {
    expect(
      buildRuntimeAConfig(input({ rawConfig: { compaction: { auto: false }, snapshot: true } })).config,
    ).toMatchObject({ compaction: { auto: false }, snapshot: true });
  });
});

describe('text', () => {
  it('is the same for the same input and keeps the caller’s pattern order (the last match wins)', () => {
    expect(buildRuntimeAConfig(input()).text).toBe(buildRuntimeAConfig(input()).text);
    const order1 = buildRuntimeAConfig(
      input({ permissions: { default: 'allow', tools: { bash: { a: 'allow', b: 'deny' } } } }),
    ).text;
    const order2 = buildRuntimeAConfig(
      input({ permissions: { default: 'allow', tools: { bash: { b: 'deny', a: 'allow' } } } }),
    ).text;
    expect(order1).not.toBe(order2);
    expect(order1.indexOf('"a":"allow"')).toBeLessThan(order1.indexOf('"b":"deny"'));
  });
});
