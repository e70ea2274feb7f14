/**
 * Converse stream (`POST /model/<id>/converse-stream`): an AWS event stream
 * (`application/vnd.amazon.eventstream`) of binary frames, each one JSON event named by its `:event-type`
 * header: `messageStart`; for text `contentBlockDelta` pieces; for a tool call `contentBlockStart` naming
 * it, then `contentBlockDelta` pieces of its input JSON; `contentBlockStop`, `messageStop` (stop reason)
 * and `metadata` (usage, latency). Errors are `{ message }` with the exception name in `x-amzn-errortype`.
 * Converse without a stream is another operation (`/converse`), not served.
 */
import { randomUUID } from 'node:crypto';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import {
  DEFAULT_USAGE,
  type RecordedRequest,
  type TextTurn,
  type ToolCallTurn,
  type Usage,
} from './script.js';
import { jsonPieces, textPieces, type Reply, type ReplyContext, type WireModule } from './wire.js';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();
// `@smithy/util-utf8` is not installed: the platform's encoder and decoder do its two functions.
const codec = new EventStreamCodec(
  (bytes: Uint8Array) => utf8Decoder.decode(bytes),
  (text) => utf8Encoder.encode(text),
);

/** `metadata.metrics.latencyMs`: fixed, so that answers compare equal from run to run. */
const LATENCY_MS = 100;

/**
 * Usage as converse reports it: `inputTokens` excludes cache reads and writes, which are reported apart
 * (each only when the turn gives it); `totalTokens` counts all of them; reasoning is part of `outputTokens`.
 */
export function usage(value: Usage): Record<string, number> {
  const cacheRead = value.cacheRead ?? 0;
  const cacheWrite = value.cacheWrite ?? 0;
  return {
    inputTokens: value.input - cacheRead - cacheWrite,
    outputTokens: value.output,
    totalTokens: value.input + value.output,
    ...(value.cacheRead === undefined ? {} : { cacheReadInputTokens: value.cacheRead }),
    ...(value.cacheWrite === undefined ? {} : { cacheWriteInputTokens: value.cacheWrite }),
  };
}

/** One event frame, its headers in the order Bedrock writes them. */
function frame(eventType: string, event: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: utf8Encoder.encode(JSON.stringify(event)),
  });
}

function reply(turn: TextTurn | ToolCallTurn, context: ReplyContext): Reply {
  const at = { contentBlockIndex: 0 };
  const events: [string, unknown][] = [['messageStart', { role: 'assistant' }]];
  if (turn.type === 'text') {
    const pieces = textPieces(turn.text);
    // Empty text still opens its block with one (empty) delta: there is no contentBlockStart for text.
    for (const text of pieces.length === 0 ? [''] : pieces) {
      events.push(['contentBlockDelta', { ...at, delta: { text } }]);
    }
  } else {
    const toolUseId = turn.id ?? context.newId('tooluse_');
    events.push(['contentBlockStart', { ...at, start: { toolUse: { toolUseId, name: turn.name } } }]);
    for (const input of jsonPieces(JSON.stringify(turn.arguments))) {
      events.push(['contentBlockDelta', { ...at, delta: { toolUse: { input } } }]);
    }
  }
  events.push(
    ['contentBlockStop', at],
    ['messageStop', { stopReason: turn.type === 'text' ? 'end_turn' : 'tool_use' }],
    ['metadata', { usage: usage(turn.usage ?? DEFAULT_USAGE), metrics: { latencyMs: LATENCY_MS } }],
  );
  return {
    kind: 'frames',
    contentType: 'application/vnd.amazon.eventstream',
    headers: { 'x-amzn-requestid': randomUUID() },
    frames: events.map(([type, event]) => frame(type, event)),
  };
}

/** Exception names by status, as the ConverseStream operation declares its errors. */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

/** The exception name an error status answers with (the client picks its error class by it). */
export function errorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
}

