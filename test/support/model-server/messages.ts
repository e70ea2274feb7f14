/**
 * Messages (`POST <base>/messages`): a `message` object, or with `stream: true` named events:
 * `message_start` (usage with the input counts), `content_block_start`/`content_block_delta`/
 * `content_block_stop` (`text_delta` for text; a `tool_use` block with `input_json_delta` pieces),
 * `message_delta` (stop_reason and output usage) and `message_stop`.
 */
import { DEFAULT_USAGE, type TextTurn, type ToolCallTurn, type Usage } from './script.js';
import {
  jsonPieces,
  sse,
  textPieces,
  type Reply,
  type ReplyContext,
  type SseEvent,
  type WireModule,
} from './wire.js';

/**
 * Usage as messages report it: `input_tokens` excludes cache reads and writes, which are reported
 * apart; reasoning has no field of its own (it is part of `output_tokens`).
 */
export function usage(value: Usage): Record<string, number> {
  const cacheRead = value.cacheRead ?? 0;
  const cacheWrite = value.cacheWrite ?? 0;
  return {
    input_tokens: value.input - cacheRead - cacheWrite,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: value.output,
  };
}

function reply(turn: TextTurn | ToolCallTurn, context: ReplyContext): Reply {
  const id = context.newId('msg_');
  const tokens = usage(turn.usage ?? DEFAULT_USAGE);
  const stopReason = turn.type === 'text' ? 'end_turn' : 'tool_use';
  const toolId = turn.type === 'tool-call' ? (turn.id ?? context.newId('toolu_')) : '';
  const block =
    turn.type === 'text'
      ? { type: 'text', text: turn.text }
      : { type: 'tool_use', id: toolId, name: turn.name, input: turn.arguments };
  const message = (
    content: readonly unknown[],
    stop: string | null,
    counts: unknown,
  ): Record<string, unknown> => ({
    id,
    type: 'message',
    role: 'assistant',
    model: context.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: counts,
  });
  if (!context.stream) return { kind: 'json', status: 200, body: message([block], stopReason, tokens) };
  const event = (type: string, fields: Record<string, unknown>): SseEvent => sse({ type, ...fields }, type);
  const events: SseEvent[] = [
    event('message_start', { message: message([], null, { ...tokens, output_tokens: 1 }) }),
  ];
  if (turn.type === 'text') {
    events.push(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    events.push(event('ping', {}));
    for (const piece of textPieces(turn.text)) {
      events.push(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
    }
  } else {
    events.push(
      event('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: toolId, name: turn.name, input: {} },
      }),
    );
    events.push(event('ping', {}));
    for (const piece of jsonPieces(JSON.stringify(turn.arguments))) {
      events.push(
        event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: piece } }),
      );
    }
  }
  events.push(
    event('content_block_stop', { index: 0 }),
    event('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: tokens.output_tokens },
    }),
    event('message_stop', {}),
  );
  return { kind: 'sse', events };
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** `{ type: 'error', error: { type, message } }`. */
function errorBody(status: number, message: string): unknown {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

export const messages: WireModule = { reply, errorBody };
