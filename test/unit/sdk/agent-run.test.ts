import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentConfigSchema, startExecutionSchema } from '../../../protocol/agent-wire.js';
import {
  AgentError,
  AgentLimits,
  AgentModel,
  AgentSpec,
  RuntimeB,
  SandboxError,
  vendorBGateway,
  type Sandbox,
} from '../../../sdk/index.js';
import { FakeSandboxd, SUMMARY, connectedHandle, createdHandle } from './agent-fake-sandboxd.js';

const spec = (instructions?: string) =>
  new AgentSpec({
    model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }),
    ...(instructions === undefined ? {} : { instructions }),
  });

let fake: FakeSandboxd;
let sbx: Sandbox;
beforeEach(async () => {
  fake = await FakeSandboxd.start();
  sbx = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
});
afterEach(() => fake.close());

describe('sbx.agent.run', () => {
  it('writes the configuration, starts and sends the prompt (3 calls), then 2 calls with the same config', async () => {
    const result = await sbx.agent.run('fix the tests', { spec: spec('Be brief.') });
    expect(result).toEqual(SUMMARY);
    expect(
      Object.isFrozen(result) && Object.isFrozen(result.usage) && Object.isFrozen(result.toolCalls[0]),
    ).toBe(true);
    const [first] = [...fake.executions.keys()];
    expect(fake.agentCalls()).toEqual([
      'PUT /v1/agent/config',
      'POST /v1/agent/executions',
      `POST /v1/agent/executions/${String(first)}/prompt`,
    ]);
    const requests = fake.requests.filter((r) => r.path.startsWith('/v1/agent'));
    const config = agentConfigSchema.parse(JSON.parse(requests[0]?.body ?? ''));
    // The runtime-neutral request: the spec as data; sandboxd's driver builds the configuration.
    expect(config.runtime).toBe('runtime_a');
    expect(createHash('sha256').update(`runtime_a\n${config.text}`).digest('hex')).toBe(config.hash);
    expect(JSON.parse(config.text)).toEqual({
      spec: {
        model: { provider: 'vendor_b', id: 'model-1', gateway: 'llm', promptCaching: true },
        smallModel: 'model-1',
        instructions: 'Be brief.',
        permissions: { default: 'allow', tools: {} },
        agents: {},
        mcp: {},
      },
      options: {},
    });
    expect(startExecutionSchema.parse(JSON.parse(requests[1]?.body ?? ''))).toEqual({
      runtime: 'runtime_a',
      configHash: config.hash,
      limits: {
        timeoutMs: 600_000,
        maxSteps: 50,
        maxTotalTokens: 1_000_000,
        maxOutputBytes: 16 * 1024 * 1024,
      },
      workdir: '/home/user',
      reasoning: false,
    });
    expect(requests[2]).toMatchObject({ body: 'fix the tests', contentType: 'text/plain; charset=utf-8' });

    await sbx.agent.run('again', {
      spec: spec('Be brief.'),
      sessionId: result.sessionId,
      limits: new AgentLimits({ maxSteps: 3, maxTotalTokens: null }),
      workdir: '/home/user/project',
      reasoning: true,
    });
    const next = fake.last();
    expect(fake.agentCalls().slice(3)).toEqual([
      'POST /v1/agent/executions',
      `POST /v1/agent/executions/${next.id}/prompt`,
    ]);
    expect(next.start).toMatchObject({
      sessionId: 'ses_fake1',
      limits: { maxSteps: 3, maxTotalTokens: null },
      workdir: '/home/user/project',
      reasoning: true,
    });
  });

  it('names a model the call chooses in the start, with the request it wrote before', async () => {
    await sbx.agent.run('one', { spec: spec() });
    await sbx.agent.run('two', { spec: spec(), model: 'model-2' });
    expect(fake.agentCalls().slice(3, 5)).toEqual([
      'POST /v1/agent/executions',
      `POST /v1/agent/executions/${fake.last().id}/prompt`,
    ]);
    expect(fake.last().start).toMatchObject({ model: 'model-2' });
  });

  it('writes the configuration again and starts once more when sandboxd no longer holds it', async () => {
    await sbx.agent.run('one', { spec: spec() });
    fake.configs.clear(); // sandboxd restarted, or another process wrote others
    const result = await sbx.agent.run('two', { spec: spec() });
    expect(result.text).toBe('all done');
    expect(fake.agentCalls().slice(3)).toEqual([
      'POST /v1/agent/executions',
      'PUT /v1/agent/config',
      'POST /v1/agent/executions',
      `POST /v1/agent/executions/${fake.last().id}/prompt`,
    ]);
  });

  it('rejects with AgentError busy when another execution runs, and the stream ends with agent_failed', async () => {
    fake.refuseStart = {
      code: 'agent_failed',
      message: 'another agent execution is running on this sandbox',
      context: { reason: 'busy' },
    };
    const error = await sbx.agent.run('hi', { spec: spec() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toMatchObject({ reason: 'busy', code: 'agent_failed' });
    const stream = sbx.agent.stream('hi', { spec: spec() });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([{ type: 'agent_failed', reason: 'busy' }]);
    await expect(stream.result()).rejects.toMatchObject({ reason: 'busy' });
    expect(stream.sessionId).toBeUndefined();
    expect(fake.agentCalls().filter((call) => call.endsWith('/prompt'))).toEqual([]);
  });

  it('ends with runtime_missing the same way', async () => {
    fake.refuseStart = {
      code: 'agent_failed',
      message: 'no runtime',
      context: { reason: 'runtime_missing' },
    };
    await expect(sbx.agent.run('hi', { spec: spec() })).rejects.toMatchObject({ reason: 'runtime_missing' });
  });

  it('is refused once the sandbox ended, and then before any traffic', async () => {
    fake.ended = true;
    await expect(sbx.agent.run('hi', { spec: spec() })).rejects.toMatchObject({
      constructor: SandboxError,
      code: 'sandbox_ended',
    });
    const seen = fake.requests.length;
    const stream = sbx.agent.stream('hi', { spec: spec() });
    await expect(stream.result()).rejects.toMatchObject({ code: 'sandbox_ended' });
    await expect(sbx.agent.executions()).rejects.toMatchObject({ code: 'sandbox_ended' });
    expect(fake.requests.length).toBe(seen);
  });

  it('runs runtime_b with its own options: the entrypoint, a named model as a plain id', async () => {
    await sbx.agent.run('hi', {
      spec: spec(),
      runtime: new RuntimeB({ entrypoint: 'agent.graph:build' }),
      model: 'model-2',
    });
    const configs = fake.requests.filter((r) => r.path === '/v1/agent/config');
    const config = agentConfigSchema.parse(JSON.parse(configs.at(-1)?.body ?? ''));
    expect(config).toMatchObject({ runtime: 'runtime_b' });
    expect(JSON.parse(config.text)).toMatchObject({
      spec: {
        model: { provider: 'vendor_b', id: 'model-1', gateway: 'llm' },
        permissions: { default: 'allow' },
      },
      options: { entrypoint: 'agent.graph:build' },
    });
    expect(fake.last().start).toMatchObject({
      runtime: 'runtime_b',
      configHash: config.hash,
      model: 'model-2',
    });
    const withRaw = new AgentSpec({ model: spec().model, rawConfig: { theme: 'x' } });
    const seen = fake.requests.length;
    await expect(sbx.agent.run('hi', { spec: withRaw, runtime: 'runtime_b' })).rejects.toMatchObject({
      field: 'rawConfig',
    });
    expect(fake.requests.length).toBe(seen);
  });

  it('runs from a connected handle with the gateway state it read', async () => {
    const other = await connectedHandle(fake);
    const result = await other.agent.run('hi', { spec: spec() });
    expect(result.sessionId).toBe('ses_fake1');
  });
});

describe('sbx.agent.prepare', () => {
  it('fires the warm-up in the background and returns at once; a failure is swallowed', async () => {
    const prepare: () => unknown = () => sbx.agent.prepare();
    expect(prepare()).toBeUndefined();
    await expect.poll(() => fake.agentCalls()).toContain('POST /v1/agent/prepare');
    expect(fake.requests.find((r) => r.path === '/v1/agent/prepare')?.body).toBe('{"runtime":"runtime_a"}');
    fake.failPrepare = true;
    sbx.agent.prepare({ runtime: 'runtime_a' });
    await expect.poll(() => fake.agentCalls().filter((c) => c.endsWith('/prepare')).length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 20)); // an unhandled rejection would fail the run
    sbx.agent.prepare({ runtime: 'runtime_b' }); // nothing to warm up yet
    expect(() => sbx.agent.prepare({ runtime: 'runtime_c' as never })).toThrow(/runtime/);
  });

  it('with a spec writes its configuration first and names it; checks the spec before any call', async () => {
    const other = await connectedHandle(fake);
    const before = fake.requests.length;
    expect(() => other.agent.prepare({ spec: 'a spec' as never })).toThrow(
      expect.objectContaining({ field: 'spec' }),
    );
    const stray = new AgentSpec({
      model: new AgentModel({ provider: 'vendor_b', id: 'm', gateway: 'nope' }),
    });
    expect(() => other.agent.prepare({ spec: stray })).toThrow(
      expect.objectContaining({ field: 'spec.model.gateway' }),
    );
    expect(fake.requests.length).toBe(before);
    other.agent.prepare({ spec: spec() });
    await expect
      .poll(() => fake.agentCalls().slice(-2))
      .toEqual(['PUT /v1/agent/config', 'POST /v1/agent/prepare']);
    const body = (path: string): string => fake.requests.findLast((r) => r.path === path)?.body ?? '';
    const config = agentConfigSchema.parse(JSON.parse(body('/v1/agent/config')));
    expect(JSON.parse(body('/v1/agent/prepare'))).toEqual({ runtime: 'runtime_a', configHash: config.hash });
  });
});
