import { crc32 } from 'node:zlib';
import { fc, test as fcTest } from '@fast-check/vitest';
import { EventStreamCodec, type Message } from '@smithy/eventstream-codec';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { converseStream, errorType } from '../../support/model-server/converse-stream.js';
import {
  converseRequest,
  errorStatus,
  eventsOf,
  parseEventStream,
  postJson,
  readEventStream,
  startModelServer,
  text,
  toolCall,
  type ListeningModelServer,
  type RecordedRequest,
} from '../../support/model-server/index.js';

let server: ListeningModelServer;

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const PATH = '/model/scripted-model/converse-stream';
const request = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// The test's own codec: decoding never goes through the server's instance.
const codec = new EventStreamCodec(
  (bytes: Uint8Array) => new TextDecoder().decode(bytes),
  (value) => new TextEncoder().encode(value),
);

const headersOf = (eventType: string): Message['headers'] => ({
  ':event-type': { type: 'string', value: eventType },
  ':content-type': { type: 'string', value: 'application/json' },
  ':message-type': { type: 'string', value: 'event' },
});

/** Frames of `bytes`, cut by their length preludes, each with both CRCs checked by zlib's CRC-32. */
function checkedFrames(bytes: Uint8Array): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.byteLength;) {
    const view = new DataView(bytes.buffer, bytes.byteOffset + offset);
    const length = view.getUint32(0);
    const headersLength = view.getUint32(4);
    const frame = bytes.subarray(offset, offset + length);
    expect(frame.byteLength).toBe(length);
    expect(headersLength).toBeLessThan(length - 16);
    expect(view.getUint32(8)).toBe(crc32(frame.subarray(0, 8)));
    expect(view.getUint32(length - 4)).toBe(crc32(frame.subarray(0, length - 4)));
    frames.push(frame);
    offset += length;
  }
  return frames;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** A small answer, as the wire module writes it (a text turn's frames carry no id). */
const SMALL = (() => {
  const reply = converseStream.reply(text('Hi there'), {
    model: 'scripted-model',
    stream: true,
    includeUsage: false,
    jsonArray: false,
    newId: (prefix) => `${prefix}1`,
    created: 0,
  });
  if (reply.kind !== 'frames') throw new Error('converse-stream answers frames');
  return concat(reply.frames);
})();
const SMALL_MESSAGES = checkedFrames(SMALL).map((frame) => codec.decode(frame));

/** `bytes` in consecutive chunks of `sizes` (cycled), the last chunk whatever is left. */
function chunked(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (let i = 0; offset < bytes.byteLength; i += 1) {
    const size = sizes.length === 0 ? bytes.byteLength : (sizes[i % sizes.length] ?? 1);
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

describe('converse stream', () => {
  it('streams text as contentBlockDelta pieces between messageStart and messageStop, then metadata', async () => {
    server.reset([text('Hello there, world.')]);
    const response = await postJson(server.origin, PATH, request);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    expect(response.headers.get('x-amzn-requestid')).toMatch(UUID);
    const messages = checkedFrames(new Uint8Array(await response.arrayBuffer())).map((frame) =>
      codec.decode(frame),
    );
    const events = eventsOf(messages);
    expect(events).toEqual([
      { type: 'messageStart', data: { role: 'assistant' } },
      { type: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'Hello ' } } },
      { type: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'there, ' } } },
      { type: 'contentBlockDelta', data: { contentBlockIndex: 0, delta: { text: 'world.' } } },
      { type: 'contentBlockStop', data: { contentBlockIndex: 0 } },
      { type: 'messageStop', data: { stopReason: 'end_turn' } },
      {
        type: 'metadata',
        data: { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, metrics: { latencyMs: 100 } },
      },
    ]);
    // Every header, its type and the order Bedrock writes them in.
    expect(messages.map((message) => message.headers)).toEqual(events.map((event) => headersOf(event.type)));
    for (const message of messages) {
      expect(Object.keys(message.headers)).toEqual([':event-type', ':content-type', ':message-type']);
    }
    expect(server.requests[0]).toMatchObject({ wire: 'converse-stream', path: PATH, stream: true, turn: 0 });
  });

  it('opens a tool call with contentBlockStart and streams its input JSON in pieces', async () => {
    const args = { command: 'echo hi > /home/user/x.txt' };
    server.reset([toolCall('bash', args, { id: 'tooluse_1' }), toolCall('read', {}), toolCall('read', {})]);
    const events = eventsOf(await readEventStream(await postJson(server.origin, PATH, request)));
    const deltas = events.filter((event) => event.type === 'contentBlockDelta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events).toEqual([
      { type: 'messageStart', data: { role: 'assistant' } },
      {
        type: 'contentBlockStart',
        data: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_1', name: 'bash' } } },
      },
      ...deltas,
      { type: 'contentBlockStop', data: { contentBlockIndex: 0 } },
      { type: 'messageStop', data: { stopReason: 'tool_use' } },
      {
        type: 'metadata',
        data: { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, metrics: { latencyMs: 100 } },
      },
    ]);
    const pieces = deltas.map((event) => {
      expect(Object.keys(event.data)).toEqual(['contentBlockIndex', 'delta']);
      expect(event.data.contentBlockIndex).toBe(0);
      const input = (event.data.delta as { toolUse: { input: unknown } }).toolUse.input;
      expect(typeof input).toBe('string');
      return input as string;
    });
    expect(JSON.parse(pieces.join(''))).toEqual(args);

    const ids = await Promise.all(
      [0, 1].map(async () => {
        const start = eventsOf(await readEventStream(await postJson(server.origin, PATH, request)))[1];
        return (start?.data.start as { toolUse: { toolUseId: string } }).toolUse.toolUseId;
      }),
    );
    expect(ids.every((id) => /^tooluse_[0-9a-f]{8}\d{4}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(2);
  });

  it('reports cache reads and writes apart from inputTokens, and only when the turn gives them', async () => {
    server.reset([
      text('cached', { input: 120, cacheRead: 20, cacheWrite: 10, output: 7, reasoning: 3 }),
      text('read only', { input: 50, cacheRead: 40, output: 2 }),
    ]);
    const metadata = async () =>
      eventsOf(await readEventStream(await postJson(server.origin, PATH, request))).at(-1);
    expect(await metadata()).toEqual({
      type: 'metadata',
      data: {
        usage: {
          inputTokens: 90,
          outputTokens: 7,
          totalTokens: 127,
          cacheReadInputTokens: 20,
          cacheWriteInputTokens: 10,
        },
        metrics: { latencyMs: 100 },
      },
    });
    expect((await metadata())?.data.usage).toEqual({
      inputTokens: 10,
      outputTokens: 2,
      totalTokens: 52,
      cacheReadInputTokens: 40,
    });
  });

  it('writes the bytes the wire module encodes, frame by frame, whatever the event delay', async () => {
    server.reset([text('Hi there')]);
    expect(new Uint8Array(await (await postJson(server.origin, PATH, request)).arrayBuffer())).toEqual(SMALL);
    const slow = await startModelServer({
      script: [toolCall('bash', { command: 'ls -la' })],
      eventDelayMs: 2,
    });
    try {
      const events = eventsOf(await readEventStream(await postJson(slow.origin, PATH, request)));
      expect(events.map((event) => event.type)).toEqual([
        'messageStart',
        'contentBlockStart',
        'contentBlockDelta',
        'contentBlockDelta',
        'contentBlockStop',
        'messageStop',
        'metadata',
      ]);
    } finally {
      await slow.close();
    }
  });

  it('decodes the same messages from a small answer split at every byte boundary', () => {
    expect(SMALL_MESSAGES.length).toBe(6);
    for (let cut = 1; cut < SMALL.byteLength; cut += 1) {
      expect(parseEventStream([SMALL.subarray(0, cut), SMALL.subarray(cut)])).toEqual(SMALL_MESSAGES);
    }
    expect(parseEventStream(chunked(SMALL, [1]))).toEqual(SMALL_MESSAGES);
  });

  fcTest.prop([fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 })])(
    'decodes the same messages whatever chunk sizes the body arrives in',
    (sizes) => {
      expect(parseEventStream(chunked(SMALL, sizes))).toEqual(SMALL_MESSAGES);
    },
  );

  fcTest.prop([fc.nat({ max: SMALL.byteLength - 1 }), fc.integer({ min: 1, max: 255 })])(
    'refuses an answer with any one byte damaged (lengths and CRCs are checked)',
    (index, mask) => {
      const damaged = SMALL.slice();
      damaged[index] = (damaged[index] ?? 0) ^ mask;
      expect(() => parseEventStream([damaged])).toThrow();
    },
  );

  it('refuses an answer cut inside a message', () => {
    expect(() => parseEventStream([SMALL.subarray(0, SMALL.byteLength - 1)])).toThrow(/cut short/);
    expect(() => parseEventStream([SMALL.subarray(0, 3)])).toThrow(/cut short/);
  });

  it('answers an error status with { message } and the exception name in x-amzn-errortype', async () => {
    server.reset([
      errorStatus(429, { headers: { 'retry-after': '1' } }),
      errorStatus(400, { message: 'messages: too long' }),
      errorStatus(503, { body: { message: 'custom', extra: true } }),
    ]);
    const throttled = await postJson(server.origin, PATH, request);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('content-type')).toBe('application/json');
    expect(throttled.headers.get('x-amzn-errortype')).toBe('ThrottlingException');
    expect(throttled.headers.get('x-amzn-requestid')).toMatch(UUID);
    expect(throttled.headers.get('retry-after')).toBe('1');
    expect(await throttled.json()).toEqual({ message: 'scripted error 429' });
    const invalid = await postJson(server.origin, PATH, request);
    expect([invalid.status, invalid.headers.get('x-amzn-errortype')]).toEqual([400, 'ValidationException']);
    expect(await invalid.json()).toEqual({ message: 'messages: too long' });
    const replaced = await postJson(server.origin, PATH, request);
    expect(replaced.headers.get('x-amzn-errortype')).toBe('ServiceUnavailableException');
    expect(await replaced.json()).toEqual({ message: 'custom', extra: true });
    const exhausted = await postJson(server.origin, PATH, request);
    expect([exhausted.status, exhausted.headers.get('x-amzn-errortype')]).toEqual([
      500,
      'InternalServerException',
    ]);
    expect(await exhausted.json()).toEqual({ message: 'model server script exhausted' });
  });

  it.each([
    [400, 'ValidationException'],
    [403, 'AccessDeniedException'],
    [404, 'ResourceNotFoundException'],
    [408, 'ModelTimeoutException'],
    [424, 'ModelErrorException'],
    [429, 'ThrottlingException'],
    [500, 'InternalServerException'],
    [503, 'ServiceUnavailableException'],
    [418, 'ValidationException'],
    [502, 'InternalServerException'],
  ])('names status %i %s', (status, name) => expect(errorType(status)).toBe(name));
});

