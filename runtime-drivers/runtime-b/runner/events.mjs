/**
 * LangChain's `streamEvents` (version v2) as the runner's NDJSON events (see README "The runner's
 * output"). One model call: `step_started` when it starts, `text_delta` per streamed text chunk, then
 * at its end `reasoning` (when asked and the message has any), `text` (the message's whole text, when
 * not empty) and `step_finished` with its usage. A tool call: one `tool_call` when it ends.
 *
 * Subagents (the `task` tool) run inside a tool: their model calls still give `step_started` and
 * `step_finished` (so steps and the token budget count them) and their tool calls give `tool_call`,
 * but their text and reasoning do not (the `task` tool's output carries the subagent's answer).
 */
import { TextDecoder } from 'node:util';
import { DENIED_EVENT, specToolName } from './names.mjs';

/** Longest tool output kept in an event, in UTF-8 bytes (`ParseOptions.toolOutputBytes`). */
export const TOOL_OUTPUT_BYTES = 8192;

/** Cuts `text` to at most `bytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text, bytes = TOOL_OUTPUT_BYTES) {
  if (text.length * 3 <= bytes) return text;
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  // A streaming decode leaves out a character cut at the end instead of writing U+FFFD.
  return new TextDecoder('utf-8').decode(encoded.subarray(0, bytes), { stream: true });
}

const count = (value) =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.trunc(value) : 0;

/**
 * LangChain's `usage_metadata` as the spec's TokenUsage with disjoint parts. LangChain counts cached
 * tokens inside `input_tokens` and reasoning inside `output_tokens`; here `input` excludes the cache
 * reads and writes, `output` excludes reasoning, and `total` is the sum of the five.
 */
export function tokenUsage(metadata) {
  const cacheRead = count(metadata?.input_token_details?.cache_read);
  const cacheWrite = count(metadata?.input_token_details?.cache_creation);
  const reasoning = count(metadata?.output_token_details?.reasoning);
  const input = Math.max(0, count(metadata?.input_tokens) - cacheRead - cacheWrite);
  const output = Math.max(0, count(metadata?.output_tokens) - reasoning);
  return {
    input,
    output,
    reasoning,
    cacheRead,
    cacheWrite,
    total: input + output + reasoning + cacheRead + cacheWrite,
  };
}

/**
 * What the streamed chunks of one model call tell about its usage beyond their sum, which is what
 * LangChain puts on the whole message (`usage_metadata` of each chunk added up).
 */
class UsageNotes {
  provider = undefined;
  /** vendor_b (`anthropic`): `message_start`'s output count, which `message_delta` repeats. */
  startOutput = undefined;
  sawDelta = false;

  /** Takes one streamed chunk. */
  take(chunk) {
    const provider = chunk?.response_metadata?.model_provider;
    if (typeof provider === 'string') this.provider ??= provider;
    const usage = chunk?.usage_metadata;
    if (usage === undefined || usage === null || this.provider !== 'anthropic') return;
    if (count(usage.input_tokens) > 0 && this.startOutput === undefined) {
      this.startOutput = count(usage.output_tokens);
    } else if (count(usage.input_tokens) === 0 && count(usage.output_tokens) > 0) this.sawDelta = true;
  }

  /**
   * The message's `usage_metadata` with two providers' reports put right:
   * - anthropic: `message_delta`'s output count is cumulative (it includes `message_start`'s), which
   *   langchainjs adds to the start's: the start's is taken out again;
   * - google-genai: `output_tokens` is the candidates' count and only the total counts the thinking
   *   tokens: those are reasoning, and part of the output as every other provider reports it.
   */
  correct(message) {
    const metadata = message?.usage_metadata;
    if (metadata === undefined || metadata === null) return metadata;
    const provider = this.provider ?? message?.response_metadata?.model_provider;
    const fixed = { ...metadata };
    if (provider === 'anthropic' && this.sawDelta && this.startOutput !== undefined) {
      fixed.output_tokens = Math.max(0, count(fixed.output_tokens) - this.startOutput);
    }
    if (provider === 'google-genai' && count(fixed.output_token_details?.reasoning) === 0) {
      const thoughts = count(fixed.total_tokens) - count(fixed.input_tokens) - count(fixed.output_tokens);
      if (thoughts > 0) {
        fixed.output_tokens = count(fixed.output_tokens) + thoughts;
        fixed.output_token_details = { ...fixed.output_token_details, reasoning: thoughts };
      }
    }
    return fixed;
  }
}

