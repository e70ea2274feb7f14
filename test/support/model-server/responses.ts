/**
 * Responses (`POST <base>/responses`): a `response` object, or with `stream: true` typed events
 * (`event: <type>` and `data: {type, sequence_number, ...}`): `response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`/`.done`,
 * `response.content_part.done` for text, `response.function_call_arguments.delta`/`.done` for a function
 * call, `response.output_item.done`, and `response.completed` carrying the usage. No `[DONE]` line.
 */
import { errorBody } from './chat-completions.js';
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

/** Usage as responses report it (input includes cached, output includes reasoning). */
export function usage(value: Usage): Record<string, unknown> {
  return {
    input_tokens: value.input,
    input_tokens_details: { cached_tokens: value.cacheRead ?? 0 },
    output_tokens: value.output,
    output_tokens_details: { reasoning_tokens: value.reasoning ?? 0 },
    total_tokens: value.input + value.output,
  };
}

function reply(turn: TextTurn | ToolCallTurn, context: ReplyContext): Reply {
  const responseId = context.newId('resp_');
  const response = (
    status: string,
    output: readonly unknown[],
    tokens: unknown,
  ): Record<string, unknown> => ({
    id: responseId,
    object: 'response',
    created_at: context.created,
    status,
    error: null,
    incomplete_details: null,
    model: context.model,
    output,
    parallel_tool_calls: true,
    usage: tokens,
  });
  const tokens = usage(turn.usage ?? DEFAULT_USAGE);
  const itemId = context.newId(turn.type === 'text' ? 'msg_' : 'fc_');
  const args = turn.type === 'tool-call' ? JSON.stringify(turn.arguments) : '';
  const callId = turn.type === 'tool-call' ? (turn.id ?? context.newId('call_')) : '';
  const part = turn.type === 'text' ? { type: 'output_text', text: turn.text, annotations: [] } : undefined;
  const item = (status: string, done: boolean): Record<string, unknown> =>
    turn.type === 'text'
      ? { id: itemId, type: 'message', status, role: 'assistant', content: done ? [part] : [] }
      : {
          id: itemId,
          type: 'function_call',
          status,
          call_id: callId,
          name: turn.name,
          arguments: done ? args : '',
        };
  if (!context.stream) {
    return { kind: 'json', status: 200, body: response('completed', [item('completed', true)], tokens) };
  }
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>): SseEvent =>
    sse({ type, sequence_number: sequence++, ...fields }, type);
  const at = { item_id: itemId, output_index: 0 };
  const events: SseEvent[] = [
    event('response.created', { response: response('in_progress', [], null) }),
    event('response.in_progress', { response: response('in_progress', [], null) }),
    event('response.output_item.added', { output_index: 0, item: item('in_progress', false) }),
  ];
  if (turn.type === 'text') {
    events.push(
      event('response.content_part.added', {
        ...at,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    );
    for (const delta of textPieces(turn.text)) {
      events.push(event('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] }));
    }
    events.push(
      event('response.output_text.done', { ...at, content_index: 0, text: turn.text, logprobs: [] }),
      event('response.content_part.done', { ...at, content_index: 0, part }),
    );
  } else {
    for (const delta of jsonPieces(args))
      events.push(event('response.function_call_arguments.delta', { ...at, delta }));
    events.push(event('response.function_call_arguments.done', { ...at, arguments: args }));
  }
  events.push(
    event('response.output_item.done', { output_index: 0, item: item('completed', true) }),
    event('response.completed', { response: response('completed', [item('completed', true)], tokens) }),
  );
  return { kind: 'sse', events };
}

export const responses: WireModule = { reply, errorBody };
