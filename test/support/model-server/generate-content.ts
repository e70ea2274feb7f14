/**
 * Generate content (`POST <base>/models/<m>:generateContent`, `:streamGenerateContent?alt=sse`): response
 * objects with `candidates[0].content.parts` (`text` or `functionCall {name, args}`), `finishReason` on the
 * last one, and `usageMetadata`. Streamed as `data: {...}` lines with no event names and no `[DONE]`;
 * `:streamGenerateContent` without `alt=sse` answers the same objects as one JSON array.
 */
import { DEFAULT_USAGE, type TextTurn, type ToolCallTurn, type Usage } from './script.js';
import { sse, textPieces, type Reply, type ReplyContext, type WireModule } from './wire.js';

/**
 * Usage as generate content reports it: `promptTokenCount` includes `cachedContentTokenCount`;
 * `candidatesTokenCount` excludes `thoughtsTokenCount`; the total is prompt + candidates + thoughts.
 */
export function usage(value: Usage): Record<string, number> {
  const reasoning = value.reasoning ?? 0;
  return {
    promptTokenCount: value.input,
    candidatesTokenCount: value.output - reasoning,
    totalTokenCount: value.input + value.output,
    ...(value.cacheRead === undefined ? {} : { cachedContentTokenCount: value.cacheRead }),
    ...(reasoning === 0 ? {} : { thoughtsTokenCount: reasoning }),
  };
}

function reply(turn: TextTurn | ToolCallTurn, context: ReplyContext): Reply {
  const responseId = context.newId('');
  const chunk = (parts: readonly unknown[], last: boolean): Record<string, unknown> => ({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    ...(last ? { usageMetadata: usage(turn.usage ?? DEFAULT_USAGE) } : {}),
    modelVersion: context.model,
    responseId,
  });
  const partsList: unknown[][] =
    turn.type === 'text'
      ? textPieces(turn.text).map((piece) => [{ text: piece }])
      : [[{ functionCall: { name: turn.name, args: turn.arguments } }]];
  if (!context.stream) {
    const whole = turn.type === 'text' ? [{ text: turn.text }] : partsList.flat();
    return { kind: 'json', status: 200, body: chunk(whole, true) };
  }
  if (partsList.length === 0) partsList.push([{ text: '' }]);
  const chunks = partsList.map((parts, i) => chunk(parts, i === partsList.length - 1));
  if (context.jsonArray) return { kind: 'json', status: 200, body: chunks };
  return { kind: 'sse', events: chunks.map((body) => sse(body)) };
}

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** `{ error: { code, message, status } }`. */
function errorBody(status: number, message: string): unknown {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } };
}

export const generateContent: WireModule = { reply, errorBody };