/** Text of a message content (a string, or blocks whose `text` blocks count). */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) =>
      typeof block === 'string'
        ? block
        : block?.type === 'text' && typeof block.text === 'string'
          ? block.text
          : '',
    )
    .join('');
}

/** Text of a streamed chunk or a whole message (`.text` where LangChain has it). */
export function messageText(message) {
  if (message === null || typeof message !== 'object') return '';
  try {
    if (typeof message.text === 'string') return message.text;
  } catch {
    // a chunk whose blocks LangChain cannot read: fall back to its raw content
  }
  return contentText(message.content);
}

/** Reasoning text of a whole message: standard `reasoning` blocks, or `reasoning_content` (compatible). */
export function messageReasoning(message) {
  if (message === null || typeof message !== 'object') return '';
  let blocks = [];
  try {
    blocks = Array.isArray(message.contentBlocks) ? message.contentBlocks : [];
  } catch {
    blocks = [];
  }
  const text = blocks
    .filter((block) => block?.type === 'reasoning' && typeof block.reasoning === 'string')
    .map((block) => block.reasoning)
    .join('');
  if (text !== '') return text;
  const extra = message.additional_kwargs?.reasoning_content;
  return typeof extra === 'string' ? extra : '';
}

/** A tool's result (a ToolMessage, a Command carrying one, or anything else) as status and text. */
export function toolResult(output, toolCallId) {
  let message = output;
  const update = output?.update;
  if (update !== undefined && Array.isArray(update?.messages)) {
    message = update.messages.find((m) => m?.tool_call_id === toolCallId) ?? update.messages.at(-1) ?? {};
  }
  if (message !== null && typeof message === 'object' && 'content' in message) {
    const content = message.content;
    const text =
      typeof content === 'string' ? content : contentText(content) || JSON.stringify(content ?? '');
    return { status: message.status === 'error' ? 'error' : 'completed', text };
  }
  if (typeof output === 'string') return { status: 'completed', text: output };
  return { status: 'completed', text: output === undefined ? '' : JSON.stringify(output) };
}

/** A tool's input: the arguments object (a JSON string is parsed). */
function toolInput(input) {
  if (typeof input === 'string') {
    try {
      return JSON.parse(input);
    } catch {
      return { input };
    }
  }
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    // ToolNode hands some tools the whole tool call.
    if (input.type === 'tool_call' && typeof input.args === 'object') return input.args;
    return input;
  }
  return input === undefined ? {} : { input };
}

/**
 * A tool that threw (rather than answering with an error message), as `tool_call` output: the class
 * of the error and its HTTP status, never its text. A tool throws when a model call inside it fails (a
 * subagent's), and a provider's message is vendor text; the run's own `error` line follows, and its
 * message goes to stderr.
 */
function toolErrorText(error) {
  if (error === null || typeof error !== 'object') return 'the tool failed';
  const report = errorReport(error);
  return report.statusCode === null
    ? `the tool failed: ${report.name}`
    : `the tool failed: ${report.name} (status ${String(report.statusCode)})`;
}

/** The LangGraph checkpoint namespace an event was emitted in (`''` at the top). */
function namespaceOf(event) {
  const ns = event.metadata?.langgraph_checkpoint_ns ?? event.metadata?.checkpoint_ns;
  return typeof ns === 'string' ? ns : '';
}

/** Maps streamEvents v2 events to runner events, handed to `emit` in order. */
export class EventMapper {
  #emit;
  #reasoning;
  /** Tools started, by run id: their name and input. */
  #toolRuns = new Map();
  /** Checkpoint namespaces of the tools running now (a count each): a model call below one is a subagent's. */
  #toolNamespaces = new Map();
  /** Model runs: whether each is the main agent's, and what its chunks said about usage. */
  #modelRuns = new Map();

  /**
   * @param {{ emit: (event: object) => void, reasoning: boolean }} options
   */
  constructor({ emit, reasoning }) {
    this.#emit = emit;
    this.#reasoning = reasoning;
  }

