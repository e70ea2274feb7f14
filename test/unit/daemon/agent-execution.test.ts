/**
 * One execution's log in sandboxd: runtime output in any chunking becomes numbered lines (the session
 * once, events, one final event with the summary) readable from a cursor; and sandbox code, which the
 * runtime is, cannot grow sandboxd's memory with output: over-long lines and output past the kept
 * bytes are dropped and counted, step boundaries always kept.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { AgentExecution, MAX_LINE_CHARS } from '../../../daemon/agent-execution.js';
import { parseLine, type RuntimeEvent } from '../../../runtime-drivers/runtime-a/events.js';
import { TOOL_THEN_TEXT_EVENTS } from '../../support/model-server/index.js';

const LIMITS = { timeoutMs: 60_000, maxSteps: 50, maxTotalTokens: null, maxOutputBytes: 16 * 2 ** 20 };
const line = (type: string, part: object) => `${JSON.stringify({ type, sessionID: 'ses_1', part })}\n`;
const STEP = line('step_start', { type: 'step-start' });
const TEXT = (text: string) => line('text', { text });
const TOOL = (command: string) =>
  line('tool_use', { tool: 'bash', state: { status: 'completed', input: { command }, output: 'ok' } });
const FINISH = line('step_finish', { tokens: { total: 3, input: 2, output: 1, cache: {} } });

const newExecution = (id: string, limits: typeof LIMITS): AgentExecution =>
  new AgentExecution({ id, limits, startedAt: 0, sessionId: undefined, reasoning: false, parse: parseLine });

/** Feeds output the way the host does: every event goes to the log. */
function feed(execution: AgentExecution, chunks: readonly string[]): RuntimeEvent[] {
  const events = chunks.flatMap((chunk) => execution.output(Buffer.from(chunk)));
  for (const event of events) execution.emit(event);
  return events;
}

describe('an execution log', () => {
  it('numbers the session, the events and the final event with its summary, whatever the chunking', async () => {
    const execution = newExecution('exe_1', LIMITS);
    const output = STEP + TOOL('ls') + FINISH + STEP + TEXT('done') + FINISH;
    feed(execution, output.match(/[\s\S]{1,7}/g) ?? []);
    execution.exited(0);
    execution.finish({ type: 'done' });
    const lines = await lastValueFrom(execution.lines().pipe(toArray()));
    expect(lines.map((l) => ('session' in l ? 'session' : l.event.type))).toEqual([
      'session',
      ...TOOL_THEN_TEXT_EVENTS,
    ]);
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(lines.at(-1)).toMatchObject({
      summary: { text: 'done', sessionId: 'ses_1', steps: 2, exitCode: 0 },
    });
    const after = await lastValueFrom(execution.lines(6).pipe(toArray()));
    expect(after.map((l) => l.seq)).toEqual([7, 8]);
  });

  it('decodes a character split across chunks of output', () => {
    const execution = newExecution('exe_4', LIMITS);
    const bytes = Buffer.from(TEXT('é€'));
    const events = [...bytes].flatMap((byte) => execution.output(Uint8Array.of(byte)));
    expect([...events, ...execution.flush()]).toEqual([{ type: 'text', text: 'é€' }]);
  });

  it('drops an over-long line, even one that never ends, and goes on with the next', () => {
    const execution = newExecution('exe_2', LIMITS);
    const huge = 'x'.repeat(64 * 1024);
    const chunks = Array.from({ length: Math.ceil((3 * MAX_LINE_CHARS) / huge.length) }, () => huge);
    expect(feed(execution, chunks)).toEqual([]);
    expect(feed(execution, [`tail\n${TEXT('after')}`])).toEqual([{ type: 'text', text: 'after' }]);
    expect(feed(execution, [`${'y'.repeat(MAX_LINE_CHARS + 1)}\n`])).toEqual([]);
    expect(execution.summary().droppedLines).toBe(2);
  });

  it('hands every event to live readers but keeps only maxOutputBytes (and every step boundary) for later ones', () => {
    const execution = newExecution('exe_3', { ...LIMITS, maxOutputBytes: 200 });
    const live: string[] = [];
    execution.lines().subscribe((l) => live.push('session' in l ? 'session' : l.event.type));
    const output = Array.from({ length: 10 }, (_, i) => STEP + TOOL(`echo ${String(i)}`) + FINISH).join('');
    feed(execution, [output]);
    execution.finish({ type: 'done' });
    expect(live.filter((t) => t === 'tool_call')).toHaveLength(10);
    const kept: string[] = [];
    execution.lines().subscribe((l) => kept.push('session' in l ? 'session' : l.event.type));
    expect(kept.filter((t) => t === 'step_started')).toHaveLength(10);
    expect(kept.filter((t) => t === 'step_finished')).toHaveLength(10);
    expect(kept.filter((t) => t === 'tool_call').length).toBeLessThan(10);
    const summary = execution.summary();
    expect(summary.steps).toBe(10);
    expect(summary.usage.total).toBe(30);
    expect(summary.droppedLines).toBe(0); // delivered live; the SDK counts what it does not keep
    expect(JSON.stringify(summary.toolCalls).length).toBeLessThanOrEqual(200);
  });
});
