import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { buildRuntimeAConfig, type RuntimeAConfigInput } from '../../runtime-drivers/runtime-a/config.js';
import { RunAccumulator, parseLine } from '../../runtime-drivers/runtime-a/events.js';
import type { PermissionsInput } from '../../runtime-drivers/runtime-a/permissions.js';
import { RESERVED_RAW_CONFIG_KEYS, isCredentialKey } from '../../runtime-drivers/runtime-a/raw-config.js';

const name = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
const action = fc.constantFrom('allow' as const, 'deny' as const);
const pattern = fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/^(?:0|[1-9][0-9]*)$/.test(s));
const tool = fc.constantFrom('bash', 'read', 'edit', 'question', 'webfetch', 'mcp_*', '*', 'task');
const permissions: fc.Arbitrary<PermissionsInput> = fc.record({
  default: action,
  tools: fc.dictionary(tool, fc.oneof(action, fc.dictionary(pattern, action, { maxKeys: 4 }))),
});
const anyKey = fc.oneof(
  fc.constantFrom(
    ...RESERVED_RAW_CONFIG_KEYS,
    'auth',
    'apiKey',
    'api_key',
    'headers',
    'token',
    'x-api-key',
    '__proto__',
  ),
  fc.string({ maxLength: 10 }),
);
const rawConfig = fc.dictionary(anyKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 });

const inputs: fc.Arbitrary<RuntimeAConfigInput> = fc.record({
  model: fc.oneof(
    fc.record({
      provider: fc.constantFrom(
        'vendor_b' as const,
        'vendor_c' as const,
        'vendor_d' as const,
        'vendor_e' as const,
      ),
      id: name,
      gateway: fc.constant('llm'),
      promptCaching: fc.boolean(),
    }),
    fc.record({
      provider: fc.constant('vendor_a' as const),
      id: name,
      gateway: fc.constant('llm'),
      region: fc.constant('us-east-1'),
      promptCaching: fc.boolean(),
    }),
    fc.record({
      provider: fc.constant('compatible' as const),
      id: name,
      gateway: fc.constant('llm'),
      basePath: fc.constantFrom('', '/v1', '/api/v1'),
      promptCaching: fc.boolean(),
    }),
  ),
  smallModel: name,
  instructions: fc.option(fc.string(), { nil: undefined }),
  instructionsPath: fc.constant('/home/user/.agent/instructions.md'),
  permissions,
  agents: fc.dictionary(
    name.filter((n) => n !== 'build'),
    fc.record({
      description: fc.string({ minLength: 1 }),
      instructions: fc.string(),
      model: fc.option(name, { nil: undefined }),
      permissions: fc.option(permissions, { nil: undefined }),
    }),
    { maxKeys: 3 },
  ),
  mcp: fc.dictionary(
    name,
    fc.oneof(
      fc.record({
        kind: fc.constant('local' as const),
        command: fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 3 }),
        envs: fc.dictionary(
          fc.stringMatching(/^[A-Z_]{1,8}$/).filter((k) => !isCredentialKey(k)),
          fc.string(),
        ),
        timeoutMs: fc.option(fc.integer({ min: 1, max: 3_600_000 }), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('remote' as const),
        gateway: fc.constant('docs'),
        path: fc.constantFrom('/', '/mcp'),
      }),
    ),
    { maxKeys: 3 },
  ),
  rawConfig: fc.option(rawConfig, { nil: undefined }),
  gateways: fc.constant({ llm: 'http://127.0.0.1:18081', docs: 'http://127.0.0.1:18082' }),
});

function keys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keys);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keys(inner)]);
}

test.prop([inputs])(
  'the configuration holds no credential field and rawConfig never overrides a reserved key',
  (given) => {
    const built = buildRuntimeAConfig(given);
    const parsed = JSON.parse(built.text) as Record<string, unknown>;
    expect(keys(parsed).filter(isCredentialKey)).toEqual([]);
    expect(built.text).not.toMatch(/Bearer |"plugin"/);
    const bare = buildRuntimeAConfig({ ...given, rawConfig: undefined }).config;
    for (const key of RESERVED_RAW_CONFIG_KEYS) expect(parsed[key]).toEqual(bare[key]);
    expect(JSON.stringify(parsed.permission)).not.toContain('"ask"');
    expect(buildRuntimeAConfig(given).text).toBe(built.text);
  },
);

test.prop([
  fc.oneof(
    fc.string(),
    fc.json(),
    fc.jsonValue().map((v) => JSON.stringify({ type: 'tool_use', part: v })),
  ),
])('the parser never throws', (line) => {
  expect(() => parseLine(line)).not.toThrow();
  expect(() => new RunAccumulator(parseLine).push(line)).not.toThrow();
});
