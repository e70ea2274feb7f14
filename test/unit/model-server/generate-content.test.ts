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

const request = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
const STREAM = '/v1beta/models/scripted-model:streamGenerateContent';

interface Chunk {
  candidates: { content: { role: string; parts: Record<string, unknown>[] }; finishReason?: string }[];
  usageMetadata?: Record<string, number>;
  modelVersion: string;
}

describe('generate content', () => {
  it('streams candidates with text parts, finishReason and usageMetadata last (alt=sse)', async () => {
    server.reset([text('Hello there, world.', { input: 120, cacheRead: 20, output: 7, reasoning: 3 })]);
    const events = await readEvents(await postJson(server.origin, `${STREAM}?alt=sse`, request));
    expect(events.every((event) => event.event === undefined)).toBe(true);
    const chunks = dataOf(events) as unknown as Chunk[];
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((chunk) => chunk.candidates[0]?.content.parts[0]?.text).join('')).toBe(
      'Hello there, world.',
    );
    expect(chunks.every((chunk) => chunk.candidates[0]?.content.role === 'model')).toBe(true);
    expect(chunks.every((chunk) => chunk.modelVersion === 'scripted-model')).toBe(true);
    expect(chunks.slice(0, -1).some((chunk) => chunk.candidates[0]?.finishReason !== undefined)).toBe(false);
    expect(chunks.at(-1)?.candidates[0]?.finishReason).toBe('STOP');
    expect(chunks.at(-1)?.usageMetadata).toEqual({
      promptTokenCount: 120,
      cachedContentTokenCount: 20,
      candidatesTokenCount: 4,
      thoughtsTokenCount: 3,
      totalTokenCount: 127,
    });
    expect(server.requests[0]).toMatchObject({
      wire: 'generate-content',
      path: STREAM,
      query: { alt: 'sse' },
      stream: true,
    });
  });

  it('streams a functionCall part', async () => {
    server.reset([toolCall('bash', { command: 'ls' })]);
    const chunks = dataOf(
      await readEvents(await postJson(server.origin, `${STREAM}?alt=sse`, request)),
    ) as unknown as Chunk[];
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.candidates[0]?.content.parts).toEqual([
      { functionCall: { name: 'bash', args: { command: 'ls' } } },
    ]);
    expect(chunks[0]?.candidates[0]?.finishReason).toBe('STOP');
  });

  it('answers a JSON array without alt=sse, one object from :generateContent, and status errors', async () => {
    server.reset([
      text('two words'),
      text('whole answer'),
      errorStatus(429, { headers: { 'retry-after': '1' } }),
    ]);
    const array = (await (await postJson(server.origin, STREAM, request)).json()) as Chunk[];
    expect(array.map((chunk) => chunk.candidates[0]?.content.parts[0]?.text).join('')).toBe('two words');
    const one = (await (
      await postJson(server.origin, '/v1beta/models/scripted-model:generateContent', request)
    ).json()) as Chunk;
    expect(one.candidates[0]?.content.parts).toEqual([{ text: 'whole answer' }]);
    expect(one.usageMetadata).toEqual({ promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 });
    const error = await postJson(server.origin, `${STREAM}?alt=sse`, request);
    expect(error.status).toBe(429);
    expect(error.headers.get('retry-after')).toBe('1');
    expect(await error.json()).toEqual({
      error: { code: 429, message: 'scripted error 429', status: 'RESOURCE_EXHAUSTED' },
    });
  });
});
