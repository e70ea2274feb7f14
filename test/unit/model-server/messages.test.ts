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

let server: ListeningModelServer;

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const request = {
  model: 'scripted-model',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
};

describe('messages', () => {
  it('streams text blocks between message_start and message_stop', async () => {
    server.reset([text('Hello there, world.', { input: 120, cacheRead: 20, cacheWrite: 10, output: 7 })]);
    const events = await readEvents(await postJson(server.origin, '/v1/messages', request));
    const data = dataOf(events);
    expect(events.map((event) => event.event)).toEqual(data.map((event) => event.type));
    const order = events.map((event) => event.event).filter((name, i, all) => name !== all[i - 1]);
    expect(order).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(data[0]?.message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'scripted-model',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 90, cache_read_input_tokens: 20, cache_creation_input_tokens: 10 },
    });
    expect(data[1]).toMatchObject({ index: 0, content_block: { type: 'text', text: '' } });
    const deltas = data.filter((event) => event.type === 'content_block_delta');
    expect(deltas.map((event) => (event.delta as { type: string; text: string }).text).join('')).toBe(
      'Hello there, world.',
    );
    expect(deltas.every((event) => (event.delta as { type: string }).type === 'text_delta')).toBe(true);
    expect(data.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 7 },
    });
  });

  it('streams tool_use with input_json_delta pieces', async () => {
    server.reset([toolCall('bash', { command: 'echo hi > /home/user/x.txt' }, { id: 'toolu_1' })]);
    const data = dataOf(await readEvents(await postJson(server.origin, '/v1/messages', request)));
    expect(data.find((event) => event.type === 'content_block_start')).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} },
    });
    const deltas = data
      .filter((event) => event.type === 'content_block_delta')
      .map((event) => event.delta as { type: string; partial_json: string });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((delta) => delta.type === 'input_json_delta')).toBe(true);
    expect(JSON.parse(deltas.map((delta) => delta.partial_json).join(''))).toEqual({
      command: 'echo hi > /home/user/x.txt',
    });
    expect(data.find((event) => event.type === 'message_delta')?.delta).toEqual({
      stop_reason: 'tool_use',
      stop_sequence: null,
    });
  });

  it('answers a message object without stream, and typed errors', async () => {
    server.reset([toolCall('read', { path: 'a' }, { id: 'toolu_2' }), errorStatus(401)]);
    const body = (await (
      await postJson(server.origin, '/v1/messages', { ...request, stream: false })
    ).json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'message',
      content: [{ type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'a' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 10, output_tokens: 5 },
    });
    const error = await postJson(server.origin, '/v1/messages', request);
    expect(error.status).toBe(401);
    expect(await error.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'scripted error 401' },
    });
  });
});
