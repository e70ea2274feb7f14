import { fc, test } from '@fast-check/vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { expect } from 'vitest';
import type { AgentEvent, AgentWireLine, ExecutionSummary } from '../../../protocol/agent-wire.js';
import { AGENT_FAILURE_REASONS } from '../../../rules/agent-reasons.js';
import { AgentError } from '../../../rules/errors.js';
import { AgentStream, type AgentStreamSource } from '../../../sdk/agent-stream.js';

const usage = fc.record({
  input: fc.nat(),
  output: fc.nat(),
  reasoning: fc.nat(),
  cacheRead: fc.nat(),
  cacheWrite: fc.nat(),
  total: fc.nat(),
});
const toolCall = fc.record({
  name: fc.string({ minLength: 1, maxLength: 10 }),
  status: fc.constantFrom('running' as const, 'completed' as const, 'error' as const),
  input: fc.jsonValue({ maxDepth: 2 }),
  output: fc.string({ maxLength: 20 }),
});
const middleEvent: fc.Arbitrary<AgentEvent> = fc.oneof(
  fc.constant({ type: 'step_started' as const }),
  fc.record({ type: fc.constant('text' as const), text: fc.string({ maxLength: 30 }) }),
  fc.record({ type: fc.constant('text_delta' as const), text: fc.string({ maxLength: 30 }) }),
  fc.record({ type: fc.constant('reasoning' as const), text: fc.string({ maxLength: 30 }) }),
  toolCall.map((call) => ({ type: 'tool_call' as const, ...call })),
  usage.map((u) => ({ type: 'step_finished' as const, usage: u })),
);
const sessionId = fc.stringMatching(/^ses_[a-z0-9]{1,8}$/);
const summary: fc.Arbitrary<ExecutionSummary> = fc.record({
  text: fc.string({ maxLength: 30 }),
  sessionId,
  steps: fc.nat(),
  usage,
  exitCode: fc.option(fc.integer({ min: -1, max: 255 }), { nil: null }),
  toolCalls: fc.array(toolCall, { maxLength: 3 }),
  droppedLines: fc.nat({ max: 1000 }),
});
type Item = { kind: 'event'; event: AgentEvent } | { kind: 'session'; id: string } | { kind: 'keepalive' };
const item: fc.Arbitrary<Item> = fc.oneof(
  { weight: 6, arbitrary: middleEvent.map((event) => ({ kind: 'event' as const, event })) },
  { weight: 1, arbitrary: sessionId.map((id) => ({ kind: 'session' as const, id })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'keepalive' as const }) },
);
type Last =
  | { readonly event: { readonly type: 'done' }; readonly summary: ExecutionSummary }
  | {
      readonly event: Extract<AgentEvent, { type: 'agent_failed' }>;
      readonly summary: ExecutionSummary | undefined;
    };
const last: fc.Arbitrary<Last> = fc.oneof(
  summary.map((s): Last => ({ event: { type: 'done' }, summary: s })),
  fc.record({
    event: fc
      .constantFrom(...AGENT_FAILURE_REASONS)
      .map((reason) => ({ type: 'agent_failed' as const, reason })),
    summary: fc.option(summary, { nil: undefined }),
  }),
);

/** The wire lines of `items` then `end`, with increasing sequence numbers. */
function wire(
  items: readonly Item[],
  end: { event: AgentEvent; summary: ExecutionSummary | undefined },
): AgentWireLine[] {
  let seq = 0;
  const lines: AgentWireLine[] = items.map((i) =>
    i.kind === 'keepalive'
      ? { keepalive: true }
      : i.kind === 'session'
        ? { seq: ++seq, session: i.id }
        : { seq: ++seq, event: i.event },
  );
  lines.push({
    seq: ++seq,
    event: end.event,
    ...(end.summary === undefined ? {} : { summary: end.summary }),
  });
  return lines;
}

/** A source that serves `lines` (structured clones, as parsed JSON would be). */
function source(lines: readonly AgentWireLine[]): AgentStreamSource {
  return {
    executionId: 'exe_1',
    open: () =>
      Promise.resolve({
        kind: 'lines',
        lines: (async function* () {
          for (const line of lines) {
            await Promise.resolve();
            yield structuredClone(line);
          }
        })(),
      }),
    abort: () => Promise.resolve(),
  };
}

const reader = fc.constantFrom('iterate' as const, 'observe' as const, 'result' as const);

test.prop([fc.array(item, { maxLength: 25 }), last, reader])(
  'for any lines ending in done or agent_failed, the stream yields exactly their events and result() agrees',
  async (items, end, how) => {
    const lines = wire(items, end);
    const stream = new AgentStream(source(lines), { maxOutputBytes: 16 * 1024 * 1024 });
    const expected = [...items.flatMap((i) => (i.kind === 'event' ? [i.event] : [])), end.event];
    const outcome = () =>
      stream.result().then(
        (r) => ({ ok: r }),
        (e: unknown) => ({ error: e }),
      );
    let events: AgentEvent[] = [];
    if (how === 'iterate') for await (const event of stream) events.push(event);
    else if (how === 'observe') events = await lastValueFrom(stream.events$.pipe(toArray()));
    const settled = await outcome();
    if (how === 'result') for await (const event of stream) events.push(event);
    expect(events).toEqual(expected);
    if (end.event.type === 'done') {
      expect(settled).toEqual({ ok: end.summary });
    } else {
      expect('error' in settled && settled.error).toBeInstanceOf(AgentError);
      expect(settled).toMatchObject({ error: { reason: end.event.reason } });
    }
    const sessions = items.flatMap((i) => (i.kind === 'session' ? [i.id] : []));
    expect(stream.sessionId).toBe(end.summary?.sessionId ?? sessions.at(-1));
    expect(stream.cursor).toBe(lines.filter((l) => 'seq' in l).length);
    expect(stream.droppedLines).toBe(end.summary?.droppedLines ?? 0);
  },
);

test.prop([fc.array(middleEvent, { maxLength: 20 }), summary, fc.integer({ min: 1, max: 400 })])(
  'maxOutputBytes: a reader that keeps up sees everything; the replay keeps a prefix within the cap; the rest is counted',
  async (middle, s, cap) => {
    const end: Last = { event: { type: 'done' }, summary: s };
    const stream = new AgentStream(
      source(
        wire(
          middle.map((event) => ({ kind: 'event', event })),
          end,
        ),
      ),
      {
        maxOutputBytes: cap,
      },
    );
    const live: AgentEvent[] = [];
    for await (const event of stream) live.push(event);
    expect(live).toEqual([...middle, end.event]);
    let bytes = 0;
    let kept = 0;
    for (const event of middle) {
      const size = Buffer.byteLength(JSON.stringify(event));
      if (bytes + size <= cap) {
        bytes += size;
        kept++;
      }
    }
    const replay = await lastValueFrom(stream.events$.pipe(toArray()));
    expect(replay.at(-1)).toEqual(end.event);
    expect(replay).toHaveLength(kept + 1);
    const result = await stream.result();
    expect(result.droppedLines).toBe(s.droppedLines + middle.length - kept);
    expect(stream.droppedLines).toBe(result.droppedLines);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(cap);
    expect(result.toolCalls).toEqual(s.toolCalls.slice(0, result.toolCalls.length));
  },
);