  /**
   * Whether an event comes from inside a running tool (a subagent): its checkpoint namespace extends a
   * running tool's (`tools:<id>|model_request:<id>`), or one of its parent runs is a tool.
   */
  #insideTool(event) {
    if ((event.parent_ids ?? []).some((id) => this.#toolRuns.has(id))) return true;
    const ns = namespaceOf(event);
    for (const toolNs of this.#toolNamespaces.keys()) if (ns.startsWith(`${toolNs}|`)) return true;
    return false;
  }

  #toolNamespace(event, delta) {
    const ns = namespaceOf(event);
    const left = (this.#toolNamespaces.get(ns) ?? 0) + delta;
    if (left > 0) this.#toolNamespaces.set(ns, left);
    else this.#toolNamespaces.delete(ns);
  }

  /** Takes one streamEvents v2 event. */
  handle(event) {
    switch (event.event) {
      case 'on_chat_model_start':
        this.#modelRuns.set(event.run_id, { main: !this.#insideTool(event), usage: new UsageNotes() });
        this.#emit({ type: 'step_started' });
        return;
      case 'on_chat_model_stream': {
        const run = this.#modelRuns.get(event.run_id);
        run?.usage.take(event.data?.chunk);
        if (run?.main !== true) return;
        const text = messageText(event.data?.chunk);
        if (text !== '') this.#emit({ type: 'text_delta', text });
        return;
      }
      case 'on_chat_model_end': {
        const run = this.#modelRuns.get(event.run_id) ?? {
          main: !this.#insideTool(event),
          usage: new UsageNotes(),
        };
        const main = run.main;
        this.#modelRuns.delete(event.run_id);
        const message = event.data?.output;
        if (main) {
          if (this.#reasoning) {
            const reasoning = messageReasoning(message);
            if (reasoning !== '') this.#emit({ type: 'reasoning', text: reasoning });
          }
          const text = messageText(message);
          if (text !== '') this.#emit({ type: 'text', text });
        }
        this.#emit({ type: 'step_finished', usage: tokenUsage(run.usage.correct(message)) });
        return;
      }
      case 'on_tool_start':
        this.#toolRuns.set(event.run_id, { name: event.name, input: toolInput(event.data?.input) });
        this.#toolNamespace(event, 1);
        return;
      case 'on_tool_end':
      case 'on_tool_error': {
        const started = this.#toolRuns.get(event.run_id) ?? {
          name: event.name,
          input: toolInput(event.data?.input),
        };
        if (this.#toolRuns.delete(event.run_id)) this.#toolNamespace(event, -1);
        const result =
          event.event === 'on_tool_error'
            ? { status: 'error', text: toolErrorText(event.data?.error) }
            : toolResult(event.data?.output, event.data?.input?.id);
        this.#emit({
          type: 'tool_call',
          name: specToolName(started.name),
          status: result.status,
          input: started.input,
          output: truncateUtf8(result.text),
        });
        return;
      }
      case 'on_custom_event':
        if (event.name === DENIED_EVENT) {
          const { name, input, output } = event.data ?? {};
          this.#emit({
            type: 'tool_call',
            name: specToolName(String(name)),
            status: 'error',
            input: toolInput(input),
            output: truncateUtf8(String(output ?? 'permission denied')),
          });
        }
        return;
      default:
        return;
    }
  }
}

/** Error classes of the runner itself (their names are the report). */
export class RunnerError extends Error {}
export class ConfigError extends RunnerError {
  name = 'ConfigError';
}
export class EntrypointError extends RunnerError {
  name = 'EntrypointError';
}

const NAME = /^[A-Za-z_$][A-Za-z0-9_$.-]{0,63}$/;

function statusOf(error) {
  for (const value of [
    error?.status,
    error?.statusCode,
    error?.$metadata?.httpStatusCode,
    error?.response?.status,
  ]) {
    if (Number.isInteger(value) && value >= 100 && value <= 599) return value;
  }
  return undefined;
}

function classNameOf(error) {
  const names = [error?.constructor?.name, error?.name];
  return (
    names.find((name) => typeof name === 'string' && name !== 'Error' && NAME.test(name)) ??
    (typeof error?.name === 'string' && NAME.test(error.name) ? error.name : 'Error')
  );
}

/**
 * What the `error` line reports: the class of the error that carries an HTTP status (the innermost
 * such, through `cause` links: LangChain wraps a provider's error several times), else of the
 * innermost error; never its message.
 */
export function errorReport(error) {
  if (error instanceof RunnerError) return { type: 'error', name: error.name, statusCode: null };
  const chain = [];
  for (
    let current = error;
    current !== undefined && current !== null && chain.length < 16;
    current = current.cause
  ) {
    chain.push(current);
    if (typeof current !== 'object') break;
  }
  const withStatus = [...chain].reverse().find((entry) => statusOf(entry) !== undefined);
  const chosen = withStatus ?? chain.at(-1) ?? error;
  return { type: 'error', name: classNameOf(chosen), statusCode: statusOf(chosen) ?? null };
}
