import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { AgentError, AgentLimits, AgentStream, SandboxError, type AgentEvent } from '../../../sdk/index.js';
import {
  SUMMARY,
  VENDOR_B_SPEC,
  allEvents,
  completeScript,
  holdScript,
  useFakeSandboxd,
} from './agent-fake-sandboxd.js';

const spec = VENDOR_B_SPEC;
const all = allEvents;
const world = useFakeSandboxd();

const COMPLETE: AgentEvent[] = [
  { type: 'step_started' },
  { type: 'tool_call', name: 'bash', status: 'completed', input: { command: 'ls' }, output: 'a\n' },
  { type: 'text', text: 'all done' },
  { type: 'step_finished', usage: SUMMARY.usage },
  { type: 'done' },
];

describe('world.sbx.agent.stream', () => {
  it('yields the events in order, then result(); session id, execution id and cursor follow', async () => {
    const stream = world.sbx.agent.stream('go', { spec });
    expect(stream).toBeInstanceOf(AgentStream);
    expect(stream.sessionId).toBeUndefined();
    const seen: [string, string | undefined, number][] = [];
    for await (const event of stream) seen.push([event.type, stream.sessionId, stream.cursor]);
    expect(seen).toEqual([
      ['step_started', 'ses_fake1', 2],
      ['tool_call', 'ses_fake1', 3],
      ['text', 'ses_fake1', 4],
      ['step_finished', 'ses_fake1', 5],
      ['done', 'ses_fake1', 6],
    ]);
    expect(stream.executionId).toBe(world.fake.last().id);
    expect(await stream.result()).toEqual(SUMMARY);
    expect(stream.droppedLines).toBe(0);
  });

  it('skips keepalives', async () => {
    world.fake.onPrompt = (execution) => {
      execution.push({ keepalive: true });
      completeScript(execution);
    };
    expect(await all(world.sbx.agent.stream('go', { spec }))).toEqual(COMPLETE);
  });

  it('reads once for iteration and events$ together; a late observer gets every event from the start', async () => {
    const stream = world.sbx.agent.stream('go', { spec });
    const observed = lastValueFrom(stream.events$.pipe(toArray()));
    const iterated = await all(stream);
    expect(await observed).toEqual(COMPLETE);
    expect(iterated).toEqual(COMPLETE);
    expect(await lastValueFrom(stream.events$.pipe(toArray()))).toEqual(COMPLETE);
    const reads = world.fake
      .agentCalls()
      .filter((call) => call.endsWith('/prompt') || call.includes('/events'));
    expect(reads).toHaveLength(1);
    expect(Object.isFrozen(iterated[1]) && Object.isFrozen((iterated[1] as { input: object }).input)).toBe(
      true,
    );
  });

  it('abort() sends the abort call; the stream ends with agent_failed aborted and result() rejects', async () => {
    world.fake.onPrompt = holdScript;
    const stream = world.sbx.agent.stream('wait', { spec });
    const events: AgentEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'step_started') await stream.abort();
    }
    expect(events).toEqual([{ type: 'step_started' }, { type: 'agent_failed', reason: 'aborted' }]);
    expect(world.fake.agentCalls().at(-1)).toBe(`POST /v1/agent/executions/${world.fake.last().id}/abort`);
    const error = await stream.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toMatchObject({ reason: 'aborted' });
    expect(stream.sessionId).toBe('ses_fake1'); // from the summary
    await stream.abort(); // after the end: nothing
    expect(world.fake.agentCalls().filter((call) => call.endsWith('/abort'))).toHaveLength(1);
  });

  it('an AbortSignal aborts the execution', async () => {
    world.fake.onPrompt = holdScript;
    const controller = new AbortController();
    const stream = world.sbx.agent.stream('wait', { spec, signal: controller.signal });
    for await (const event of stream) if (event.type === 'step_started') controller.abort();
    await expect(stream.result()).rejects.toMatchObject({ reason: 'aborted' });
    expect(world.fake.last().aborted).toBe(true);
  });

  it('an already-aborted signal makes no call: agent_failed aborted at once', async () => {
    const seen = world.fake.requests.length;
    const signal = AbortSignal.abort();
    expect(await all(world.sbx.agent.stream('go', { spec, signal }))).toEqual([
      { type: 'agent_failed', reason: 'aborted' },
    ]);
    await expect(world.sbx.agent.run('go', { spec, signal })).rejects.toMatchObject({ reason: 'aborted' });
    expect(world.fake.requests.length).toBe(seen);
  });

  it('abort() before the execution started: nothing is started', async () => {
    const stream = world.sbx.agent.stream('go', { spec });
    const aborting = stream.abort();
    expect(await all(stream)).toEqual([{ type: 'agent_failed', reason: 'aborted' }]);
    await aborting;
    expect(world.fake.agentCalls()).toEqual(['PUT /v1/agent/config']);
    expect(world.fake.executions.size).toBe(0);
  });

  it('a stream that ends without a last event is a SandboxError, not a made-up event', async () => {
    world.fake.onPrompt = (execution) => {
      execution.event({ type: 'step_started' });
      execution.end();
    };
    const stream = world.sbx.agent.stream('go', { spec });
    const observed = lastValueFrom(stream.events$.pipe(toArray())).catch((e: unknown) => e);
    const events: AgentEvent[] = [];
    const error = await (async () => {
      for await (const event of stream) events.push(event);
    })().catch((e: unknown) => e);
    expect(events).toEqual([{ type: 'step_started' }]);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).message).toMatch(/ended before its last event/);
    expect(await observed).toBe(error);
    await expect(stream.result()).rejects.toBe(error);
  });

  it('a malformed line is a SandboxError', async () => {
    world.fake.onPrompt = (execution) => {
      execution.raw('{"seq":1,"event":{"type":"nonsense"}}');
      execution.end();
    };
    await expect(world.sbx.agent.run('go', { spec })).rejects.toMatchObject({
      constructor: SandboxError,
      message: expect.stringMatching(/malformed line/) as unknown,
    });
    world.fake.onPrompt = (execution) => {
      execution.raw('not json');
      execution.end();
    };
    await expect(world.sbx.agent.run('go', { spec })).rejects.toBeInstanceOf(SandboxError);
  });

  it('maxOutputBytes caps what is kept, stops nothing, and counts the rest as dropped', async () => {
    const texts = Array.from({ length: 10 }, (_, i) => ({
      type: 'text' as const,
      text: `line ${String(i)} ${'x'.repeat(20)}`,
    }));
    const bigCalls = Array.from({ length: 4 }, () => ({ ...SUMMARY.toolCalls[0], output: 'y'.repeat(40) }));
    world.fake.onPrompt = (execution) => {
      for (const text of texts) execution.event(text);
      execution.event({ type: 'done' }, { ...SUMMARY, toolCalls: bigCalls as never, droppedLines: 2 });
    };
    const size = (value: object) => Buffer.byteLength(JSON.stringify(value));
    const cap = 2 * size(texts[0] as object) + 1; // two text events fit
    const limits = new AgentLimits({ maxOutputBytes: cap });
    const stream = world.sbx.agent.stream('go', { spec, limits });
    const live = await all(stream); // a reader that keeps up sees every event
    expect(live).toEqual([...texts, { type: 'done' }]);
    const replayed = await lastValueFrom(stream.events$.pipe(toArray()));
    expect(replayed).toEqual([texts[0], texts[1], { type: 'done' }]);
    expect(stream.droppedLines).toBe(8 + 2);
    const result = await stream.result();
    expect(result.droppedLines).toBe(8 + 2);
    expect(result.toolCalls.length).toBe(Math.floor((cap - 'all done'.length) / size(bigCalls[0] as object)));
    expect(result.toolCalls.length).toBeLessThan(bigCalls.length);
    const run = await world.sbx.agent.run('go', { spec, limits: new AgentLimits({ maxOutputBytes: 3 }) });
    expect(run.text).toBe('all');
    expect(run.toolCalls).toEqual([]);
  });

  it('close() stops reading without aborting: iteration ends, result() says so', async () => {
    world.fake.onPrompt = holdScript;
    const stream = world.sbx.agent.stream('wait', { spec });
    const events: AgentEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      stream.close();
    }
    expect(events).toEqual([{ type: 'step_started' }]);
    await expect(stream.result()).rejects.toMatchObject({
      message: expect.stringMatching(/closed/) as unknown,
    });
    await expect.poll(() => world.fake.last().readers).toBe(0);
    expect(world.fake.last().aborted).toBe(false);
    expect(world.fake.agentCalls().some((call) => call.endsWith('/abort'))).toBe(false);
    await stream.abort(); // the execution still runs: abort still reaches it
    expect(world.fake.last().aborted).toBe(true);
  });

  it('Symbol.asyncDispose closes', async () => {
    world.fake.onPrompt = holdScript;
    const stream = world.sbx.agent.stream('wait', { spec });
    const first = await stream[Symbol.asyncIterator]().next();
    expect(first.value).toEqual({ type: 'step_started' });
    await stream[Symbol.asyncDispose]();
    expect(await stream[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
    await expect.poll(() => world.fake.last().readers).toBe(0);
    expect(world.fake.last().aborted).toBe(false);
  });

  it('reads only as its readers ask: a paused loop holds the daemon back, result() drains the rest', async () => {
    const stream = world.sbx.agent.stream('go', { spec });
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'step_started' });
    expect(stream.cursor).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(stream.cursor).toBe(2);
    expect(await stream.result()).toEqual(SUMMARY);
    expect(stream.cursor).toBe(6);
    expect((await iterator.next()).value).toEqual(COMPLETE[1]); // kept for the iteration
  });
});
