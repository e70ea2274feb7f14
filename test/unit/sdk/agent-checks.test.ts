import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AgentModel,
  AgentSpec,
  InvalidArgumentError,
  McpRemote,
  SubAgent,
  compatibleGateway,
  vendorAGateway,
  vendorBGateway,
  vendorDGateway,
  vendorHGateway,
  type RunOptions,
  type Sandbox,
  type SdkError,
} from '../../../sdk/index.js';
import { FakeSandboxd, SECRET_VALUE, connectedHandle, createdHandle } from './agent-fake-sandboxd.js';

const PROMPT = 'the prompt text, never in an error';

let fake: FakeSandboxd;
beforeEach(async () => {
  fake = await FakeSandboxd.start();
});
afterEach(() => fake.close());

const model = (options: Partial<ConstructorParameters<typeof AgentModel>[0]> = {}) =>
  new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm', ...options });

/** Both entry points refuse `options` with InvalidArgumentError on `field`, before any request. */
async function refused(
  sbx: Sandbox,
  options: unknown,
  field: string,
  prompt: unknown = PROMPT,
): Promise<void> {
  const seen = fake.requests.length;
  let thrown: unknown;
  try {
    sbx.agent.stream(prompt as string, options as RunOptions);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidArgumentError);
  expect(thrown).toMatchObject({ field });
  const rejected = await sbx.agent.run(prompt as string, options as RunOptions).catch((e: unknown) => e);
  expect(rejected).toBeInstanceOf(InvalidArgumentError);
  expect(rejected).toMatchObject({ field });
  for (const error of [thrown, rejected] as SdkError[]) {
    const text = `${error.message} ${JSON.stringify(error.toJSON())}`;
    expect(text).not.toContain(SECRET_VALUE);
    expect(text).not.toContain(PROMPT);
  }
  expect(fake.requests.length).toBe(seen);
}

