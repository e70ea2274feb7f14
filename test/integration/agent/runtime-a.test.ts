/**
 * runtime_a end to end (issue 11): real sandboxes of the `sdk-agent` template, real opencode, a real
 * gateway route to the scripted model server over HTTPS. Every test scripts the model's turns; the tool
 * calls it makes run real commands in the sandbox. Execution control is runtime-a-control.test.ts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { firstValueFrom, takeUntil, timer, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { InspectionRecord } from '../../../actors/actor-system.js';
import type { DaemonEvent } from '../../../protocol/daemon-events.js';
import { AgentError } from '../../../rules/errors.js';
import { AgentLimits } from '../../../sdk/agent-limits.js';
import { AgentPermissions } from '../../../sdk/agent-permissions.js';
import { McpLocal, McpRemote } from '../../../sdk/mcp-servers.js';
import { agentPoolWarmup, PoolConfig } from '../../../sdk/pool-config.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { SandboxPool } from '../../../sdk/sandbox-pool.js';
import { SubAgent } from '../../../sdk/sub-agent.js';
import {
  chatToolNames,
  errorStatus,
  text,
  TOOL_THEN_TEXT_EVENTS,
  toolCall,
  type RecordedRequest,
  type ScriptEntry,
} from '../../support/model-server/index.js';
import { AGENT_CLIENT, MODEL_KEY, useAgentWorld, useSharedSandbox } from './agent-world.js';

const world = useAgentWorld(20);
const CLIENT = AGENT_CLIENT;
const run = promisify(execFile);

let sbx: Sandbox;
useSharedSandbox(world, (created) => (sbx = created));

const script = (...turns: ScriptEntry[]) => world.upstream.model.reset(turns);

/** sandboxd's own records so far: what `sbx.events$` hands out in half a second. */
const auditCalls = (): Promise<DaemonEvent[]> =>
  firstValueFrom(sbx.events$.pipe(takeUntil(timer(500)), toArray()));

const agentCalls = (events: readonly DaemonEvent[], afterSeq: number): string[] =>
  events.flatMap((e) =>
    e.seq > afterSeq && e.type === 'call' && e.endpoint.includes('/v1/agent/') ? [e.endpoint] : [],
  );

