/**
 * What reaches opencode's command line and environment can never be a flag or change how a process
 * runs: session ids and models are checked on the wire and passed as `--name=value`; the environment
 * is the driver's own (the provider's placeholder key, the configuration), never the request's.
 */
import { describe, expect, it } from 'vitest';
import { startExecutionSchema } from '../../../protocol/agent-wire.js';
import type { WireAgentSpec } from '../../../protocol/agent-request.js';
import { driver } from '../driver.js';
import { runtimeACommand } from '../launch.js';
import { OPENCODE_PROVIDERS } from '../providers.js';

const START = {
  runtime: 'runtime_a',
  configHash: 'a'.repeat(64),
  limits: { timeoutMs: 1000, maxSteps: 5, maxTotalTokens: null, maxOutputBytes: 1000 },
  workdir: '/home/user',
  reasoning: false,
} as const;

const SITE = { agentsDir: '/opt/agents', configDir: '/run/agent', configHome: '/run/agent-config-home' };

const spec = (provider: WireAgentSpec['model']['provider']): WireAgentSpec => ({
  model: {
    provider,
    id: 'm-1',
    gateway: 'llm',
    promptCaching: true,
    ...(provider === 'vendor_a' ? { region: 'us-east-1' } : {}),
  },
  smallModel: 'm-1',
  permissions: { default: 'allow', tools: {} },
  agents: {},
  mcp: {},
});

describe('the runtime_a command line', () => {
  it('passes a session and a model as --name=value', () => {
    const cmd = runtimeACommand(
      { sessionId: 'ses_abc123', model: 'gateway/m-1', reasoning: true },
      '/opt/agents/bin/opencode',
    );
    expect(cmd).toBe(
      "exec '/opt/agents/bin/opencode' 'run' '--format' 'json' '--title' 'sdk agent run' '--model=gateway/m-1' '--session=ses_abc123' '--thinking'",
    );
  });

  it("names a run's model with opencode's provider id, and declares it in the configuration", () => {
    const plan = driver.plan(
      { spec: spec('vendor_b'), options: {} },
      { llm: 'http://127.0.0.1:41001' },
      { model: 'm-2', reasoning: false, workdir: '/home/user' },
      SITE,
    );
    expect(plan.cmd).toContain("'--model=anthropic/m-2'");
    const config = JSON.parse(plan.environment['OPENCODE_CONFIG_CONTENT'] ?? '') as {
      provider: { anthropic: { models: Record<string, unknown>; options: { baseURL: string } } };
    };
    expect(Object.keys(config.provider.anthropic.models)).toEqual(['m-1', 'm-2']);
    expect(config.provider.anthropic.options.baseURL).toBe('http://127.0.0.1:41001/v1');
  });

  it.each(['--auto', '-c', '--help', 'ses-1', 'ses_', `rda_${'g'.repeat(32)}`])(
    'refuses session id %s on the wire',
    (sessionId) => expect(startExecutionSchema.safeParse({ ...START, sessionId }).success).toBe(false),
  );

  it.each(['ses_AbC123', `rda_${'0a'.repeat(16)}`])('takes session id %s', (sessionId) =>
    expect(startExecutionSchema.safeParse({ ...START, sessionId }).success).toBe(true),
  );

  it('refuses a model that starts like a flag', () => {
    expect(startExecutionSchema.safeParse({ ...START, model: '--auto' }).success).toBe(false);
    expect(startExecutionSchema.safeParse({ ...START, model: 'model-2' }).success).toBe(true);
  });
});

describe("the runtime's environment", () => {
  it.each(Object.keys(OPENCODE_PROVIDERS) as WireAgentSpec['model']['provider'][])(
    "holds %s's placeholder key variable and nothing a request chooses",
    (provider) => {
      const { environment } = driver.plan(
        { spec: spec(provider), options: {} },
        { llm: 'http://127.0.0.1:41001' },
        { reasoning: false, workdir: '/home/user' },
        SITE,
      );
      const keyEnv = OPENCODE_PROVIDERS[provider].placeholderKeyEnv;
      const keys = Object.keys(environment).filter((name) => !name.startsWith('OPENCODE_'));
      expect(keys.sort()).toEqual(
        [...(keyEnv === undefined ? [] : [keyEnv]), 'PATH', 'XDG_CONFIG_HOME'].sort(),
      );
      if (keyEnv !== undefined) expect(environment[keyEnv]).toBe('sdk-placeholder');
      expect(environment['PATH']).toBe('/opt/agents/bin:/usr/local/bin:/usr/bin:/bin');
    },
  );

  it('takes no option: an environment, a binary or anything else in a request is refused', () => {
    for (const options of [{ env: { LD_PRELOAD: '/tmp/x' } }, { binary: '/tmp/x' }, { PATH: '/tmp' }]) {
      expect(driver.options.safeParse(options).success).toBe(false);
    }
    expect(driver.options.safeParse({}).success).toBe(true);
  });
});
