import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  dataOf,
  postJson,
  readEvents,
  startModelServer,
  text,
  toolCall,
  type ListeningModelServer,
} from '../../support/model-server/index.js';

const USAGE = { input: 120, cacheRead: 20, output: 7, reasoning: 3 };
let server: ListeningModelServer;

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const request = { model: 'scripted-model', input: 'hi', stream: true };

describe('responses', () => {
  it('streams typed text events ending with response.completed and its usage', async () => {
    server.reset([text('Hello there, world.', USAGE)]);
    const events = await readEvents(await postJson(server.origin, '/v1/responses', request));
    const data = dataOf(events);
    expect(events.map((event) => event.event)).toEqual(data.map((event) => event.type));
    expect(data.map((event) => event.sequence_number)).toEqual(data.map((_, i) => i));
    const types = [...new Set(events.map((event) => event.event))];
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = data.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.map((event) => event.delta).join('')).toBe('Hello there, world.');
    const itemId = (data[2]?.item as { id: string }).id;
    expect(deltas.every((event) => event.item_id === itemId && event.output_index === 0)).toBe(true);
    expect(data[0]?.response).toMatchObject({
      object: 'response',
      status: 'in_progress',
      model: 'scripted-model',
    });
    expect(data.at(-1)?.response).toMatchObject({
      status: 'completed',
      output: [
        {
          id: itemId,
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello there, world.' }],
        },
      ],
      usage: {
        input_tokens: 120,
        input_tokens_details: { cached_tokens: 20 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 127,
      },
    });
  });

  it('streams a function call as output items with argument deltas', async () => {
    server.reset([toolCall('bash', { command: 'ls -la /home/user' }, { id: 'call_7' })]);
    const data = dataOf(await readEvents(await postJson(server.origin, '/openai/v1/responses', request)));
    const added = data.find((event) => event.type === 'response.output_item.added');
    expect(added?.item).toMatchObject({
      type: 'function_call',
      status: 'in_progress',
      call_id: 'call_7',
      name: 'bash',
      arguments: '',
    });
    const deltas = data.filter((event) => event.type === 'response.function_call_arguments.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(JSON.parse(deltas.map((event) => event.delta).join(''))).toEqual({ command: 'ls -la /home/user' });
    const done = data.find((event) => event.type === 'response.output_item.done');
    expect(done?.item).toMatchObject({ type: 'function_call', status: 'completed', name: 'bash' });
    expect(JSON.parse((done?.item as { arguments: string }).arguments)).toEqual({
      command: 'ls -la /home/user',
    });
    expect(data.at(-1)?.type).toBe('response.completed');
  });

  it('answers a response object without stream', async () => {
    server.reset([toolCall('read', { path: 'a' })]);
    const body = (await (
      await postJson(server.origin, '/v1/responses', { ...request, stream: false })
    ).json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [{ type: 'function_call', name: 'read', arguments: '{"path":"a"}' }],
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    });
  });
});
