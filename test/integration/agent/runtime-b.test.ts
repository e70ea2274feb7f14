/**
 * runtime_b end to end (issue 12): the deep-agents runner of the `sdk-agent` template in real
 * sandboxes, every provider through a real gateway route to the scripted model server over HTTPS,
 * through the same execution actor as runtime_a (sessions, token budget, timeout, permissions,
 * entrypoints).
 */
import { execFile } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProvider } from '../../../rules/agent-providers.js';
import { AgentError } from '../../../rules/errors.js';
import { AgentLimits } from '../../../sdk/agent-limits.js';
import { AgentPermissions } from '../../../sdk/agent-permissions.js';
import { RuntimeB } from '../../../sdk/runtimes.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { errorStatus, text, toolCall, type ScriptEntry } from '../../support/model-server/index.js';
import {
  AGENT_CLIENT,
  PROVIDER_PATHS,
  PROVIDER_ROUTES,
  expectTimeoutOnlyOnceTreeIsGone,
  processesNamed as processesInSandbox,
  useAgentWorld,
  useSharedSandbox,
} from './agent-world.js';

const world = useAgentWorld(23);

const CLIENT = AGENT_CLIENT;
const run = promisify(execFile);
const PATHS = PROVIDER_PATHS;

let sbx: Sandbox;
useSharedSandbox(world, (created) => (sbx = created));

const script = (...turns: ScriptEntry[]) => world.upstream.model.reset(turns);

const processesNamed = (needle: string): Promise<number> => processesInSandbox(sbx, needle);

/** A run that edits a real file with bash: text deltas, usage, an rda_ session, the key injected upstream. */
async function editsAFileWithBash(sbx: Sandbox): Promise<void> {
  script(toolCall('execute', { command: 'echo from runtime b > rb.txt' }), text('wrote rb.txt'));
  const stream = sbx.agent.stream('write rb.txt', { spec: world.spec(), runtime: 'runtime_b' });
  const types: string[] = [];
  for await (const event of stream) types.push(event.type);
  expect(types[0]).toBe('step_started');
  expect(types).toContain('tool_call');
  expect(types).toContain('text_delta');
  expect(types.slice(-3)).toEqual(['text', 'step_finished', 'done']);
  const result = await stream.result();
  expect(result).toMatchObject({ text: 'wrote rb.txt', steps: 2, exitCode: 0 });
  expect(result.sessionId).toMatch(/^rda_[0-9a-f]{32}$/);
  expect(result.usage.total).toBe(30);
  expect(result.toolCalls).toEqual([expect.objectContaining({ name: 'bash', status: 'completed' })]);
  expect((await sbx.commands.run('cat /home/user/rb.txt')).stdout).toBe('from runtime b\n');
  expect(world.upstream.model.requests.every((r) => r.credentials['authorization'] === 'expected')).toBe(
    true,
  );
}

/** A run in a folder root made for the user (issue 25); one that does not exist, or the user may not enter, refused. */
async function worksInAWorkdirAndRefusesOthers(sbx: Sandbox): Promise<void> {
  await sbx.commands.run(
    'mkdir -p /workspace/app && chown -R user:user /workspace && mkdir -p /root/private',
    {
      user: 'root',
    },
  );
  script(toolCall('execute', { command: 'pwd > where.txt' }), text('noted'));
  const result = await sbx.agent.run('note where', {
    spec: world.spec(),
    runtime: 'runtime_b',
    workdir: '/workspace/app',
  });
  expect(result.text).toBe('noted');
  expect((await sbx.commands.run('cat /workspace/app/where.txt')).stdout).toBe('/workspace/app\n');
  for (const workdir of ['/no/such/folder', '/root/private']) {
    const refused = await sbx.agent
      .run('x', { spec: world.spec(), runtime: 'runtime_b', workdir })
      .catch((e: unknown) => e);
    expect({ workdir, refused }).toEqual({
      workdir,
      refused: expect.objectContaining({ code: 'invalid_argument', field: 'workdir' }) as unknown,
    });
  }
}