/** `{ message }`; the exception name goes in a header. */
function errorBody(_status: number, message: string): unknown {
  return { message };
}

function errorHeaders(status: number): Readonly<Record<string, string>> {
  return { 'x-amzn-errortype': errorType(status), 'x-amzn-requestid': randomUUID() };
}

export const converseStream: WireModule = { reply, errorBody, errorHeaders };

const PATH = /\/model\/([^/]+)\/converse-stream$/;

/** The model id a converse-stream path names, percent-decoding undone (ids and ARNs hold `:` and `/`). */
export function converseModelId(path: string): string | undefined {
  const encoded = PATH.exec(path)?.[1];
  if (encoded === undefined) return undefined;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/** A content block of a converse message; `other` for kinds not read here (images, cache points…). */
export type ConverseBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool-use'; readonly toolUseId: string; readonly name: string; readonly input: unknown }
  | {
      readonly type: 'tool-result';
      readonly toolUseId: string;
      readonly content: readonly ConverseBlock[];
      readonly status: 'success' | 'error' | undefined;
    }
  | { readonly type: 'other'; readonly block: unknown };

export interface ConverseMessage {
  readonly role: string;
  readonly content: readonly ConverseBlock[];
}

export interface InferenceConfig {
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly stopSequences?: readonly string[];
}

/** What a converse-stream request asks, for script entries choosing their turn. */
export interface ConverseRequest {
  readonly modelId: string;
  /** Text of the `system` blocks, in order. */
  readonly system: readonly string[];
  readonly messages: readonly ConverseMessage[];
  /** `toolConfig.tools[].toolSpec.name`, in order. */
  readonly toolNames: readonly string[];
  readonly inferenceConfig: InferenceConfig;
}

const record = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
const list = (value: unknown): readonly unknown[] => (Array.isArray(value) ? (value as unknown[]) : []);
const string = (value: unknown): string => (typeof value === 'string' ? value : '');

function block(value: unknown): ConverseBlock {
  const fields = record(value);
  if (typeof fields.text === 'string') return { type: 'text', text: fields.text };
  if (fields.toolUse !== undefined) {
    const use = record(fields.toolUse);
    return { type: 'tool-use', toolUseId: string(use.toolUseId), name: string(use.name), input: use.input };
  }
  if (fields.toolResult !== undefined) {
    const result = record(fields.toolResult);
    return {
      type: 'tool-result',
      toolUseId: string(result.toolUseId),
      content: list(result.content).map(block),
      status: result.status === 'success' || result.status === 'error' ? result.status : undefined,
    };
  }
  return { type: 'other', block: value };
}

/**
 * The converse request `request` recorded, read leniently (missing or mistyped fields read as empty);
 * undefined when the request is not converse-stream.
 */
export function converseRequest(request: RecordedRequest): ConverseRequest | undefined {
  const modelId = request.wire === 'converse-stream' ? converseModelId(request.path) : undefined;
  if (modelId === undefined) return undefined;
  const body = record(request.body);
  const config = record(body.inferenceConfig);
  const numbers = ['maxTokens', 'temperature', 'topP'].flatMap((name) =>
    typeof config[name] === 'number' ? [[name, config[name]] as const] : [],
  );
  const stops = config.stopSequences;
  return {
    modelId,
    system: list(body.system).flatMap((entry) => {
      const text = record(entry).text;
      return typeof text === 'string' ? [text] : [];
    }),
    messages: list(body.messages).map((message) => ({
      role: string(record(message).role),
      content: list(record(message).content).map(block),
    })),
    toolNames: list(record(body.toolConfig).tools).flatMap((tool) => {
      const name = record(record(tool).toolSpec).name;
      return typeof name === 'string' ? [name] : [];
    }),
    inferenceConfig: {
      ...(Object.fromEntries(numbers) as InferenceConfig),
      ...(Array.isArray(stops) ? { stopSequences: stops.filter((stop) => typeof stop === 'string') } : {}),
    },
  };
}
