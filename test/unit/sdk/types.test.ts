import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  AgentLimits,
  AgentModel,
  AgentPermissions,
  AgentSpec,
  IdlePolicy,
  InvalidArgumentError,
  McpLocal,
  McpRemote,
  PoolConfig,
  RuntimeB,
  S3Prefix,
  Sandbox,
  SandboxError,
  SecretGateway,
  SecretRef,
  SubAgent,
  agentPoolWarmup,
  checkSpecForRuntime,
  resolveSandboxOptions,
} from '../../../sdk/index.js';

function rejects(make: () => unknown, field: string, code = 'invalid_argument'): InvalidArgumentError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    const e = error as InvalidArgumentError;
    expect(e.field).toBe(field);
    expect(e.code).toBe(code);
    return e;
  }
  throw new Error(`expected InvalidArgumentError on ${field}`);
}

const gateway = (extra: Partial<ConstructorParameters<typeof SecretGateway>[0]> = {}) =>
  new SecretGateway({
    upstream: 'https://api.example',
    headers: { 'x-api-key': 'k' },
    allow: [['POST', '/v1/messages']],
    ...extra,
  });

describe('SecretGateway', () => {
  it('keeps names, never values, and defaults the rate to 600', () => {
    const g = gateway({
      headers: {
        'x-api-key': 'llm-key',
        authorization: new SecretRef({ name: 'other', region: 'eu-west-1' }),
      },
    });
    expect(g.ratePerMinute).toBe(0);
    expect(g.effectiveRatePerMinute).toBe(600);
    expect(Object.isFrozen(g) && Object.isFrozen(g.headers) && Object.isFrozen(g.allow)).toBe(true);
  });

  it('enforces 16 headers and 32 allow rules', () => {
    const headers = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, `s${i}`]));
    expect(gateway({ headers: headers(16) }).headers).toBeDefined();
    rejects(() => gateway({ headers: headers(17) }), 'headers');
    const rules = (n: number) => Array.from({ length: n }, (_, i) => ['POST', `/r${i}`] as [string, string]);
    expect(gateway({ allow: rules(32) }).allow).toHaveLength(32);
    rejects(() => gateway({ allow: rules(33) }), 'allow');
  });

  it.each([0, 1, 600, 6000])('accepts ratePerMinute %d', (rate) =>
    expect(gateway({ ratePerMinute: rate }).ratePerMinute).toBe(rate),
  );
  it.each([-1, 6001, 1.5, Number.NaN])('refuses ratePerMinute %d', (rate) => {
    rejects(() => gateway({ ratePerMinute: rate }), 'ratePerMinute');
  });

  it('refuses forbidden, duplicate and malformed header names', () => {
    rejects(() => gateway({ headers: { Host: 's' } }), 'headers.Host');
    rejects(() => gateway({ headers: { Content_Length: 's' } }), 'headers.Content_Length');
    rejects(() => gateway({ headers: { 'X-Key': 'a', x_key: 'b' } }), 'headers.x_key');
    rejects(() => gateway({ headers: { 'x key': 's' } }), 'headers.x key');
  });

  it('refuses impossible allow paths with code invalid_allow_path', () => {
    rejects(() => gateway({ allow: [['POST', '/v1//x']] }), 'allow[0]', 'invalid_allow_path');
    rejects(() => gateway({ allow: [['POST', '/v1/%2e%2e/*']] }), 'allow[0]', 'invalid_allow_path');
  });

  it('refuses a non-https upstream and one with a path, user or loopback host', () => {
    for (const upstream of [
      'http://api.example',
      'https://api.example/v1',
      'https://u:p@api.example',
      'https://127.0.0.1',
    ]) {
      rejects(() => gateway({ upstream }), 'upstream');
    }
  });

  it('needs only its upstream (SPEC marks only it required); no allow rules admit nothing', () => {
    const g = new SecretGateway({ upstream: 'https://api.example' });
    expect(g.allow).toEqual([]);
    expect(g.headers).toEqual({});
  });

  it('has no field for a credential and rejects unknown keys', () => {
    rejects(
      () => new SecretGateway({ upstream: 'https://a.example', allow: [], apiKey: 'x' } as never),
      'apiKey',
    );
  });
});

