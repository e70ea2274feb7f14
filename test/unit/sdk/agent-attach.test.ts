import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, type AgentEvent } from '../../../sdk/index.js';
import {
  SUMMARY,
  VENDOR_B_SPEC,
  allEvents,
  connectedHandle,
  holdScript,
  useFakeSandboxd,
} from './agent-fake-sandboxd.js';

const spec = VENDOR_B_SPEC;
const all = allEvents;
const world = useFakeSandboxd();

describe('another process attaches', () => {
  it('lists executions, attaches to the running one from the start, and aborts it', async () => {
    world.fake.onPrompt = holdScript;
    const stream = world.sbx.agent.stream('wait', { spec });
    await expect.poll(() => world.fake.current()).not.toBeNull();
    const other = await connectedHandle(world.fake);
    const list = await other.agent.executions();
    expect(list.current).toBe(world.fake.last().id);
    expect(list.executions.map((e) => e.state)).toEqual(['running']);
    expect(Object.isFrozen(list.executions[0])).toBe(true);

    const attached = await other.agent.attach();
    expect(attached.executionId).toBe(world.fake.last().id);
    const seen: AgentEvent[] = [];
    for await (const event of attached) {
      seen.push(event);
      if (event.type === 'step_started') await attached.abort();
    }
    expect(seen).toEqual([{ type: 'step_started' }, { type: 'agent_failed', reason: 'aborted' }]);
    expect(attached.sessionId).toBe(SUMMARY.sessionId);
    expect(world.fake.agentCalls()).toContain(
      `GET /v1/agent/executions/${world.fake.last().id}/events?after=0`,
    );
    expect(world.fake.agentCalls()).toContain(`POST /v1/agent/executions/${world.fake.last().id}/abort`);
    // The first stream sees the same end.
    expect(await all(stream)).toEqual(seen);
  });

  it('resumes after a cursor', async () => {
    const stream = world.sbx.agent.stream('go', { spec });
    const first: [AgentEvent, number][] = [];
    for await (const event of stream) first.push([event, stream.cursor]);
    const cursor = first[1]?.[1] ?? 0;
    expect(cursor).toBe(3);
    const again = await world.sbx.agent.attach(stream.executionId, { after: cursor });
    expect(again.cursor).toBe(cursor);
    expect(await all(again)).toEqual(first.slice(2).map(([event]) => event));
    expect(again.cursor).toBe(stream.cursor);
    expect(await again.result()).toEqual(SUMMARY);
    expect(world.fake.agentCalls().at(-1)).toBe(
      `GET /v1/agent/executions/${String(stream.executionId)}/events?after=${String(cursor)}`,
    );
  });

  it('is refused with InvalidArgumentError when nothing runs or the id is unknown', async () => {
    await expect(world.sbx.agent.attach()).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      field: 'executionId',
    });
    await world.sbx.agent.run('go', { spec });
    await expect(world.sbx.agent.attach()).rejects.toMatchObject({ field: 'executionId' });
    await expect(world.sbx.agent.attach('exe_99')).rejects.toMatchObject({ field: 'executionId' });
    await expect(world.sbx.agent.attach('../x')).rejects.toMatchObject({ field: 'executionId' });
    await expect(world.sbx.agent.attach(world.fake.last().id, { after: -1 })).rejects.toMatchObject({
      field: 'after',
    });
    expect(await all(await world.sbx.agent.attach(world.fake.last().id))).toHaveLength(5);
  });
});
