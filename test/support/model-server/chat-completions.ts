/**
 * Chat completions (`POST <base>/chat/completions`): `chat.completion` JSON, or with `stream: true`
 * `chat.completion.chunk` events (`data: {...}` lines, no event names) ending with `data: [DONE]`. With
 * `stream_options.include_usage` every chunk carries `usage: null` and a last chunk with empty
 * `choices` carries the usage.
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

/** Usage as chat completions report it (prompt includes cached, completion includes reasoning). */
export function usage(value: Usage): Record<string, unknown> {
  return {
    prompt_tokens: value.input,
    completion_tokens: value.output,
    total_tokens: value.input + value.output,
    prompt_tokens_details: { cached_tokens: value.cacheRead ?? 0 },
    completion_tokens_details: { reasoning_tokens: value.reasoning ?? 0 },
  };
}

function reply(turn: TextTurn | ToolCallTurn, context: ReplyContext): Reply {
  const id = context.newId('chatcmpl-');
  const tokens = usage(turn.usage ?? DEFAULT_USAGE);
  const finishReason = turn.type === 'text' ? 'stop' : 'tool_calls';
  const callId = turn.type === 'tool-call' ? (turn.id ?? context.newId('call_')) : '';
  const args = turn.type === 'tool-call' ? JSON.stringify(turn.arguments) : '';
  if (!context.stream) {
    const message =
      turn.type === 'text'
        ? { role: 'assistant', content: turn.text, refusal: null }
        : {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ id: callId, type: 'function', function: { name: turn.name, arguments: args } }],
          };
    return {
      kind: 'json',
      status: 200,
      body: {
        id,
        object: 'chat.completion',
        created: context.created,
        model: context.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        usage: tokens,
      },
    };
  }
  const chunk = (delta: Record<string, unknown>, finish: string | null): SseEvent =>
    sse({
      id,
      object: 'chat.completion.chunk',
      created: context.created,
      model: context.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(context.includeUsage ? { usage: null } : {}),
    });
  const events: SseEvent[] = [];
  if (turn.type === 'text') {
    events.push(chunk({ role: 'assistant', content: '' }, null));
    for (const piece of textPieces(turn.text)) events.push(chunk({ content: piece }, null));
  } else {
    events.push(
      chunk(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { index: 0, id: callId, type: 'function', function: { name: turn.name, arguments: '' } },
          ],
        },
        null,
      ),
    );
    for (const piece of jsonPieces(args)) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
    }
  }
  events.push(chunk({}, finishReason));
  if (context.includeUsage) {
    events.push(
      sse({
        id,
        object: 'chat.completion.chunk',
        created: context.created,
        model: context.model,
        choices: [],
        usage: tokens,
      }),
    );
  }
  events.push({ data: '[DONE]' });
  return { kind: 'sse', events };
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  429: 'rate_limit_exceeded',
};

/** `{ error: { message, type, param, code } }`, shared with the responses wire. */
export function errorBody(status: number, message: string): unknown {
  const code = status === 401 ? 'invalid_api_key' : status === 429 ? 'rate_limit_exceeded' : null;
  return { error: { message, type: ERROR_TYPES[status] ?? 'server_error', param: null, code } };
}

export const chatCompletions: WireModule = { reply, errorBody };
