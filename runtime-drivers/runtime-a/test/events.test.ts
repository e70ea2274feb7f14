import { describe, expect, it } from 'vitest';
import { RunAccumulator, parseLine, truncateUtf8 } from '../events.js';
import { TOOL_THEN_TEXT_EVENTS } from '../../../test/support/model-server/index.js';

// Shapes recorded in runtimes.md §1.8 (the fake model's run).
const LINES = [
  '{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"id":"p","messageID":"m","type":"step-start"}}',
  '{"type":"tool_use","timestamp":2,"sessionID":"ses_1","part":{"tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"echo hi > /home/user/x.txt"},"output":"(no output)","metadata":{"exit":0,"truncated":false},"title":"t","time":{}}}}',
  '{"type":"step_finish","timestamp":3,"sessionID":"ses_1","part":{"reason":"tool-calls","tokens":{"total":127,"input":100,"output":4,"reasoning":3,"cache":{"read":20,"write":0}},"cost":0}}',
  '{"type":"step_start","timestamp":4,"sessionID":"ses_1","part":{"id":"p2","messageID":"m2","type":"step-start"}}',
  '{"type":"reasoning","timestamp":5,"sessionID":"ses_1","part":{"text":"thinking"}}',
  '{"type":"text","timestamp":6,"sessionID":"ses_1","part":{"text":"done","time":{}}}',
  '{"type":"step_finish","timestamp":7,"sessionID":"ses_1","part":{"reason":"stop","tokens":{"total":127,"input":100,"output":4,"reasoning":3,"cache":{"read":20,"write":0}},"cost":0}}',
  'not json',
  '{"type":"future_event","sessionID":"ses_1","part":{}}',
  '',
];

describe('parseLine', () => {
  it.each([
    [LINES[0], { type: 'step_started' }],
    [
      LINES[1],
      {
        type: 'tool_call',
        name: 'bash',
        status: 'completed',
        input: { command: 'echo hi > /home/user/x.txt' },
        output: '(no output)',
      },
    ],
    [
      LINES[2],
      {
        type: 'step_finished',
        usage: { input: 100, output: 4, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 127 },
      },
    ],
    [LINES[5], { type: 'text', text: 'done' }],
    [
      '{"type":"tool_use","part":{"tool":"grep","state":{"status":"error","input":{},"error":"ripgrep execution failed"}}}',
      { type: 'tool_call', name: 'grep', status: 'error', input: {}, output: 'ripgrep execution failed' },
    ],
  ])('%s', (line, event) => expect(parseLine(line ?? '')).toMatchObject({ kind: 'event', event }));

  it('skips reasoning unless asked', () => {
    expect(parseLine(LINES[4] ?? '')).toEqual({ kind: 'skipped' });
    expect(parseLine(LINES[4] ?? '', { reasoning: true, toolOutputBytes: 10 })).toMatchObject({
      event: { type: 'reasoning', text: 'thinking' },
    });
  });

  it.each([
    'not json',
    '[]',
    'null',
    '{"type":"text","part":{"text":1}}',
    '{"type":"step_finish","part":{"tokens":{"input":-1}}}',
    '{"type":"x","part":{}}',
  ])('drops %s', (line) => expect(parseLine(line)).toEqual({ kind: 'dropped' }));

  it('reads an error event without its message', () => {
    const line =
      '{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"vendor text","statusCode":401,"isRetryable":false}}}';
    expect(parseLine(line)).toEqual({
      kind: 'failure',
      failure: { name: 'APIError', statusCode: 401, retryable: false },
      sessionId: 'ses_1',
    });
  });

  it('truncates tool output by UTF-8 bytes without splitting a character', () => {
    expect(truncateUtf8('aé€', 4)).toBe('aé');
    const line = JSON.stringify({
      type: 'tool_use',
      part: { tool: 'read', state: { status: 'completed', input: {}, output: 'x'.repeat(100) } },
    });
    expect(parseLine(line, { reasoning: false, toolOutputBytes: 10 })).toMatchObject({
      event: { output: 'x'.repeat(10) },
    });
  });
});

describe('RunAccumulator', () => {
  it('gives what AgentResult needs', () => {
    const run = new RunAccumulator(parseLine);
    const events = LINES.flatMap((line) => run.push(line));
    // `done` comes from the driver, not the accumulator.
    expect(events.map((event) => event.type)).toEqual(TOOL_THEN_TEXT_EVENTS.slice(0, -1));
    expect(run.summary()).toEqual({
      text: 'done',
      steps: 2,
      usage: { input: 200, output: 8, reasoning: 6, cacheRead: 40, cacheWrite: 0, total: 254 },
      toolCalls: [
        {
          name: 'bash',
          status: 'completed',
          input: { command: 'echo hi > /home/user/x.txt' },
          output: '(no output)',
        },
      ],
      sessionId: 'ses_1',
      droppedLines: 2,
      failure: undefined,
    });
  });
});