describe('converse request', () => {
  const modelId = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.vendor.model-v1:0';
  const body = {
    messages: [
      { role: 'user', content: [{ text: 'List the files' }, { cachePoint: { type: 'default' } }] },
      {
        role: 'assistant',
        content: [
          { text: 'Listing.' },
          { toolUse: { toolUseId: 'tooluse_1', name: 'bash', input: { command: 'ls' } } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            toolResult: {
              toolUseId: 'tooluse_1',
              content: [{ text: 'a.txt' }, { json: {} }],
              status: 'success',
            },
          },
        ],
      },
    ],
    system: [{ text: 'You are terse.' }, { cachePoint: { type: 'default' } }, { text: 'Use tools.' }],
    toolConfig: {
      tools: [
        { toolSpec: { name: 'bash', inputSchema: { json: { type: 'object' } } } },
        { toolSpec: { name: 'read', description: 'reads a file' } },
        { cachePoint: { type: 'default' } },
      ],
      toolChoice: { auto: {} },
    },
    inferenceConfig: { maxTokens: 1024, temperature: 0.2, topP: 'high', stopSequences: ['END', 3] },
  };

  it('reads messages, system text, tool names, inference config and the model id of the path', async () => {
    const seen: ReturnType<typeof converseRequest>[] = [];
    const answer = (recorded: RecordedRequest) => {
      const converse = converseRequest(recorded);
      seen.push(converse);
      const last = converse?.messages.at(-1)?.content[0];
      return last?.type === 'tool-result' ? text('done') : toolCall('bash', { command: 'ls' });
    };
    server.reset([answer]);
    const path = `/model/${encodeURIComponent(modelId)}/converse-stream`;
    const events = eventsOf(await readEventStream(await postJson(server.origin, path, body)));
    expect(events.at(-2)?.data).toEqual({ stopReason: 'end_turn' });
    expect(seen).toEqual([
      {
        modelId,
        system: ['You are terse.', 'Use tools.'],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'List the files' },
              { type: 'other', block: { cachePoint: { type: 'default' } } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Listing.' },
              { type: 'tool-use', toolUseId: 'tooluse_1', name: 'bash', input: { command: 'ls' } },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool-result',
                toolUseId: 'tooluse_1',
                content: [
                  { type: 'text', text: 'a.txt' },
                  { type: 'other', block: { json: {} } },
                ],
                status: 'success',
              },
            ],
          },
        ],
        toolNames: ['bash', 'read'],
        inferenceConfig: { maxTokens: 1024, temperature: 0.2, stopSequences: ['END'] },
      },
    ]);
    expect(server.requests[0]?.body).toEqual(body);
  });

  it('reads a malformed body as empty, and nothing from another wire', async () => {
    server.reset([text('a'), text('b'), text('c')]);
    await (
      await postJson(server.origin, PATH, { messages: 'none', system: {}, toolConfig: [] })
    ).arrayBuffer();
    await (await fetch(`${server.origin}${PATH}`, { method: 'POST', body: 'not json' })).arrayBuffer();
    await (await postJson(server.origin, '/v1/messages', body)).arrayBuffer();
    const [malformed, raw, other] = server.requests.map((recorded) => converseRequest(recorded));
    const empty = { modelId: 'scripted-model', system: [], messages: [], toolNames: [], inferenceConfig: {} };
    expect(malformed).toEqual(empty);
    expect(raw).toEqual(empty);
    expect(other).toBeUndefined();
  });
});
