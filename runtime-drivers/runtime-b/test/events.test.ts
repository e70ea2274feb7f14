import { describe, expect, it } from 'vitest';
import { DEFAULT_PARSE_OPTIONS, RunAccumulator } from '../../run-accumulator.js';
import { parseRunnerLine } from '../events.js';

const SESSION = 'rda_0123456789abcdef0123456789abcdef';
const USAGE = { input: 100, output: 4, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 127 };
const LINES = [
  { type: 'session', sessionId: SESSION },
  { type: 'step_started' },
  { type: 'tool_call', name: 'bash', status: 'completed', input: { command: 'ls' }, output: 'a\nb' },
  { type: 'step_finished', usage: USAGE },
  { type: 'step_started' },
  { type: 'reasoning', text: 'hmm' },
  { type: 'text_delta', text: 'do' },
  { type: 'text_delta', text: 'ne' },
  { type: 'text', text: 'done' },
  { type: 'step_finished', usage: USAGE },
].map((line) => JSON.stringify(line));

describe("the runtime_b runner's lines", () => {
  it('become events, the session and a summary (reasoning only when asked)', () => {
    const run = new RunAccumulator(parseRunnerLine);
    const events = LINES.flatMap((line) => run.push(line));
    expect(events.map((e) => e.type)).toEqual([
      'step_started',
      'tool_call',
      'step_finished',
      'step_started',
      'text_delta',
      'text_delta',
      'text',
      'step_finished',
    ]);
    expect(run.summary()).toMatchObject({ sessionId: SESSION, steps: 2, text: 'done', droppedLines: 0 });
    expect(run.summary().usage.total).toBe(254);
    const withReasoning = new RunAccumulator(parseRunnerLine, { ...DEFAULT_PARSE_OPTIONS, reasoning: true });
    expect(LINES.flatMap((line) => withReasoning.push(line)).map((e) => e.type)).toContain('reasoning');
  });

  it('reports a failure by class and status only, and cuts tool output', () => {
    expect(
      parseRunnerLine(
        '{"type":"error","name":"AuthenticationError","statusCode":401}',
        DEFAULT_PARSE_OPTIONS,
      ),
    ).toEqual({
      kind: 'failure',
      failure: { name: 'AuthenticationError', statusCode: 401, retryable: undefined },
      sessionId: undefined,
    });
    const long = JSON.stringify({
      type: 'tool_call',
      name: 'read',
      status: 'completed',
      input: {},
      output: 'é'.repeat(10),
    });
    expect(parseRunnerLine(long, { reasoning: false, toolOutputBytes: 5 })).toMatchObject({
      event: { output: 'éé' },
    });
  });

  it.each([
    'not json',
    '{"type":"session","sessionId":"ses_1"}',
    '{"type":"step_finished","usage":{"input":-1}}',
    '{"type":"error","name":"E","message":"vendor text"}',
    '{"type":"future"}',
  ])('drops %s', (line) => expect(parseRunnerLine(line, DEFAULT_PARSE_OPTIONS)).toEqual({ kind: 'dropped' }));
});