describe('runtime_b in a closed-egress sandbox', () => {
  it('edits a real file with bash, streams text deltas, reports usage and an rda_ session', () =>
    editsAFileWithBash(sbx));

  it('works in a workdir outside the home that root made (issue 25), and refuses one the user cannot enter', () =>
    worksInAWorkdirAndRefusesOthers(sbx));

  it('continues a session: the next run sends the earlier conversation', async () => {
    script(text('remembered answer'), text('second answer'));
    const first = await sbx.agent.run('remember', { spec: world.spec(), runtime: 'runtime_b' });
    const second = await sbx.agent.run('again', {
      spec: world.spec(),
      runtime: 'runtime_b',
      sessionId: first.sessionId,
    });
    expect(second.sessionId).toBe(first.sessionId);
    expect(JSON.stringify(world.upstream.model.requests.at(-1)?.body)).toContain('remembered answer');
  });

  it('continues a session from another SDK process', async () => {
    script(text('said in process one'), text('continued in process two'));
    const first = await sbx.agent.run('remember', { spec: world.spec(), runtime: 'runtime_b' });
    const env = { ...process.env, SDK_ACCESS_TOKEN: sbx.accessToken, SDK_TEST_RUNTIME: 'runtime_b' };
    const { stdout } = await run(
      process.execPath,
      [CLIENT, world.cp.url, sbx.sandboxId, 'run', first.sessionId],
      {
        env,
        timeout: 60_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ text: 'continued in process two', sessionId: first.sessionId });
    expect(JSON.stringify(world.upstream.model.requests.at(-1)?.body)).toContain('said in process one');
  });

  it('stops at the step limit when the next step starts', async () => {
    world.upstream.model.reset([]);
    for (let i = 0; i < 8; i++) world.upstream.model.enqueue(toolCall('execute', { command: 'true' }));
    const stream = sbx.agent.stream('loop', {
      spec: world.spec(),
      runtime: 'runtime_b',
      limits: new AgentLimits({ maxSteps: 2 }),
    });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events.filter((e) => e.type === 'step_started')).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'agent_failed', reason: 'max_steps' });
  });

  it('aborts on an AbortSignal, and reports a model failure without vendor text', async () => {
    script(toolCall('execute', { command: 'sleep 502' }));
    const controller = new AbortController();
    const stream = sbx.agent.stream('wait', {
      spec: world.spec(),
      runtime: 'runtime_b',
      signal: controller.signal,
    });
    const events = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'step_started') controller.abort();
    }
    expect(events.at(-1)).toEqual({ type: 'agent_failed', reason: 'aborted' });
    expect(await processesNamed('sleep 502')).toBe(0);

    script(errorStatus(401, { message: 'vendor secret detail' }));
    const error = await sbx.agent
      .run('fail', { spec: world.spec(), runtime: 'runtime_b' })
      .catch((e: unknown) => e);
    expect((error as AgentError).reason).toBe('runtime_error');
    expect((error as AgentError).message).not.toContain('vendor secret detail');
  });

  it('answers busy while it runs, and runtime_missing where the template lacks it', async () => {
    script(toolCall('execute', { command: 'sleep 503' }));
    const controller = new AbortController();
    const running = sbx.agent.stream('wait', {
      spec: world.spec(),
      runtime: 'runtime_b',
      signal: controller.signal,
    });
    for await (const event of running) if (event.type === 'step_started') break;
    await expect(sbx.agent.run('me too', { spec: world.spec(), runtime: 'runtime_b' })).rejects.toMatchObject(
      {
        reason: 'busy',
      },
    );
    controller.abort();
    await expect(running.result()).rejects.toMatchObject({ reason: 'aborted' });
    running.close();

    const bare = await world.sandbox('compatible', { template: 'sdk-base-caps' });
    try {
      await expect(bare.agent.run('hi', { spec: world.spec(), runtime: 'runtime_b' })).rejects.toMatchObject({
        reason: 'runtime_missing',
      });
    } finally {
      await bare.kill();
    }
  });

  it('stops at the token budget with compatible (usage streamed)', async () => {
    const usage = { input: 500, output: 100 };
    script(
      toolCall('execute', { command: 'true' }, { usage }),
      toolCall('execute', { command: 'true' }, { usage }),
      toolCall('execute', { command: 'true' }, { usage }),
      text('never', usage),
    );
    const error = await sbx.agent
      .run('spend', {
        spec: world.spec(),
        runtime: 'runtime_b',
        limits: new AgentLimits({ maxTotalTokens: 700 }),
      })
      .catch((e: unknown) => e);
    expect((error as AgentError).reason).toBe('token_budget');
  });

  it('writes /home/user/hello.txt with its file tool, and its bash and the SDK read that very file', async () => {
    script(
      toolCall('write_file', { file_path: '/home/user/hello.txt', content: 'hello from a tool\n' }),
      toolCall('execute', { command: 'cat /home/user/hello.txt' }),
      toolCall('read_file', { file_path: 'hello.txt' }),
      text('done'),
    );
    const result = await sbx.agent.run('write hello', { spec: world.spec(), runtime: 'runtime_b' });
    expect(result.toolCalls.map((call) => [call.name, call.status])).toEqual([
      ['edit', 'completed'],
      ['bash', 'completed'],
      ['read', 'completed'],
    ]);
    expect(result.toolCalls[1]?.output).toContain('hello from a tool');
    expect(result.toolCalls[2]?.output).toContain('hello from a tool');
    expect(await sbx.files.read('/home/user/hello.txt')).toBe('hello from a tool\n');
    expect(await sbx.files.exists('/home/user/home/user/hello.txt')).toBe(false);
  });

  it('reaches its first event in 3 requests on a first run, 2 on a later one, journaling no SDK call', async () => {
    // A configuration this handle has not written yet (its own instructions), then the same again.
    const spec = world.spec('compatible', { instructions: `counted ${String(Date.now())}` });
    const history = async (): Promise<string[]> => {
      const res = await fetch(`${world.cp.url}/v1/sandboxes/${sbx.sandboxId}/history`, {
        headers: { authorization: `Bearer ${sbx.accessToken}` },
      });
      const { entries } = (await res.json()) as { entries: { event: { type: string } }[] };
      return entries.map((entry) => entry.event.type);
    };
    const requestsBeforeFirstEvent = async (): Promise<string[]> => {
      script(text('counted'));
      const seen: string[] = [];
      // The SDK's requests only: those to the control plane (its own hops to sandboxd go elsewhere).
      const count = (message: unknown): void => {
        const { origin, method, path } = (
          message as { request: { origin: string; method: string; path: string } }
        ).request;
        if (new URL(origin).origin === new URL(world.cp.url).origin)
          seen.push(`${method} ${path.split('?')[0] ?? ''}`);
      };
      subscribe('undici:request:create', count);
      let counted: string[] | undefined;
      try {
        const types: string[] = [];
        for await (const event of sbx.agent.stream('count', { spec, runtime: 'runtime_b' })) {
          counted ??= [...seen];
          types.push(event.type);
        }
        expect(types.at(-1)).toBe('done');
      } finally {
        unsubscribe('undici:request:create', count);
      }
      return counted ?? seen;
    };
    const before = (await history()).length;
    const daemon = `/v1/sandboxes/${sbx.sandboxId}/daemon`;
    const first = await requestsBeforeFirstEvent();
    expect(first).toEqual([
      `PUT ${daemon}/v1/agent/config`,
      `POST ${daemon}/v1/agent/executions`,
      expect.stringMatching(new RegExp(`^POST ${daemon}/v1/agent/executions/[^/]+/prompt$`)),
    ]);
    const later = await requestsBeforeFirstEvent();
    expect(later).toEqual([
      `POST ${daemon}/v1/agent/executions`,
      expect.stringMatching(new RegExp(`^POST ${daemon}/v1/agent/executions/[^/]+/prompt$`)),
    ]);
    // What the runs journaled: the idle policy's time and traffic at most, never an SDK call.
    const journaled = (await history()).slice(before);
    expect(journaled.filter((type) => type !== 'clock' && type !== 'traffic')).toEqual([]);
  });

  it('denies bash when the permissions deny it', async () => {
    script(toolCall('execute', { command: 'touch /home/user/rb-denied' }), text('could not'));
    const spec = world.spec('compatible', { permissions: new AgentPermissions({ tools: { bash: 'deny' } }) });
    const result = await sbx.agent.run('try', { spec, runtime: 'runtime_b' });
    expect(result.toolCalls.map((call) => call.status)).toEqual(['error']);
    expect((await sbx.commands.run('test -e /home/user/rb-denied; echo $?')).stdout).toBe('1\n');
  });

  it('builds the graph from an entrypoint; without the middleware the permissions are lost', async () => {
    const entrypoint = (withMiddleware: boolean) => `
import { createDeepAgent } from 'deepagents';
export async function build(context) {
  return createDeepAgent({
    model: context.model,
    systemPrompt: 'ENTRYPOINT PROMPT. ' + context.instructions,
    backend: context.backend,
    subagents: context.subagents,
    middleware: ${withMiddleware ? '[context.permissionMiddleware]' : '[]'},
    checkpointer: context.checkpointer,
  });
}`;
    await sbx.commands.run('mkdir -p /home/user/proj/agent');
    const spec = world.spec('compatible', { permissions: new AgentPermissions({ tools: { bash: 'deny' } }) });
    for (const withMiddleware of [true, false]) {
      await sbx.commands.run(
        `cat > /home/user/proj/agent/graph.mjs <<'EOF'\n${entrypoint(withMiddleware)}\nEOF`,
      );
      await sbx.commands.run('rm -f /home/user/proj/ran.txt');
      script(toolCall('execute', { command: 'echo ran > ran.txt' }), text('done'));
      await sbx.agent.run('run it', {
        spec,
        runtime: new RuntimeB({ entrypoint: 'agent.graph:build' }),
        workdir: '/home/user/proj',
      });
      const system = JSON.stringify(world.upstream.model.requests[0]?.body);
      expect(system).toContain('ENTRYPOINT PROMPT.');
      const ran = (await sbx.commands.run('test -e /home/user/proj/ran.txt; echo $?')).stdout;
      expect(ran).toBe(withMiddleware ? '1\n' : '0\n');
    }
  });

  it('times out through the same execution actor: SIGTERM, 5 s grace, then frozen and killed', async () => {
    await expectTimeoutOnlyOnceTreeIsGone(sbx, (timeoutMs, command) => {
      script(toolCall('execute', { command }));
      return sbx.agent
        .run('hang', { spec: world.spec(), runtime: 'runtime_b', limits: new AgentLimits({ timeoutMs }) })
        .catch((e: unknown) => e);
    });
  }, 240_000);
});

