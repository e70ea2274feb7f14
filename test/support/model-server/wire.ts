/** What every wire module produces, and the pieces they share. */
import type { TextTurn, ToolCallTurn } from './script.js';

/** One server-sent event: `event: <event>` (when set) and one `data:` line. */
export interface SseEvent {
  readonly event?: string;
  readonly data: string;
}

/** An answer: one JSON body, a stream of events, or a stream of binary frames (AWS event stream). */
export type Reply =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown }
  | { readonly kind: 'sse'; readonly events: readonly SseEvent[] }
  | {
      readonly kind: 'frames';
      readonly contentType: string;
      readonly headers: Readonly<Record<string, string>>;
      readonly frames: readonly Uint8Array[];
    };

/** What a wire module knows about the request it answers. */
export interface ReplyContext {
  /** Model named by the request (body or path). */
  readonly model: string;
  readonly stream: boolean;
  /** Chat completions: `stream_options.include_usage`. */
  readonly includeUsage: boolean;
  /** Generate content: `:streamGenerateContent` without `alt=sse` answers a JSON array. */
  readonly jsonArray: boolean;
  /** A fresh id, unique in the server, `<prefix><random><counter>`. */
  newId(prefix: string): string;
  /** Unix seconds. */
  readonly created: number;
}

/** A wire style: its answer to a text or tool-call turn, and its error body (and headers, if any). */
export interface WireModule {
  reply(turn: TextTurn | ToolCallTurn, context: ReplyContext): Reply;
  errorBody(status: number, message: string): unknown;
  /** Headers an error answer carries besides `content-type` (scripted `ErrorTurn.headers` win). */
  errorHeaders?(status: number): Readonly<Record<string, string>>;
}

/** `data` as JSON, with the event name when the wire names events. */
export function sse(data: unknown, event?: string): SseEvent {
  const json = JSON.stringify(data);
  return event === undefined ? { data: json } : { event, data: json };
}

/** Text in word-sized pieces, whitespace kept (so pieces join back to `text`). */
export function textPieces(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\s)(?=\S)/);
}

/** A JSON string in pieces of `size` characters (how tool arguments arrive in streams). */
export function jsonPieces(json: string, size = 12): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += size) pieces.push(json.slice(i, i + size));
  return pieces;
}

/** Bytes of an event on the wire. */
export function encodeSse(event: SseEvent): string {
  return `${event.event === undefined ? '' : `event: ${event.event}\n`}data: ${event.data}\n\n`;
}
