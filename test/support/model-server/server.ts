/**
 * A scripted model server for agent tests. It answers model requests in the wire style their path names
 * (chat completions, responses, messages, generate content, converse stream), consuming one script entry
 * per request, and records every request (credential header values never kept).
 *
 * `createModelServer` gives a plain `(req, res)` handler, so it can sit behind any listener:
 * `startModelServer` serves it over loopback HTTP; for HTTPS with a test CA, pass it to
 * `https.createServer({ cert, key }, server.handler)` (certificate from `makeTestPki` in
 * `test/integration/support/test-ca.ts`) and listen on `TestNetwork.hostAddress` (the host end of the
 * test namespace's veth pair) — a listener in the test process keeps the recorded requests in memory.
 *
 * Not served yet: converse without a stream (`/model/<id>/converse`); it answers 501.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatCompletions } from './chat-completions.js';
import { converseModelId, converseStream } from './converse-stream.js';
import { generateContent } from './generate-content.js';
import { messages } from './messages.js';
import { responses } from './responses.js';
import type { RecordedRequest, ScriptEntry, Turn, WireStyle } from './script.js';
import { encodeSse, type Reply, type ReplyContext, type WireModule } from './wire.js';

export interface ModelServerOptions {
  readonly script?: readonly ScriptEntry[];
  /** When the script is used up, repeat its last entry forever (a model that never stops). */
  readonly loop?: boolean;
  /** Credential values to check, by lower-case header name (recorded as `expected` when equal). */
  readonly expectedCredentials?: Readonly<Record<string, string>>;
  /** Which headers are credentials; default: authorization, proxy-authorization, cookie, *api-key*, *token*. */
  readonly isCredentialHeader?: (lowerCaseName: string) => boolean;
  /** Pause between streamed events (default 0: all written at once). */
  readonly eventDelayMs?: number;
}

export type ModelHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface ModelServer {
  readonly handler: ModelHandler;
  /** Every request so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Appends entries to the script. */
  enqueue(...entries: ScriptEntry[]): void;
  /** Script entries not consumed yet. */
  remaining(): number;
  /** Replaces the script and forgets the recorded requests. */
  reset(script?: readonly ScriptEntry[]): void;
}

export interface ListeningModelServer extends ModelServer {
  /** `http://127.0.0.1:<port>` (or the host given). */
  readonly origin: string;
  readonly port: number;
  close(): Promise<void>;
}

const WIRES: Readonly<Record<WireStyle, WireModule>> = {
  'chat-completions': chatCompletions,
  responses,
  messages,
  'generate-content': generateContent,
  'converse-stream': converseStream,
};

const GENERATE = /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;
const CONVERSE = /\/model\/[^/]+\/converse$/;

/** The wire style a path belongs to. */
export function wireOf(path: string): WireStyle | undefined {
  if (path.endsWith('/chat/completions')) return 'chat-completions';
  if (path.endsWith('/responses')) return 'responses';
  if (path.endsWith('/messages')) return 'messages';
  if (GENERATE.test(path)) return 'generate-content';
  if (converseModelId(path) !== undefined) return 'converse-stream';
  return undefined;
}

