import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AgentModel,
  AgentSpec,
  InvalidArgumentError,
  vendorBGateway,
  type AgentEvent,
  type Sandbox,
} from '../../../sdk/index.js';
import { FakeSandboxd, SUMMARY, connectedHandle, createdHandle, holdScript } from './agent-fake-sandboxd.js';

const spec = new AgentSpec({
  model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }),
});

let fake: FakeSandboxd;
let sbx: Sandbox;
beforeEach(async () => {
  fake = await FakeSandboxd.start();
  sbx = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
});
afterEach(() => fake.close());

async function all(stream: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('another process attaches', () => {
  it('lists executions, attaches to the running one from the start, and aborts it', async () => {
    fake.onPrompt = holdScript;
    const stream = sbx.agent.stream('wait', { spec });
    await expect.poll(() => fake.current()).not.toBeNull();
    const other = await connectedHandle(fake);
    const list = await other.agent.executions();
    expect(list.current).toBe(fake.last().id);
    expect(list.executions.map((e) => e.state)).toEqual(['running']);
    expect(Object.isFrozen(list.executions[0])).toBe(true);

    const attached = await other.agent.attach();
    expect(attached.executionId).toBe(fake.last().id);
    const seen: AgentEvent[] = [];
    for await (const event of attached) {
      seen.push(event);
      if (event.type === 'step_started') await attached.abort();
    }
    expect(seen).toEqual([{ type: 'step_started' }, { type: 'agent_failed', reason: 'aborted' }]);
    expect(attached.sessionId).toBe(SUMMARY.sessionId);
    expect(fake.agentCalls()).toContain(`GET /v1/agent/executions/${fake.last().id}/events?after=0`);
    expect(fake.agentCalls()).toContain(`POST /v1/agent/executions/${fake.last().id}/abort`);
    // The first stream sees the same end.
    expect(await all(stream)).toEqual(seen);
  });

  it('resumes after a cursor', async () => {
    const stream = sbx.agent.stream('go', { spec });
    const first: [AgentEvent, number][] = [];
    for await (const event of stream) first.push([event, stream.cursor]);
    const cursor = first[1]?.[1] ?? 0;
    expect(cursor).toBe(3);
    const again = await sbx.agent.attach(stream.executionId, { after: cursor });
    expect(again.cursor).toBe(cursor);
    expect(await all(again)).toEqual(first.slice(2).map(([event]) => event));
    expect(again.cursor).toBe(stream.cursor);
    expect(await again.result()).toEqual(SUMMARY);
    expect(fake.agentCalls().at(-1)).toBe(
      `GET /v1/agent/executions/${String(stream.executionId)}/events?after=${String(cursor)}`,
    );
  });

  it('is refused with InvalidArgumentError when nothing runs or the id is unknown', async () => {
    await expect(sbx.agent.attach()).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      field: 'executionId',
    });
    await sbx.agent.run('go', { spec });
    await expect(sbx.agent.attach()).rejects.toMatchObject({ field: 'executionId' });
    await expect(sbx.agent.attach('exe_99')).rejects.toMatchObject({ field: 'executionId' });
    await expect(sbx.agent.attach('../x')).rejects.toMatchObject({ field: 'executionId' });
    await expect(sbx.agent.attach(fake.last().id, { after: -1 })).rejects.toMatchObject({ field: 'after' });
    expect(await all(await sbx.agent.attach(fake.last().id))).toHaveLength(5);
  });
});
