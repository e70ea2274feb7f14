/**
 * The runtime_b runner's NDJSON output (`runner/runner.mjs`), already in the
 * shape of SPEC "Events": one object per line, `session` first, then `step_started`, `text_delta`,
 * `text`, `reasoning`, `tool_call`, `step_finished` (disjoint usage parts), or `error` (a class name and
 * a status, never a message). A line that is not one of them is dropped, never thrown.
 */
import { z } from 'zod';
import { truncateUtf8, type ParsedLine, type ParseOptions, type RuntimeEvent } from '../run-accumulator.js';

/** runtime_b session ids: `rda_` and 32 hex digits. */
export const RUNTIME_B_SESSION = /^rda_[0-9a-f]{32}$/;

const count = z.number().int().nonnegative();

const lineSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('session'), sessionId: z.string().regex(RUNTIME_B_SESSION) }),
  z.object({ type: z.literal('step_started') }),
  z.object({ type: z.literal('text_delta'), text: z.string() }),
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('reasoning'), text: z.string() }),
  z.object({
    type: z.literal('tool_call'),
    name: z.string(),
    status: z.enum(['running', 'completed', 'error']),
    input: z.unknown(),
    output: z.string(),
  }),
  z.object({
    type: z.literal('step_finished'),
    usage: z.object({
      input: count,
      output: count,
      reasoning: count,
      cacheRead: count,
      cacheWrite: count,
      total: count,
    }),
  }),
  z.object({ type: z.literal('error'), name: z.string(), statusCode: z.number().int().nullable() }),
]);

/**
 * Parses one line of the runner's output.
 *
 * @example
 * ```ts
 * parseRunnerLine('{"type":"text_delta","text":"he"}', DEFAULT_PARSE_OPTIONS);
 * // { kind: 'event', event: { type: 'text_delta', text: 'he' }, sessionId: undefined }
 * ```
 */
export function parseRunnerLine(line: string, options: ParseOptions): ParsedLine {
  if (line.trim() === '') return { kind: 'skipped' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'dropped' };
  }
  const parsed = lineSchema.safeParse(value);
  if (!parsed.success) return { kind: 'dropped' };
  const data = parsed.data;
  switch (data.type) {
    case 'session':
      return { kind: 'session', sessionId: data.sessionId };
    case 'error':
      return {
        kind: 'failure',
        failure: { name: data.name, statusCode: data.statusCode ?? undefined, retryable: undefined },
        sessionId: undefined,
      };
    case 'reasoning':
      if (!options.reasoning) return { kind: 'skipped' };
      break;
    case 'tool_call':
      return {
        kind: 'event',
        event: {
          ...data,
          input: data.input ?? {},
          output: truncateUtf8(data.output, options.toolOutputBytes),
        },
        sessionId: undefined,
      };
    default:
      break;
  }
  return { kind: 'event', event: data as RuntimeEvent, sessionId: undefined };
}