describe('runtime_a in a closed-egress sandbox', () => {
  it('edits a file through the gateway: result, events in order, the key injected upstream', async () => {
    script(toolCall('bash', { command: 'echo edited > notes.txt', description: 'edit' }), text('edited it'));
    const stream = sbx.agent.stream('edit notes.txt', { spec: world.spec() });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(TOOL_THEN_TEXT_EVENTS);
    const result = await stream.result();
    expect(result).toMatchObject({ text: 'edited it', steps: 2, exitCode: 0, droppedLines: 0 });
    expect(result.sessionId).toMatch(/^ses_/);
    expect(stream.sessionId).toBe(result.sessionId);
    expect(result.usage.total).toBe(30);
    expect(result.toolCalls).toEqual([expect.objectContaining({ name: 'bash', status: 'completed' })]);
    expect((await sbx.commands.run('cat /home/user/notes.txt')).stdout).toBe('edited\n');
    const requests = world.upstream.model.requests;
    expect(requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
    expect(requests.every((r) => r.credentials['authorization'] === 'expected')).toBe(true);
  });

  it("puts every transition of the sandbox's execution actor in the control plane's inspection feed", async () => {
    const seen: InspectionRecord[] = [];
    const subscription = world.cp.plane.inspect$.subscribe((record) => {
      if (record.kind === 'agent_execution' && record.actorId.startsWith(sbx.sandboxId)) seen.push(record);
    });
    try {
      script(text('observed'));
      await sbx.agent.run('be watched', { spec: world.spec() });
      await expect
        .poll(() => seen.map((r) => `${r.event.type}→${r.state}`).filter((t) => !t.startsWith('clock')))
        .toEqual([
          'run→running.active',
          'step_started→running.active',
          'step_finished→running.active',
          'runtime_exited→idle',
        ]);
    } finally {
      subscription.unsubscribe();
    }
  });

  it('prepares the runtime in the background: prepare() returns at once and sandboxd warms it', async () => {
    const before = Math.max(0, ...(await auditCalls()).map((e) => e.seq));
    sbx.agent.prepare({ runtime: 'runtime_a' }); // returns void: the call goes out in the background
    await expect.poll(async () => agentCalls(await auditCalls(), before)).toEqual(['POST /v1/agent/prepare']);
  });

  it('prepare() starts a runtime ahead that the next fitting run adopts; a run it does not fit ends it', async () => {
    script(text('first'), text('adopted'), text('not adopted'));
    const spec = world.spec();
    await sbx.agent.run('write the configuration', { spec });
    const runtimes = async (): Promise<string[]> =>
      (await sbx.commands.run("ps -eo pid,args | grep '[o]pencode run' | awk '{print $1}' || true")).stdout
        .split('\n')
        .filter((line) => line !== '');
    sbx.agent.prepare({ runtime: 'runtime_a' });
    await expect.poll(runtimes, { timeout: 60_000 }).toHaveLength(1);
    const [prepared] = await runtimes();
    const before = Math.max(0, ...(await auditCalls()).map((e) => e.seq));
    expect((await sbx.agent.run('use it', { spec })).text).toBe('adopted');
    const started = (await auditCalls()).filter(
      (e) => e.seq > before && e.type === 'process' && e.event === 'start',
    );
    expect(started.map((e) => (e.type === 'process' ? String(e.pid) : ''))).toEqual([prepared]);

    sbx.agent.prepare({ runtime: 'runtime_a' });
    await expect.poll(runtimes, { timeout: 60_000 }).toHaveLength(1);
    const [unused] = await runtimes();
    const other = await sbx.agent.run('not this one', { spec, reasoning: true });
    expect(other.text).toBe('not adopted');
    expect(await runtimes()).not.toContain(unused);
  });

  it('makes 3 calls to sandboxd for a new configuration and 2 when its hash is unchanged', async () => {
    const before = Math.max(0, ...(await auditCalls()).map((e) => e.seq));
    const spec = world.spec('compatible', { instructions: `Count calls ${String(Date.now())}.` });
    script(text('one'), text('two'));
    await sbx.agent.run('first', { spec });
    const middle = Math.max(0, ...(await auditCalls()).map((e) => e.seq));
    await sbx.agent.run('second', { spec });
    const events = await auditCalls();
    expect(agentCalls(events, before)).toEqual([
      'PUT /v1/agent/config',
      'POST /v1/agent/executions',
      'POST /v1/agent/executions/:id/prompt',
      'POST /v1/agent/executions',
      'POST /v1/agent/executions/:id/prompt',
    ]);
    expect(agentCalls(events, middle)).toHaveLength(2);
  });

  it('never lets the agent read the key: its environment, config files and logs hold none of it', async () => {
    script(
      toolCall('bash', {
        command:
          '{ env; cat /proc/self/environ; ls -la /run/agent; cat /run/agent/* /run/agent-config-home/opencode/*; cat ~/.local/share/opencode/log/*; ps -eo args; } > /tmp/seen.txt 2>&1; echo saw',
        description: 'look around',
      }),
      text('looked'),
    );
    const result = await sbx.agent.run('print your environment', { spec: world.spec() });
    expect(JSON.stringify(result)).not.toContain(MODEL_KEY);
    const seen = await sbx.commands.run('cat /tmp/seen.txt');
    expect(seen.stdout).toContain('OPENCODE_CONFIG_CONTENT');
    expect(seen.stdout).not.toContain(MODEL_KEY);
    // Nowhere in reach of sandbox code either (the pattern travels base64-encoded, never on a command line).
    const pattern = Buffer.from(MODEL_KEY.slice(0, 20)).toString('base64');
    const search = await sbx.commands.run(
      `echo ${pattern} | base64 -d > /tmp/.p; { cat /proc/[0-9]*/environ; cat /proc/[0-9]*/cmdline; } 2>/dev/null | grep -a -c -F -f /tmp/.p; grep -rs -l -F -f /tmp/.p /home /tmp /run --exclude=.p; echo end`,
    );
    expect(search.stdout).toBe('0\nend\n');
  });

  it('continues a session from an earlier result', async () => {
    script(text('the first answer'), text('the second answer'));
    const spec = world.spec();
    const first = await sbx.agent.run('remember this', { spec });
    const second = await sbx.agent.run('and now?', { spec, sessionId: first.sessionId });
    expect(second.sessionId).toBe(first.sessionId);
    const last = world.upstream.model.requests.at(-1);
    expect(JSON.stringify(last?.body)).toContain('the first answer');
  });

  it('continues a session from another SDK process', async () => {
    script(text('said here'), text('continued elsewhere'));
    const first = await sbx.agent.run('remember this', { spec: world.spec() });
    const env = { ...process.env, SDK_ACCESS_TOKEN: sbx.accessToken };
    const { stdout } = await run(
      process.execPath,
      [CLIENT, world.cp.url, sbx.sandboxId, 'run', first.sessionId],
      {
        env,
        timeout: 60_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ text: 'continued elsewhere', sessionId: first.sessionId });
    expect(JSON.stringify(world.upstream.model.requests.at(-1)?.body)).toContain('said here');
  });

  it('denies a tool the permissions deny: the call fails and changes nothing', async () => {
    script(toolCall('bash', { command: 'touch /home/user/denied', description: 'try' }), text('could not'));
    const spec = world.spec('compatible', {
      permissions: new AgentPermissions({ tools: { bash: 'deny' } }),
    });
    const result = await sbx.agent.run('try it', { spec });
    // opencode no longer offers a denied tool: the model's call to it goes to opencode's `invalid` tool.
    expect(result.toolCalls.map((call) => call.name)).toEqual(['invalid']);
    expect(chatToolNames(world.upstream.model.requests[0])).not.toContain('bash');
    expect((await sbx.commands.run('test -e /home/user/denied; echo $?')).stdout).toBe('1\n');
  });

  it('delegates to a subagent with its own instructions', async () => {
    const pick = (request: RecordedRequest) =>
      JSON.stringify(request.body).includes('You review patches.')
        ? text('looks fine')
        : text('all reviewed');
    script(
      toolCall('task', { description: 'review', prompt: 'review the patch', subagent_type: 'reviewer' }),
      pick,
      pick,
    );
    const spec = world.spec('compatible', {
      agents: {
        reviewer: new SubAgent({ description: 'Reviews patches', instructions: 'You review patches.' }),
      },
    });
    const result = await sbx.agent.run('get a review', { spec });
    expect(result.toolCalls).toEqual([expect.objectContaining({ name: 'task', status: 'completed' })]);
    expect(result.text).toBe('all reviewed');
    expect(
      world.upstream.model.requests.some((r) => JSON.stringify(r.body).includes('You review patches.')),
    ).toBe(true);
  });

  it('runs a local MCP server as a child process and calls its tool', async () => {
    const server = `
const rl = require('readline').createInterface({ input: process.stdin });
const send = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
rl.on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send(m.id, { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'shout', version: '1.0.0' } });
  else if (m.method === 'tools/list') send(m.id, { tools: [{ name: 'shout', description: 'Upper-cases text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }] });
  else if (m.method === 'tools/call') send(m.id, { content: [{ type: 'text', text: String(m.params.arguments.text).toUpperCase() + process.env.SHOUT_SUFFIX }] });
  else if (m.id !== undefined) send(m.id, {});
});`;
    await sbx.commands.run(`cat > /home/user/shout.cjs <<'EOF'\n${server}\nEOF`);
    script(toolCall('loud_shout', { text: 'quiet please' }), text('shouted'));
    const spec = world.spec('compatible', {
      mcp: { loud: new McpLocal({ command: ['node', '/home/user/shout.cjs'], envs: { SHOUT_SUFFIX: '!' } }) },
    });
    const result = await sbx.agent.run('shout', { spec });
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        name: 'loud_shout',
        status: 'completed',
        output: expect.stringContaining('QUIET PLEASE!') as unknown,
      }),
    ]);
  });

  it('reaches a remote MCP server only through its gateway, which injects its key', async () => {
    script(toolCall('remote_lookup', { query: 'gateway' }), text('looked it up'));
    const spec = world.spec('compatible', {
      mcp: { remote: new McpRemote({ gateway: 'tools', path: '/mcp' }) },
    });
    const result = await sbx.agent.run('look it up', { spec });
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        name: 'remote_lookup',
        status: 'completed',
        output: expect.stringContaining('found: gateway') as unknown,
      }),
    ]);
    const methods = world.mcp.calls.map((call) => call.method);
    expect(methods).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
    expect(world.mcp.calls.every((call) => call.credential === 'expected')).toBe(true);
  });

  it('runs another model of the same provider when the call names one', async () => {
    script(text('from model two'));
    const result = await sbx.agent.run('hi', { spec: world.spec(), model: 'model-2' });
    expect(result.text).toBe('from model two');
    expect((world.upstream.model.requests[0]?.body as { model?: string }).model).toBe('model-2');
  });

  it('merges rawConfig into the configuration the runtime reads', async () => {
    script(
      toolCall('bash', {
        command: 'printf %s "$OPENCODE_CONFIG_CONTENT" > /tmp/config.json',
        description: 'read',
      }),
      text('read it'),
    );
    const spec = world.spec('compatible', { rawConfig: { username: 'raw-config-user' } });
    await sbx.agent.run('read your configuration', { spec });
    const config = JSON.parse((await sbx.commands.run('cat /tmp/config.json')).stdout) as Record<
      string,
      unknown
    >;
    expect(config['username']).toBe('raw-config-user');
    expect(config['enabled_providers']).toEqual(['gateway']);
    expect(chatToolNames(world.upstream.model.requests[0])).toContain('bash');
  });

  it('keeps at most maxOutputBytes: a live loop still sees every event, the run goes on, the rest is counted', async () => {
    script(toolCall('bash', { command: 'seq 1 500', description: 'count' }), text('counted'));
    const stream = sbx.agent.stream('count', {
      spec: world.spec(),
      limits: new AgentLimits({ maxOutputBytes: 64 }),
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(TOOL_THEN_TEXT_EVENTS);
    const result = await stream.result();
    expect(result.droppedLines).toBeGreaterThan(0);
    expect(result.steps).toBe(2);
  });

  it('reports a model failure as agent_failed, never the vendor text', async () => {
    script(errorStatus(401, { message: 'vendor secret detail' }));
    const error = await sbx.agent.run('fail', { spec: world.spec() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).reason).toBe('runtime_error');
    expect((error as AgentError).message).not.toContain('vendor secret detail');
  });
});

