/**
 * runtime_a's execution control (issue 11, SPEC "Agent execution on one sandbox"): step limit, token
 * budget, busy across processes, attaching and reading from a cursor, a timeout whose caller died; real
 * sandboxes, real opencode, the scripted model over HTTPS. Which processes a timeout or an abort ends,
 * against both isolations: `runtime-a-trees.test.ts`.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { AgentError } from '../../../rules/errors.js';
import { AgentLimits } from '../../../sdk/agent-limits.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { text, TOOL_THEN_TEXT_EVENTS, toolCall, type ScriptEntry } from '../../support/model-server/index.js';
import {
  AGENT_CLIENT,
  processesNamed as processesInSandbox,
  useAgentWorld,
  useSharedSandbox,
  withDeadlineAfter,
} from './agent-world.js';

const world = useAgentWorld(24);
const CLIENT = AGENT_CLIENT;
const run = promisify(execFile);

let sbx: Sandbox;
useSharedSandbox(world, (created) => (sbx = created));

const script = (...turns: ScriptEntry[]) => world.upstream.model.reset(turns);

const processesNamed = (needle: string): Promise<number> => processesInSandbox(sbx, needle);

describe('runtime_a execution control', () => {
  it('stops at the step limit when the next step starts', async () => {
    world.upstream.model.reset([toolCall('bash', { command: 'true', description: 'again' })]);
    const loop = world.upstream.model;
    for (let i = 0; i < 10; i++) loop.enqueue(toolCall('bash', { command: 'true', description: 'again' }));
    const stream = sbx.agent.stream('loop', {
      spec: world.spec(),
      limits: new AgentLimits({ maxSteps: 2 }),
    });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events.filter((e) => e.type === 'step_started')).toHaveLength(2);
    expect(events.at(-1)).toEqual({ type: 'agent_failed', reason: 'max_steps' });
  });

  it('stops once the token budget is exceeded after a step', async () => {
    const usage = { input: 500, output: 100 };
    script(
      toolCall('bash', { command: 'true', description: 'a' }, { usage }),
      toolCall('bash', { command: 'true', description: 'b' }, { usage }),
      toolCall('bash', { command: 'true', description: 'c' }, { usage }),
      text('never', usage),
    );
    const error = await sbx.agent
      .run('spend', { spec: world.spec(), limits: new AgentLimits({ maxTotalTokens: 700 }) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).reason).toBe('token_budget');
  });

  it('answers busy to another SDK process, which can attach and abort the running execution', async () => {
    script(toolCall('bash', { command: 'sleep 304', description: 'wait' }));
    const stream = sbx.agent.stream('wait here', { spec: world.spec() });
    const env = { ...process.env, SDK_ACCESS_TOKEN: sbx.accessToken };
    const other = (mode: string) =>
      run(process.execPath, [CLIENT, world.cp.url, sbx.sandboxId, mode], { env, timeout: 60_000 });
    await expect.poll(() => processesNamed('sleep 304'), { timeout: 60_000 }).toBeGreaterThan(0);
    const busy = await other('run');
    expect(JSON.parse(busy.stdout)).toEqual({ reason: 'busy', name: 'AgentError' });
    const attached = await other('attach-abort');
    const lines = attached.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(lines[0]).toEqual({ event: 'step_started' });
    expect(lines.slice(-2)).toEqual([{ event: 'agent_failed', reason: 'aborted' }, { done: true }]);
    const events = [];
    for await (const event of stream) events.push(event.type);
    expect(events.at(-1)).toBe('agent_failed');
    expect((await stream.result().catch((e: unknown) => e)) as AgentError).toMatchObject({
      reason: 'aborted',
    });
  });

  it('streams the running execution as sbx.agent.events$ to another handle, from its start', async () => {
    script(toolCall('bash', { command: 'sleep 3', description: 'wait' }), text('watched'));
    const stream = sbx.agent.stream('be watched', { spec: world.spec() });
    const other = await Sandbox.connect(sbx.sandboxId, {
      accessToken: sbx.accessToken,
      controlPlaneUrl: world.cp.url,
    });
    const first = await stream[Symbol.asyncIterator]().next(); // the execution runs
    expect(first.value).toEqual({ type: 'step_started' });
    const seen = await firstValueFrom(other.agent.events$.pipe(toArray()));
    expect(seen.map((r) => r.event.type)).toEqual(TOOL_THEN_TEXT_EVENTS);
    expect(new Set(seen.map((r) => r.executionId))).toEqual(new Set([stream.executionId]));
    const cursors = seen.map((r) => r.cursor);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    await stream.result();
    stream.close();
    await expect(firstValueFrom(other.agent.events$)).rejects.toMatchObject({ field: 'executionId' });
  });

  it('reads the same execution again from a cursor', async () => {
    script(toolCall('bash', { command: 'echo a', description: 'a' }), text('done here'));
    const stream = sbx.agent.stream('go', { spec: world.spec() });
    const first = [];
    for await (const event of stream) first.push(event.type);
    const again = await sbx.agent.attach(stream.executionId, { after: 2 });
    const rest = [];
    for await (const event of again) rest.push(event.type);
    expect(rest).toEqual(first.slice(rest.length === first.length ? 0 : first.length - rest.length));
    expect(rest.at(-1)).toBe('done');
    expect(rest.length).toBeLessThan(first.length);
  });

  it('times out even when the calling process died', async () => {
    await withDeadlineAfter('the caller died', async (timeoutMs) => {
      script(toolCall('bash', { command: 'sleep 305', description: 'wait' }));
      const env = { ...process.env, SDK_ACCESS_TOKEN: sbx.accessToken };
      const started = Date.now();
      const child = spawn(
        process.execPath,
        [CLIENT, world.cp.url, sbx.sandboxId, 'start-and-hang', String(timeoutMs)],
        { env, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const { executionId } = JSON.parse(line.toString()) as { executionId: string };
      child.kill('SIGKILL');
      await once(child, 'exit');
      const diedBeforeDeadline = Date.now() - started < timeoutMs;
      await expect
        .poll(
          async () =>
            (await sbx.agent.executions()).executions.find((e) => e.executionId === executionId)?.outcome,
          { timeout: timeoutMs + 30_000, interval: 500 },
        )
        .toEqual({ type: 'agent_failed', reason: 'timeout' });
      expect(await processesNamed('sleep 305')).toBe(0);
      return diedBeforeDeadline;
    });
  }, 240_000);
});