describe('secrets never leak through errors', () => {
  const value = 'Bearer sk-live-0123456789abcdef';
  const attempts: [string, () => unknown][] = [
    ['header value', () => gateway({ headers: { authorization: value } })],
    ['SecretRef name', () => new SecretRef({ name: value })],
    ['upstream user', () => gateway({ upstream: `https://user:${value.slice(7)}@api.example` })],
    [
      'unknown field',
      () => new AgentModel({ provider: 'vendor_b', id: 'm', gateway: 'llm', apiKey: value } as never),
    ],
    ['env of MCP', () => new McpLocal({ command: ['x'], envs: { 'BAD NAME': value } })],
  ];

  it.each(attempts)('%s', (_, attempt) => {
    let error: unknown;
    try {
      attempt();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    for (const rendered of [
      (error as Error).message,
      inspect(error, { depth: 10 }),
      JSON.stringify(error),
      String((error as Error).stack),
    ]) {
      expect(rendered).not.toContain(value.slice(7));
    }
  });
});

describe('AgentModel', () => {
  it('applies defaults', () => {
    const m = new AgentModel({ provider: 'vendor_b', id: 'm', gateway: 'llm' });
    expect([m.basePath, m.promptCaching, m.region]).toEqual(['', true, undefined]);
  });
  it('needs a region with vendor_a, only there', () => {
    rejects(() => new AgentModel({ provider: 'vendor_a', id: 'm', gateway: 'llm' }), 'region');
    rejects(
      () => new AgentModel({ provider: 'vendor_b', id: 'm', gateway: 'llm', region: 'us-east-1' }),
      'region',
    );
    expect(
      new AgentModel({ provider: 'vendor_a', id: 'm', gateway: 'llm', region: 'us-east-1' }).region,
    ).toBe('us-east-1');
  });
  it('takes basePath only with compatible, in path form', () => {
    rejects(
      () => new AgentModel({ provider: 'vendor_c', id: 'm', gateway: 'llm', basePath: '/v1' }),
      'basePath',
    );
    rejects(
      () => new AgentModel({ provider: 'compatible', id: 'm', gateway: 'llm', basePath: '/v1/' }),
      'basePath',
    );
    rejects(
      () => new AgentModel({ provider: 'compatible', id: 'm', gateway: 'llm', basePath: 'v1' }),
      'basePath',
    );
    expect(
      new AgentModel({ provider: 'compatible', id: 'm', gateway: 'llm', basePath: '/api/v1' }).basePath,
    ).toBe('/api/v1');
  });
  it('refuses the models/ prefix for vendor_d, bad route names and unknown providers', () => {
    rejects(() => new AgentModel({ provider: 'vendor_d', id: 'models/g', gateway: 'llm' }), 'id');
    rejects(() => new AgentModel({ provider: 'vendor_b', id: 'm', gateway: 'LLM' }), 'gateway');
    rejects(() => new AgentModel({ provider: 'vendor_j' as never, id: 'm', gateway: 'llm' }), 'provider');
  });
});

describe('AgentSpec and friends', () => {
  const model = new AgentModel({ provider: 'vendor_b', id: 'big', gateway: 'llm' });

  it('defaults smallModel to the model id and permissions to allow', () => {
    const spec = new AgentSpec({ model });
    expect(spec.smallModel).toBe('big');
    expect(spec.permissions.default).toBe('allow');
    expect(spec.permissions.effectiveTools()).toEqual({
      question: 'deny',
      webfetch: 'deny',
      websearch: 'deny',
    });
  });

  it('lists the model gateway then every McpRemote gateway once', () => {
    const spec = new AgentSpec({
      model,
      mcp: {
        docs: new McpRemote({ gateway: 'docs', path: '/mcp' }),
        again: new McpRemote({ gateway: 'llm' }),
        local: new McpLocal({ command: ['node', 'srv.js'] }),
      },
    });
    expect(spec.gatewayNames()).toEqual(['llm', 'docs']);
  });

  it.each([
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
  ])('rejects the reserved rawConfig key %s', (key) => {
    rejects(() => new AgentSpec({ model, rawConfig: { [key]: 1 } }), `rawConfig.${key}`);
  });

  it('reserves the subagent name build and checks names', () => {
    const sub = new SubAgent({ description: 'reviews', instructions: 'review' });
    expect(rejects(() => new AgentSpec({ model, agents: { build: sub } }), 'agents.build').message).toContain(
      'the name build is reserved',
    );
    expect(
      rejects(() => new AgentSpec({ model, agents: { 'Bad Name': sub } }), 'agents.Bad Name').message,
    ).toContain('1-64 characters [a-z0-9_-]');
    rejects(
      () => new AgentSpec({ model, mcp: { ['x'.repeat(65)]: new McpRemote({ gateway: 'docs' }) } }),
      `mcp.${'x'.repeat(65)}`,
    );
    expect(Object.keys(new AgentSpec({ model, agents: { review_1: sub } }).agents)).toEqual(['review_1']);
  });

  it('has no credential field', () => {
    rejects(() => new AgentSpec({ model, apiKey: 'x' } as never), 'apiKey');
    rejects(() => new AgentSpec({ model, credentials: {} } as never), 'credentials');
  });

  it('permissions: ask is invalid; an explicit entry overrides the default denials', () => {
    rejects(() => new AgentPermissions({ default: 'ask' as never }), 'default');
    expect(
      rejects(() => new AgentPermissions({ tools: { bash: { '*': 'ask' as never } } }), 'tools.bash').message,
    ).toContain('ask is not supported');
    // A whole-number key would move ahead of the others: the last-match order would not be the caller's.
    expect(() => new AgentPermissions({ tools: { bash: { '*': 'deny', '42': 'allow' } } })).toThrow(
      /tools\.bash.*whole number/,
    );
    expect(() => new AgentPermissions({ tools: { '7': 'deny' } })).toThrow(/whole number/);
    expect(new AgentPermissions({ tools: { bash: { '042': 'allow', 'x 1': 'deny' } } }).tools.bash).toEqual({
      '042': 'allow',
      'x 1': 'deny',
    });
    const p = new AgentPermissions({ tools: { webfetch: 'allow', bash: { '*': 'deny', 'git *': 'allow' } } });
    expect(p.effectiveTools()).toEqual({
      question: 'deny',
      webfetch: 'allow',
      websearch: 'deny',
      bash: { '*': 'deny', 'git *': 'allow' },
    });
  });

  it('limits: defaults 600 s, 50 steps, 1,000,000 tokens, 16 MiB; null disables the budget', () => {
    expect(new AgentLimits()).toMatchObject({
      timeoutMs: 600_000,
      maxSteps: 50,
      maxTotalTokens: 1_000_000,
      maxOutputBytes: 16 * 1024 * 1024,
    });
    expect(new AgentLimits({ maxTotalTokens: null }).maxTotalTokens).toBeNull();
    rejects(() => new AgentLimits({ maxSteps: 0 }), 'maxSteps');
    rejects(() => new AgentLimits({ timeoutMs: 1.5 }), 'timeoutMs');
  });

  it('runtimeVersion is validated as text only', () => {
    expect(new AgentSpec({ model, runtimeVersion: 'anything 1.2' }).runtimeVersion).toBe('anything 1.2');
    rejects(() => new AgentSpec({ model, runtimeVersion: 'a\nb' }), 'runtimeVersion');
  });

  it('runtime_b refuses mcp, rawConfig, unknown tools and patterns outside bash', () => {
    const b = new RuntimeB({ entrypoint: 'agent.graph:build' });
    expect(() =>
      checkSpecForRuntime(new AgentSpec({ model, rawConfig: { a: 1 } }), 'runtime_a'),
    ).not.toThrow();
    expect(() => checkSpecForRuntime(new AgentSpec({ model, rawConfig: { a: 1 } }), b)).toThrow(/rawConfig/);
    expect(() =>
      checkSpecForRuntime(
        new AgentSpec({ model, mcp: { m: new McpLocal({ command: ['x'] }) } }),
        'runtime_b',
      ),
    ).toThrow(/mcp/);
    const tools = (t: ConstructorParameters<typeof AgentPermissions>[0]) =>
      new AgentSpec({ model, permissions: new AgentPermissions(t) });
    expect(() => checkSpecForRuntime(tools({ tools: { webfetch: 'allow' } }), 'runtime_b')).toThrow(
      /no such tool/,
    );
    expect(() => checkSpecForRuntime(tools({ tools: { edit: { '*.md': 'allow' } } }), 'runtime_b')).toThrow(
      /only bash/,
    );
    expect(() =>
      checkSpecForRuntime(tools({ tools: { bash: { 'git *': 'allow' }, edit: 'deny' } }), 'runtime_b'),
    ).not.toThrow();
    rejects(() => new RuntimeB({ entrypoint: 'no-colon' }), 'entrypoint');
  });
});

describe('sandbox-side types', () => {
  it('S3Prefix places the home at <prefix>/<name>/home.tar.gz', () => {
    expect(new S3Prefix({ bucket: 'team-homes', prefix: 'a/b', name: 'alice' }).key).toBe(
      'a/b/alice/home.tar.gz',
    );
    rejects(() => new S3Prefix({ bucket: 'Team', prefix: 'a', name: 'x' }), 'bucket');
    rejects(() => new S3Prefix({ bucket: 'team', prefix: '/a', name: 'x' }), 'prefix');
    rejects(() => new S3Prefix({ bucket: 'team', prefix: 'a', name: '..' }), 'name');
  });

  it('IdlePolicy defaults to 300 s with auto-resume', () => {
    expect(new IdlePolicy()).toMatchObject({ maxIdleSeconds: 300, autoResume: true });
    rejects(() => new IdlePolicy({ maxIdleSeconds: 0 }), 'maxIdleSeconds');
  });

  it('PoolConfig takes an agent warm-up', () => {
    const pool = new PoolConfig({ size: 2, template: 'sdk-agent', warmup: agentPoolWarmup('runtime_a') });
    expect([pool.allowInternetAccess, pool.warmup]).toEqual([true, { kind: 'agent', runtime: 'runtime_a' }]);
    rejects(() => new PoolConfig({ size: 0, template: 'sdk-agent' }), 'size');
  });

  it('sandbox options: defaults, 8 routes at most, 8 h cap, role with persist', () => {
    const o = resolveSandboxOptions();
    expect([o.template, o.allowInternetAccess, o.timeoutMs, o.keepOnFailure, o.gateways]).toEqual([
      'sdk-base',
      true,
      3_600_000,
      false,
      {},
    ]);
    const routes = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`r${i}`, gateway()]));
    expect(Object.keys(resolveSandboxOptions({ gateways: routes(8) }).gateways)).toHaveLength(8);
    rejects(() => resolveSandboxOptions({ gateways: routes(9) }), 'gateways');
    rejects(() => resolveSandboxOptions({ gateways: { Bad_Name: gateway() } }), 'gateways.Bad_Name');
    rejects(() => resolveSandboxOptions({ timeoutMs: 8 * 3_600_000 + 1 }), 'timeoutMs');
    expect([o.memoryMb, o.cpus]).toEqual([undefined, undefined]); // the template's, on the control plane
    rejects(() => resolveSandboxOptions({ memoryMb: 31 }), 'memoryMb');
    rejects(() => resolveSandboxOptions({ memoryMb: 100.5 }), 'memoryMb');
    rejects(() => resolveSandboxOptions({ cpus: 0 }), 'cpus');
    rejects(() => resolveSandboxOptions({ cpus: 65 }), 'cpus');
    const persist = new S3Prefix({ bucket: 'homes', prefix: '', name: 'a' });
    rejects(() => resolveSandboxOptions({ persist }), 'executionRoleArn');
    expect(
      resolveSandboxOptions({ persist, executionRoleArn: 'arn:aws:iam::123456789012:role/sbx' }).persist,
    ).toBe(persist);
  });

  it('Sandbox.create checks arguments before anything else', async () => {
    await expect(Sandbox.create({ timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    // Valid options reach for the control plane; none listens on this port.
    await expect(Sandbox.create({ controlPlaneUrl: 'http://127.0.0.1:9' })).rejects.toBeInstanceOf(
      SandboxError,
    );
  });
});
