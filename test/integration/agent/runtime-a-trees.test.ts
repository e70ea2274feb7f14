/**
 * Which processes an agent execution's end reaches (issue 11, SPEC "Agent execution on one sandbox"): a
 * timeout's SIGTERM, its grace, then the tree frozen and killed; an abort without grace; only the
 * execution's tree, never the sandbox's other commands; and nothing at a normal end. Run against both
 * isolations (vitest.config.ts `BOTH_ISOLATIONS`): in a gVisor box the tree is found in gVisor's own
 * process space, without a cgroup. Real sandboxes, real opencode, the scripted model over HTTPS.
 */
import { describe, expect, it } from 'vitest';
import { AgentLimits } from '../../../sdk/agent-limits.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { text, toolCall, type ScriptEntry } from '../../support/model-server/index.js';
import {
  expectTimeoutOnlyOnceTreeIsGone,
  processesNamed as processesInSandbox,
  useAgentWorld,
  useSharedSandbox,
} from './agent-world.js';

const world = useAgentWorld(25);

let sbx: Sandbox;
useSharedSandbox(world, (created) => (sbx = created));

const script = (...turns: ScriptEntry[]) => world.upstream.model.reset(turns);

const processesNamed = (needle: string): Promise<number> => processesInSandbox(sbx, needle);

/** Where the stubborn tool of the abort test notes a SIGTERM. */
const TERM_402 = '/home/user/.sigterm-402';

describe('the processes an agent execution ends', () => {
  it('ends with timeout only once a tree that ignores SIGTERM is gone (5 s grace, then frozen and killed)', async () => {
    await expectTimeoutOnlyOnceTreeIsGone(sbx, (timeoutMs, command) => {
      script(toolCall('bash', { command, description: 'stubborn' }));
      return sbx.agent
        .run('hang', { spec: world.spec(), limits: new AgentLimits({ timeoutMs }) })
        .catch((e: unknown) => e);
    });
  }, 240_000);

  it('aborts mid-tool on an AbortSignal: frozen and killed without grace', async () => {
    script(toolCall('bash', { command: 'sleep 303', description: 'wait' }));
    const controller = new AbortController();
    const stream = sbx.agent.stream('wait', { spec: world.spec(), signal: controller.signal });
    const events = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'step_started') {
        await expect.poll(() => processesNamed('sleep 303'), { timeout: 60_000 }).toBeGreaterThan(0);
        controller.abort();
      }
    }
    expect(events.at(-1)).toEqual({ type: 'agent_failed', reason: 'aborted' });
    expect(await processesNamed('sleep 303')).toBe(0);
  });

  it('leaves running what the agent started once it ends normally; the next run is not busy', async () => {
    script(
      toolCall('bash', { command: 'setsid sleep 400 > /dev/null 2>&1 < /dev/null &', description: 'start' }),
      text('left it running'),
      text('next one'),
    );
    expect((await sbx.agent.run('start a server', { spec: world.spec() })).text).toBe('left it running');
    expect(await processesNamed('sleep 400')).toBe(1);
    expect((await sbx.agent.run('and now', { spec: world.spec() })).text).toBe('next one');
    expect(await processesNamed('sleep 400')).toBe(1);
    await sbx.commands.run("pkill -f 'sleep 400' || true");
  });

  it("aborts without grace and signals only the execution's tree, never the sandbox's other commands", async () => {
    await sbx.commands.run(`nohup sleep 401 > /dev/null 2>&1 < /dev/null & rm -f ${TERM_402}`);
    // A tree that ignores SIGTERM (`sleep 402`), with a Node process that notes SIGTERM should it come.
    const stubborn =
      `trap '' TERM; sleep 402 & exec node -e ` +
      `'process.on("SIGTERM",()=>require("fs").writeFileSync("${TERM_402}",""));setInterval(()=>{},1e9)'`;
    script(toolCall('bash', { command: stubborn, description: 'stubborn' }));
    const stream = sbx.agent.stream('be stubborn', { spec: world.spec() });
    const events = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'step_started') {
        await expect.poll(() => processesNamed('sleep 402'), { timeout: 60_000 }).toBeGreaterThan(0);
        await expect.poll(() => processesNamed(TERM_402), { timeout: 60_000 }).toBeGreaterThan(0);
        await stream.abort();
      }
    }
    expect(events.at(-1)).toEqual({ type: 'agent_failed', reason: 'aborted' });
    expect(await processesNamed('sleep 402')).toBe(0);
    // Without grace: the tree was frozen and killed, never sent the SIGTERM a timeout's grace starts with.
    expect((await sbx.commands.run(`test -e ${TERM_402} && echo sent || echo none`)).stdout).toBe('none\n');
    expect(await processesNamed('sleep 401')).toBe(1);
    await sbx.commands.run("pkill -f 'sleep 401' || true");
  });
});
