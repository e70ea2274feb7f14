import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  postJson,
  startModelServer,
  text,
  toolCall,
  wireOf,
  type ListeningModelServer,
} from '../../support/model-server/index.js';

const SECRET = 'sk-planted-secret-value-XYZ';
let server: ListeningModelServer;

beforeAll(async () => {
  server = await startModelServer({ expectedCredentials: { authorization: `Bearer ${SECRET}` } });
});
afterAll(() => server.close());
beforeEach(() => server.reset());

describe('model server', () => {
  it('records method, path, query, headers and body, keeping only whether credentials arrived', async () => {
    server.reset([text('one'), text('two'), text('three')]);
    await postJson(
      server.origin,
      '/v1/chat/completions?trace=1',
      { model: 'm', stream: false },
      { authorization: `Bearer ${SECRET}`, 'x-session-id': 'ses_1' },
    );
    await postJson(
      server.origin,
      '/v1/messages',
      { model: 'm' },
      { 'x-api-key': SECRET, authorization: 'Bearer dummy' },
    );
    await postJson(server.origin, '/v1/responses', { model: 'm' });
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      query: { trace: '1' },
      wire: 'chat-completions',
      credentials: { authorization: 'expected' },
      body: { model: 'm', stream: false },
      stream: false,
      turn: 0,
    });
    expect(server.requests[0]?.headers['x-session-id']).toBe('ses_1');
    expect(server.requests[0]?.headers['content-type']).toBe('application/json');
    expect(server.requests[1]).toMatchObject({
      wire: 'messages',
      credentials: { 'x-api-key': 'present', authorization: 'present' },
      turn: 1,
    });
    expect(server.requests[2]?.credentials).toEqual({});
    expect(JSON.stringify(server.requests)).not.toContain(SECRET);
    expect(JSON.stringify(server.requests)).not.toContain('dummy');
    expect(server.remaining()).toBe(0);
  });

  it('answers the wire error body once the script is used up, and can loop on its last entry', async () => {
    server.reset([text('only')]);
    expect((await postJson(server.origin, '/v1/chat/completions', {})).status).toBe(200);
    const exhausted = await postJson(server.origin, '/v1/chat/completions', {});
    expect(exhausted.status).toBe(500);
    expect(await exhausted.json()).toMatchObject({ error: { message: 'model server script exhausted' } });
    expect(server.requests.map((request) => request.turn)).toEqual([0, undefined]);

    const looping = await startModelServer({
      script: [text('first'), toolCall('bash', { command: 'true' })],
      loop: true,
    });
    try {
      for (let i = 0; i < 4; i += 1)
        expect((await postJson(looping.origin, '/v1/chat/completions', {})).status).toBe(200);
      expect(looping.requests.map((request) => request.turn)).toEqual([0, 1, 1, 1]);
    } finally {
      await looping.close();
    }
  });

  it('lets a script entry choose its turn from the request', async () => {
    const titleOrAnswer = (request: { body: unknown }) =>
      JSON.stringify(request.body).includes('title generator') ? text('A title') : text('The answer');
    server.reset([titleOrAnswer, titleOrAnswer]);
    const title = await postJson(server.origin, '/chat/completions', {
      messages: [{ role: 'system', content: 'You are a title generator' }],
    });
    const answer = await postJson(server.origin, '/chat/completions', { messages: [] });
    expect(
      ((await title.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe('A title');
    expect(
      ((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
    ).toBe('The answer');
  });

  it('refuses other methods and paths without consuming the script', async () => {
    server.reset([text('kept')]);
    expect((await fetch(`${server.origin}/v1/chat/completions`)).status).toBe(405);
    expect((await postJson(server.origin, '/v1/embeddings', {})).status).toBe(404);
    expect((await postJson(server.origin, '/model/some-model/converse', {})).status).toBe(501);
    expect(server.remaining()).toBe(1);
    expect(server.requests.map((request) => [request.method, request.wire, request.turn])).toEqual([
      ['GET', 'chat-completions', undefined],
      ['POST', undefined, undefined],
      ['POST', undefined, undefined],
    ]);
  });

  it('gives every response a fresh id', async () => {
    server.reset([text('a'), text('b')]);
    const ids = await Promise.all(
      [0, 1].map(
        async () =>
          ((await (await postJson(server.origin, '/v1/chat/completions', {})).json()) as { id: string }).id,
      ),
    );
    expect(new Set(ids).size).toBe(2);
  });

  it.each([
    ['/chat/completions', 'chat-completions'],
    ['/api/v1/chat/completions', 'chat-completions'],
    ['/openai/v1/responses', 'responses'],
    ['/v1/messages', 'messages'],
    ['/v1beta/models/m-1.5:streamGenerateContent', 'generate-content'],
    ['/v1beta/models/m:generateContent', 'generate-content'],
    ['/model/m/converse-stream', 'converse-stream'],
    [
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.m-v1%3A0/converse-stream',
      'converse-stream',
    ],
    ['/model/m/converse', undefined],
    ['/model/converse-stream', undefined],
    ['/v1/models', undefined],
  ])('maps %s to %s', (path, wire) => expect(wireOf(path)).toBe(wire));
});
