import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  dataOf,
  errorStatus,
  postJson,
  readEvents,
  startModelServer,
  text,
  toolCall,
  type ListeningModelServer,
} from '../../support/model-server/index.js';

const USAGE = { input: 120, cacheRead: 20, output: 7, reasoning: 3 };
const PATH = '/v1/chat/completions';
let server: ListeningModelServer;

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const request = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'scripted-model',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

interface Choice {
  delta: {
    role?: string;
    content?: string | null;
    tool_calls?: { index: number; id?: string; function: { name?: string; arguments: string } }[];
  };
  finish_reason: string | null;
}

describe('chat completions', () => {
  it('streams text in chunks, a usage chunk when asked, then [DONE]', async () => {
    server.reset([text('Hello there, world.', USAGE)]);
    const response = await postJson(
      server.origin,
      PATH,
      request({ stream: true, stream_options: { include_usage: true } }),
    );
    expect(response.status).toBe(200);
    const events = await readEvents(response);
    expect(events.every((event) => event.event === undefined)).toBe(true);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = dataOf(events.slice(0, -1));
    expect(
      chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'scripted-model'),
    ).toBe(true);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    const usageChunk = chunks.at(-1);
    expect(usageChunk?.choices).toEqual([]);
    expect(usageChunk?.usage).toEqual({
      prompt_tokens: 120,
      completion_tokens: 7,
      total_tokens: 127,
      prompt_tokens_details: { cached_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: 3 },
    });
    const choices = chunks.slice(0, -1).map((chunk) => (chunk.choices as Choice[])[0]);
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(choices[0]?.delta.role).toBe('assistant');
    expect(choices.map((choice) => choice?.delta.content ?? '').join('')).toBe('Hello there, world.');
    expect(choices.length).toBeGreaterThan(3);
    expect(choices.at(-1)?.finish_reason).toBe('stop');
    expect(choices.slice(0, -1).every((choice) => choice?.finish_reason === null)).toBe(true);
  });

  it('sends no usage at all without stream_options.include_usage', async () => {
    server.reset([text('ok')]);
    const events = await readEvents(await postJson(server.origin, PATH, request({ stream: true })));
    const chunks = dataOf(events.slice(0, -1));
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    expect(events.at(-1)?.data).toBe('[DONE]');
  });

  it('streams a tool call: id and name first, then argument pieces', async () => {
    server.reset([
      toolCall('bash', { command: 'echo hi > /home/user/x.txt', description: 'write x' }, { id: 'call_1' }),
    ]);
    const events = await readEvents(
      await postJson(server.origin, PATH, request({ stream: true, stream_options: { include_usage: true } })),
    );
    const chunks = dataOf(events.slice(0, -2));
    const choices = chunks.map((chunk) => (chunk.choices as Choice[])[0]);
    const calls = choices.flatMap((choice) => choice?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: 'call_1',
      type: 'function',
      function: { name: 'bash', arguments: '' },
    });
    expect(calls.length).toBeGreaterThan(2);
    expect(calls.every((call) => call.index === 0)).toBe(true);
    expect(JSON.parse(calls.map((call) => call.function.arguments).join(''))).toEqual({
      command: 'echo hi > /home/user/x.txt',
      description: 'write x',
    });
    expect(choices.at(-1)?.finish_reason).toBe('tool_calls');
  });

  it('answers JSON without stream', async () => {
    server.reset([text('plain', USAGE), toolCall('read', { path: 'a' })]);
    const first = (await (await postJson(server.origin, PATH, request())).json()) as Record<string, unknown>;
    expect(first).toMatchObject({
      object: 'chat.completion',
      model: 'scripted-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'plain' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127 },
    });
    const second = (await (await postJson(server.origin, '/chat/completions', request())).json()) as {
      choices: {
        message: {
          content: null;
          tool_calls: { id: string; type: string; function: { name: string; arguments: string } }[];
        };
        finish_reason: string;
      }[];
    };
    const call = second.choices[0]?.message.tool_calls[0];
    expect(second.choices[0]?.message.content).toBeNull();
    expect(call?.id).toMatch(/^call_/);
    expect(call?.function.name).toBe('read');
    expect(JSON.parse(call?.function.arguments ?? '')).toEqual({ path: 'a' });
    expect(second.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('answers a scripted error with the error body of the wire', async () => {
    server.reset([errorStatus(401, { message: 'bad key' })]);
    const response = await postJson(server.origin, '/api/v1/chat/completions', request({ stream: true }));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { message: 'bad key', type: 'invalid_request_error', param: null, code: 'invalid_api_key' },
    });
  });
});