function defaultIsCredential(name: string): boolean {
  return /^(?:authorization|proxy-authorization|cookie)$|api-key|token/.test(name);
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function stringField(body: unknown, name: string): string | undefined {
  const value = field(body, name);
  return typeof value === 'string' ? value : undefined;
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
}

function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function createModelServer(options: ModelServerOptions = {}): ModelServer {
  let script: ScriptEntry[] = [...(options.script ?? [])];
  let next = 0;
  const requests: RecordedRequest[] = [];
  const isCredential = options.isCredentialHeader ?? defaultIsCredential;
  const expected = options.expectedCredentials ?? {};
  const idPrefix = randomBytes(4).toString('hex');
  let idCounter = 0;
  const newId = (prefix: string): string => `${prefix}${idPrefix}${String(++idCounter).padStart(4, '0')}`;

  async function write(res: ServerResponse, reply: Reply): Promise<void> {
    if (reply.kind === 'json') {
      writeJson(res, reply.status, reply.body);
      return;
    }
    const chunks = reply.kind === 'sse' ? reply.events.map((event) => encodeSse(event)) : reply.frames;
    res.writeHead(
      200,
      reply.kind === 'sse'
        ? { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' }
        : { 'content-type': reply.contentType, ...reply.headers },
    );
    for (const chunk of chunks) {
      if (res.destroyed) return;
      res.write(chunk);
      if (options.eventDelayMs !== undefined && options.eventDelayMs > 0) await sleep(options.eventDelayMs);
    }
    res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = parseBody(Buffer.concat(chunks).toString('utf8'));
    const url = new URL(req.url ?? '/', 'http://model-server');
    const wire = wireOf(url.pathname);
    const headers: Record<string, string> = {};
    const credentials: Record<string, 'present' | 'expected'> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      const joined = Array.isArray(value) ? value.join(', ') : value;
      if (isCredential(name)) credentials[name] = expected[name] === joined ? 'expected' : 'present';
      else headers[name] = joined;
    }
    const generate = GENERATE.exec(url.pathname);
    const stream =
      wire === 'generate-content'
        ? generate?.[2] === 'streamGenerateContent'
        : wire === 'converse-stream' || field(body, 'stream') === true;
    const servable = req.method === 'POST' && wire !== undefined;
    let turn: number | undefined;
    if (servable && next < script.length) turn = next++;
    else if (servable && options.loop === true && script.length > 0) turn = script.length - 1;
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      wire,
      headers,
      credentials,
      body,
      stream,
      turn,
    };
    requests.push(recorded);

    if (req.method !== 'POST') {
      writeJson(res, 405, { error: { message: `method ${recorded.method} not allowed` } }, { allow: 'POST' });
      return;
    }
    if (wire === undefined) {
      const message = CONVERSE.test(url.pathname)
        ? 'converse is not served by this model server yet (converse-stream is)'
        : `no model endpoint at ${url.pathname}`;
      writeJson(res, CONVERSE.test(url.pathname) ? 501 : 404, { error: { message } });
      return;
    }
    const module = WIRES[wire];
    const entry = turn === undefined ? undefined : script[turn];
    if (entry === undefined) {
      writeJson(res, 500, module.errorBody(500, 'model server script exhausted'), module.errorHeaders?.(500));
      return;
    }
    const chosen: Turn = typeof entry === 'function' ? entry(recorded) : entry;
    if (chosen.type === 'error') {
      const message = chosen.message ?? `scripted error ${String(chosen.status)}`;
      writeJson(res, chosen.status, chosen.body ?? module.errorBody(chosen.status, message), {
        ...module.errorHeaders?.(chosen.status),
        ...chosen.headers,
      });
      return;
    }
    const context: ReplyContext = {
      model: generate?.[1] ?? converseModelId(url.pathname) ?? stringField(body, 'model') ?? 'unknown-model',
      stream,
      includeUsage: field(field(body, 'stream_options'), 'include_usage') === true,
      jsonArray: wire === 'generate-content' && stream && url.searchParams.get('alt') !== 'sse',
      newId,
      created: Math.floor(Date.now() / 1000),
    };
    await write(res, module.reply(chosen, context));
  }

  return {
    handler: (req, res) => {
      handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) writeJson(res, 500, { error: { message: String(error) } });
        else res.destroy();
      });
    },
    requests,
    enqueue: (...entries) => {
      script.push(...entries);
    },
    remaining: () => Math.max(0, script.length - next),
    reset: (replacement = []) => {
      script = [...replacement];
      next = 0;
      requests.length = 0;
    },
  };
}

/** Serves a new model server over HTTP on `host` (default loopback), on a free port. */
export async function startModelServer(
  options: ModelServerOptions = {},
  host = '127.0.0.1',
): Promise<ListeningModelServer> {
  const model = createModelServer(options);
  const server = createServer(model.handler);
  // An idle keep-alive connection stays open until `close` (Node's 5 s default would close it under a
  // client that, on a loaded machine, picks it for its next request at that moment: ECONNRESET).
  server.keepAliveTimeout = 0;
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    ...model,
    origin: `http://${host}:${String(port)}`,
    port,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
