/**
 * What a scripted model server answers, and what it records. A script is a list of turns consumed one per
 * model request, whatever the wire style: assistant text, one tool call, or an error status.
 */

/** Wire styles the server speaks, named by format (never by vendor). */
export type WireStyle =
  'chat-completions' | 'responses' | 'messages' | 'generate-content' | 'converse-stream';

/**
 * Token counts of one turn, in one convention whatever the wire: `input` includes `cacheRead` and
 * `cacheWrite`, `output` includes `reasoning`. Each wire module converts (see its `usage` function).
 */
export interface Usage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
  readonly reasoning?: number;
}

/** The assistant answers with text and stops. */
export interface TextTurn {
  readonly type: 'text';
  readonly text: string;
  readonly usage?: Usage;
}

/** The assistant calls one tool and stops for its result. */
export interface ToolCallTurn {
  readonly type: 'tool-call';
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** Call id; a unique one per wire style when absent. */
  readonly id?: string;
  readonly usage?: Usage;
}

/** The server answers with an HTTP error status and the wire's error body (or `body`). */
export interface ErrorTurn {
  readonly type: 'error';
  readonly status: number;
  readonly message?: string;
  /** Replaces the wire's error body. */
  readonly body?: unknown;
  /** Extra response headers, e.g. `retry-after`. */
  readonly headers?: Readonly<Record<string, string>>;
}

export type Turn = TextTurn | ToolCallTurn | ErrorTurn;

/** A turn, or a function choosing one from the request (e.g. answering a title call differently). */
export type ScriptEntry = Turn | ((request: RecordedRequest) => Turn);

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Wire style the path belongs to; undefined for a path no style serves. */
  readonly wire: WireStyle | undefined;
  /** Lower-case names; credential headers left out (see `credentials`); repeated values joined by `, `. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Credential headers that arrived, by lower-case name, values never kept: `expected` when the value
   * equals the one given in `ModelServerOptions.expectedCredentials`, `present` otherwise.
   */
  readonly credentials: Readonly<Record<string, 'present' | 'expected'>>;
  /** Parsed JSON body, or the raw text when it is not JSON (undefined when empty). */
  readonly body: unknown;
  /** Whether the answer was (or will be) a stream. */
  readonly stream: boolean;
  /** Index of the script entry this request consumed; undefined when none was consumed. */
  readonly turn: number | undefined;
}

/** Usage applied to a turn without one. */
export const DEFAULT_USAGE: Usage = { input: 10, output: 5 };

export function text(value: string, usage?: Usage): TextTurn {
  return usage === undefined ? { type: 'text', text: value } : { type: 'text', text: value, usage };
}

export function toolCall(
  name: string,
  args: Readonly<Record<string, unknown>>,
  extra: { readonly id?: string; readonly usage?: Usage } = {},
): ToolCallTurn {
  return { type: 'tool-call', name, arguments: args, ...extra };
}

/**
 * The agent event types of a run whose model calls one tool, then answers with text (a `toolCall` turn,
 * then a `text` turn), through to `done`.
 */
export const TOOL_THEN_TEXT_EVENTS: readonly string[] = [
  'step_started',
  'tool_call',
  'step_finished',
  'step_started',
  'text',
  'step_finished',
  'done',
];

export function errorStatus(status: number, extra: Omit<ErrorTurn, 'type' | 'status'> = {}): ErrorTurn {
  return { type: 'error', status, ...extra };
}

/** The tool names a chat-completions request offered (`tools[].function.name`). */
export function chatToolNames(request: RecordedRequest | undefined): string[] {
  const tools = (request?.body as { tools?: { function: { name: string } }[] } | undefined)?.tools ?? [];
  return tools.map((tool) => tool.function.name);
}