describe('an agent pool', () => {
  it('warms each slot before handing it out, and its agent runs through the gateways opened at take', async () => {
    const pool = new SandboxPool(
      new PoolConfig({
        size: 1,
        template: 'sdk-agent',
        allowInternetAccess: false,
        warmup: agentPoolWarmup('runtime_a'),
      }),
      { controlPlaneUrl: world.cp.url },
    );
    try {
      await expect.poll(() => pool.ready, { timeout: 60_000, interval: 100 }).toBe(1);
      const pooled = await pool.take({ gateways: world.gateways(), secretCache: world.secretCache });
      try {
        const seen = await firstValueFrom(pooled.events$.pipe(takeUntil(timer(500)), toArray()));
        const calls = seen.flatMap((event) => (event.type === 'call' ? [event.endpoint] : []));
        // The warm-up came before the gateways were opened: the slot was warm when taken.
        expect(calls.indexOf('POST /v1/agent/prepare')).toBeGreaterThanOrEqual(0);
        expect(calls.indexOf('POST /v1/agent/prepare')).toBeLessThan(calls.indexOf('POST /v1/gateways'));
        script(text('pooled and warm'));
        expect((await pooled.agent.run('hello', { spec: world.spec() })).text).toBe('pooled and warm');
      } finally {
        await pooled.kill();
      }
    } finally {
      await pool.close();
    }
  });
});

describe('without the runtime', () => {
  it('ends with runtime_missing in a sandbox whose template lacks it', async () => {
    const bare = await world.sandbox('compatible', { template: 'sdk-base-caps' });
    try {
      const events = [];
      for await (const event of bare.agent.stream('hi', { spec: world.spec() })) events.push(event);
      expect(events).toEqual([{ type: 'agent_failed', reason: 'runtime_missing' }]);
      await expect(bare.agent.run('hi', { spec: world.spec() })).rejects.toMatchObject({
        reason: 'runtime_missing',
      });
    } finally {
      await bare.kill();
    }
  });
});