describe('checks before any call', () => {
  it('refuses malformed options, naming the field', async () => {
    const sbx = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
    const spec = new AgentSpec({ model: model() });
    await refused(sbx, { spec }, 'prompt', '');
    await refused(sbx, {}, 'spec');
    await refused(sbx, { spec: { model: model() } }, 'spec');
    await refused(sbx, { spec, apiKey: SECRET_VALUE }, 'apiKey');
    await refused(sbx, { spec, runtime: 'runtime_c' }, 'runtime');
    await refused(sbx, { spec, sessionId: 'ses 1' }, 'sessionId');
    await refused(sbx, { spec, model: 'model with spaces' }, 'model');
    await refused(sbx, { spec, limits: { maxSteps: 3 } }, 'limits');
    await refused(sbx, { spec, workdir: 'relative/dir' }, 'workdir');
    await refused(sbx, { spec, reasoning: 'yes' }, 'reasoning');
    await refused(sbx, { spec, signal: new AbortController() }, 'signal');
  });

  it('refuses a gateway the handle does not have: the model, an McpRemote, also on a connected handle', async () => {
    const created = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
    await refused(
      created,
      { spec: new AgentSpec({ model: model({ gateway: 'other' }) }) },
      'spec.model.gateway',
    );
    const withMcp = new AgentSpec({ model: model(), mcp: { docs: new McpRemote({ gateway: 'docs-mcp' }) } });
    await refused(created, { spec: withMcp }, 'spec.mcp.docs.gateway');
    fake.routes = { other: 41002 };
    const connected = await connectedHandle(fake);
    await refused(connected, { spec: new AgentSpec({ model: model() }) }, 'spec.model.gateway');
  });

  it('vendor_d: the preset must list the small model (and the model)', async () => {
    const sbx = await createdHandle(fake, {
      llm: vendorDGateway('vendor-d-key', { models: ['big', 'small'] }),
    });
    const vendorD = (id: string, smallModel?: string) =>
      new AgentSpec({
        model: model({ provider: 'vendor_d', id }),
        ...(smallModel === undefined ? {} : { smallModel }),
      });
    await refused(sbx, { spec: vendorD('big', 'tiny') }, 'spec.smallModel');
    await refused(sbx, { spec: vendorD('huge', 'small') }, 'spec.model.id');
    await refused(sbx, { spec: vendorD('big', 'small'), model: 'huge' }, 'model');
    const withSubagent = (subModel: string) =>
      new AgentSpec({
        model: model({ provider: 'vendor_d', id: 'big' }),
        smallModel: 'small',
        agents: { helper: new SubAgent({ description: 'helps', instructions: 'help', model: subModel }) },
      });
    await refused(sbx, { spec: withSubagent('huge') }, 'spec.agents.helper.model');
    await expect(sbx.agent.run('go', { spec: withSubagent('small') })).resolves.toBeDefined();
    await expect(
      sbx.agent.run('go', { spec: vendorD('big', 'small'), model: 'small' }),
    ).resolves.toBeDefined();
  });

  it("vendor_a: an overriding model must be in the preset's models", async () => {
    const sbx = await createdHandle(fake, {
      llm: vendorAGateway('vendor-a-key', { region: 'us-east-1', models: ['vendor.model-v1:0'] }),
    });
    const spec = new AgentSpec({
      model: model({ provider: 'vendor_a', id: 'vendor.model-v1:0', region: 'us-east-1' }),
    });
    await refused(sbx, { spec, model: 'vendor.model-v2:0' }, 'model');
    await sbx.agent.run('go', { spec });
    expect(fake.last().start.model).toBeUndefined();
    await sbx.agent.run('go', { spec, model: 'vendor.model-v1:0' });
    expect(fake.last().start.model).toBe('vendor.model-v1:0'); // the runtime's driver names it its own way;
  });

  it("compatible: the base path must equal the preset's", async () => {
    const sbx = await createdHandle(fake, {
      llm: vendorHGateway('vendor-h-key'),
      self: compatibleGateway('self-key', { upstream: 'https://models.internal.example', basePath: '/api' }),
    });
    const compatible = (gateway: string, basePath: string) =>
      new AgentSpec({ model: model({ provider: 'compatible', gateway, basePath }) });
    await refused(sbx, { spec: compatible('llm', '/v2') }, 'spec.model.basePath');
    await refused(sbx, { spec: compatible('self', '') }, 'spec.model.basePath');
    await expect(sbx.agent.run('go', { spec: compatible('llm', '/v1') })).resolves.toBeDefined();
    await expect(sbx.agent.run('go', { spec: compatible('self', '/api') })).resolves.toBeDefined();
  });

  it('a connected handle knows no presets: only the gateway names are checked', async () => {
    fake.routes = { llm: 41001 };
    const sbx = await connectedHandle(fake);
    const spec = new AgentSpec({ model: model({ provider: 'vendor_d', id: 'any' }) });
    await expect(sbx.agent.run('go', { spec })).resolves.toBeDefined();
  });

  it("checks the spec for the runtime before any call, and a session of the other runtime's", async () => {
    const sbx = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
    const withMcp = new AgentSpec({ model: model(), mcp: { docs: new McpRemote({ gateway: 'llm' }) } });
    await refused(sbx, { spec: withMcp, runtime: 'runtime_b' }, 'mcp');
    const spec = new AgentSpec({ model: model() });
    await refused(sbx, { spec, runtime: 'runtime_b', sessionId: 'ses_abc' }, 'sessionId');
    await refused(sbx, { spec, sessionId: `rda_${'0'.repeat(32)}` }, 'sessionId');
  });
});

describe('errors carry no secret and no prompt', () => {
  it('from refusals, a lost configuration, a broken stream and an ended sandbox', async () => {
    const sbx = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
    const spec = new AgentSpec({ model: model() });
    const errors: unknown[] = [];
    const capture = async (run: () => Promise<unknown>) => errors.push(await run().catch((e: unknown) => e));
    fake.refuseStart = {
      code: 'agent_failed',
      message: 'another agent execution is running',
      context: { reason: 'busy' },
    };
    await capture(() => sbx.agent.run(PROMPT, { spec }));
    fake.refuseStart = { code: 'sandbox_error', message: 'start failed' };
    await capture(() => sbx.agent.run(PROMPT, { spec }));
    fake.refuseStart = undefined;
    fake.onPrompt = (execution) => execution.end();
    await capture(() => sbx.agent.run(PROMPT, { spec }));
    await capture(() => sbx.agent.attach('nope'));
    fake.ended = true;
    await capture(() => sbx.agent.run(PROMPT, { spec }));
    expect(errors).toHaveLength(5);
    for (const error of errors as SdkError[]) {
      expect(error.code).toBeDefined();
      const text = `${error.message} ${JSON.stringify(error.toJSON())} ${String(error.stack)}`;
      expect(text).not.toContain(SECRET_VALUE);
      expect(text).not.toContain(PROMPT);
    }
    // The secret went to sandboxd's gateway configuration only, never to an agent call.
    const agentBodies = fake.requests.filter((r) => r.path.startsWith('/v1/agent')).map((r) => r.body);
    expect(agentBodies.join('\n')).not.toContain(SECRET_VALUE);
    expect(fake.requests.some((r) => r.path === '/v1/gateways' && r.body.includes(SECRET_VALUE))).toBe(true);
  });
});