describe('runtime_b: each provider end to end', () => {
  for (const provider of Object.keys(PATHS) as AgentProvider[]) {
    it(`${provider}: reaches its path with only the injected key`, async () => {
      const box = await world.sandbox(provider);
      try {
        script(text(`${provider} via runtime_b`));
        const result = await box.agent.run('hi', { spec: world.spec(provider), runtime: 'runtime_b' });
        expect(result.text).toBe(`${provider} via runtime_b`);
        expect(result.usage.total).toBeGreaterThan(0);
        const requests = world.upstream.model.requests;
        expect(requests.map((r) => r.path)).toEqual([PATHS[provider]]);
        const header = PROVIDER_ROUTES[provider].header;
        for (const r of requests) expect(r.credentials).toEqual({ [header]: 'expected' });
      } finally {
        await box.kill();
      }
    });
  }
});

// The file's other behaviours are the runtime's, not the box's: they run once, with namespaces.
describe('runtime_b in a gVisor box', () => {
  let box: Sandbox | undefined;
  const inBox = (): Sandbox => {
    if (box === undefined) throw new Error('no gVisor sandbox');
    return box;
  };
  beforeAll(async () => {
    box = await world.cp.createSandbox({
      template: 'sdk-agent',
      isolation: 'gvisor',
      gateways: world.gateways(),
      secretCache: world.secretCache,
    });
  }, 120_000);
  afterAll(async () => {
    await box?.kill();
  });

  it('edits a real file with bash, streams text deltas, reports usage and an rda_ session', () =>
    editsAFileWithBash(inBox()));

  it('works in a workdir outside the home that root made, and refuses one the user cannot enter', () =>
    worksInAWorkdirAndRefusesOthers(inBox()));
});
