/**
 * A fake sandbox for the SDK agent's unit tests: one node:http server on 127.0.0.1 answering as both
 * the control plane (create, connect, kill) and sandboxd (version, gateways, and the agent
 * endpoints of `protocol/agent-wire.ts` in their wire format). Tests script what an execution sends
 * (`onPrompt`), refuse starts, forget configurations, end the sandbox, and read every request made.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  agentConfigSchema,
  startExecutionSchema,
  type AgentEvent,
  type AgentWireLine,
  type ExecutionSummary,
  type StartExecution,
} from '../../../protocol/agent-wire.js';
import type { ErrorEnvelope } from '../../../protocol/error-envelope.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, vi } from 'vitest';
import {
  AgentModel,
  AgentSpec,
  Sandbox,
  SecretCache,
  SecretStore,
  vendorBGateway,
  type SecretGateway,
} from '../../../sdk/index.js';
import { fakeSandboxInfo } from './fake-sandbox-info.js';

/** One request the fake received. */
export interface FakeRequest {
  readonly method: string;
  /** Path with query. */
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: string;
}

/** The summary of a normal end, for scripts. */
export const SUMMARY: ExecutionSummary = {
  text: 'all done',
  sessionId: 'ses_fake1',
  steps: 1,
  usage: { input: 10, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 15 },
  exitCode: 0,
  toolCalls: [{ name: 'bash', status: 'completed', input: { command: 'ls' }, output: 'a\n' }],
  droppedLines: 0,
};

/** One execution of the fake: its lines so far and the responses reading them live. */
export class FakeExecution {
  readonly lines: AgentWireLine[] = [];
  readonly #readers = new Set<ServerResponse>();
  ended = false;
  aborted = false;
  prompt: string | undefined;

  constructor(
    readonly id: string,
    readonly start: StartExecution,
  ) {}

  /** Readers connected now. */
  get readers(): number {
    return this.#readers.size;
  }

  /** The `session` line. */
  session(sessionId: string): void {
    this.push({ seq: this.lines.length + 1, session: sessionId });
  }

  /** An event line; the last one (done, agent_failed) ends the execution. */
  event(event: AgentEvent, summary?: ExecutionSummary): void {
    this.push({ seq: this.lines.length + 1, event, ...(summary === undefined ? {} : { summary }) });
    if (event.type === 'done' || event.type === 'agent_failed') this.end();
  }

  /** A raw line to every reader (kept for later readers unless it is a keepalive). */
  push(line: AgentWireLine): void {
    if (!('keepalive' in line)) this.lines.push(line);
    for (const reader of this.#readers) reader.write(`${JSON.stringify(line)}\n`);
  }

  /** A line as is, to the readers connected now (for malformed lines). */
  raw(text: string): void {
    for (const reader of this.#readers) reader.write(`${text}\n`);
  }

  /** Ends every reader's response (with no last event unless one was sent). */
  end(): void {
    this.ended = true;
    for (const reader of this.#readers) reader.end();
    this.#readers.clear();
  }

  /** Serves the lines after `after`, then the live ones until the end. */
  serve(res: ServerResponse, after: number): void {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const line of this.lines) {
      if ('seq' in line && line.seq > after) res.write(`${JSON.stringify(line)}\n`);
    }
    if (this.ended) {
      res.end();
      return;
    }
    this.#readers.add(res);
    res.on('close', () => this.#readers.delete(res));
  }
}

/** A normal execution: session, a step with text and a tool call, done with `SUMMARY`. */
export function completeScript(execution: FakeExecution): void {
  execution.session(SUMMARY.sessionId);
  execution.event({ type: 'step_started' });
  execution.event({
    type: 'tool_call',
    name: 'bash',
    status: 'completed',
    input: { command: 'ls' },
    output: 'a\n',
  });
  execution.event({ type: 'text', text: 'all done' });
  execution.event({ type: 'step_finished', usage: SUMMARY.usage });
  execution.event({ type: 'done' }, SUMMARY);
}

/** An execution that stays open after its first step until the test (or an abort) ends it. */
export function holdScript(execution: FakeExecution): void {
  execution.session('ses_held');
  execution.event({ type: 'step_started' });
}

const SANDBOX_ID = 'abcdef012345';

/** The fake sandbox. */
export class FakeSandboxd {
  readonly sandboxId = SANDBOX_ID;
  readonly accessToken = 'sandbox-token-1';
  readonly requests: FakeRequest[] = [];
  /** Configuration hashes held (cleared: a restarted daemon). */
  readonly configs = new Set<string>();
  readonly executions = new Map<string, FakeExecution>();
  /** Gateway routes and their listener ports (state of `GET /v1/gateways`). */
  routes: Record<string, number> = { llm: 41001 };
  /** The sandbox ended: the control plane and its daemon proxy refuse every call but create and kill. */
  ended = false;
  /** The next starts are refused with this envelope. */
  refuseStart: ErrorEnvelope | undefined;
  /** `POST /v1/agent/prepare` answers 500. */
  failPrepare = false;
  /** What an execution sends once its prompt arrives. */
  onPrompt: (execution: FakeExecution) => void = completeScript;
  #next = 1;
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Starts a fake on a free loopback port. */
  static async start(): Promise<FakeSandboxd> {
    const server = createServer();
    const fake = new FakeSandboxd(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void fake.#handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** The requests to sandboxd's agent endpoints, as `METHOD path`. */
  agentCalls(): string[] {
    return this.requests.filter((r) => r.path.startsWith('/v1/agent')).map((r) => `${r.method} ${r.path}`);
  }

  /** The execution started last. */
  last(): FakeExecution {
    const last = [...this.executions.values()].at(-1);
    if (last === undefined) throw new Error('no execution yet');
    return last;
  }

  /** The running execution's id, or null. */
  current(): string | null {
    return [...this.executions.values()].find((e) => !e.ended)?.id ?? null;
  }

  async close(): Promise<void> {
    for (const execution of this.executions.values()) execution.end();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? 'GET', path, contentType: req.headers['content-type'], body });
    const route = `${req.method ?? 'GET'} ${path.split('?')[0] ?? ''}`;
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const envelope = (status: number, e: ErrorEnvelope): void => json(status, e);
    const plane = route.match(/^(POST|DELETE) \/v1\/sandboxes(?:\/([a-f0-9]{12})(?:\/(\w+))?)?$/);
    // An ended sandbox: the control plane refuses its calls, and its daemon proxy every daemon call.
    if (this.ended && (plane === null || plane[3] !== undefined)) {
      envelope(409, { code: 'sandbox_ended', message: `sandbox ${SANDBOX_ID} has ended` });
      return;
    }
    if (plane !== null) {
      json(200, {
        ...this.#info(plane[1] === 'DELETE' ? 'ended' : 'running'),
        ...(plane[2] === undefined || plane[3] === 'connect'
          ? { daemonUrl: this.url, previewUrl: `${this.url}/preview/{port}/`, previewKey: 'preview-key' }
          : {}),
        ...(plane[2] === undefined ? { accessToken: this.accessToken } : {}),
      });
      return;
    }
    if (route === 'GET /v1/version') {
      json(200, { version: '0.10.0' });
      return;
    }
    if (route === 'GET /v1/gateways' || route === 'POST /v1/gateways') {
      if (route === 'POST /v1/gateways') {
        const names = Object.keys((JSON.parse(body) as { routes: Record<string, unknown> }).routes);
        this.routes = Object.fromEntries(names.map((name, i) => [name, this.routes[name] ?? 41001 + i]));
      }
      json(200, {
        routes: Object.fromEntries(
          Object.entries(this.routes).map(([name, port]) => [
            name,
            { port, url: `http://127.0.0.1:${port}`, lastErrorClass: null },
          ]),
        ),
      });
      return;
    }
    if (route === 'PUT /v1/agent/config') {
      const config = agentConfigSchema.parse(JSON.parse(body));
      this.configs.add(config.hash);
      json(200, { hash: config.hash });
      return;
    }
    if (route === 'POST /v1/agent/prepare') {
      if (this.failPrepare) {
        envelope(500, { code: 'sandbox_error', message: 'prepare failed' });
        return;
      }
      json(200, {});
      return;
    }
    if (route === 'GET /v1/agent/executions') {
      json(200, {
        current: this.current(),
        executions: [...this.executions.values()].map((e) => ({
          executionId: e.id,
          runtime: 'runtime_a',
          state: e.ended ? 'ended' : 'running',
          startedAt: 1,
          steps: 0,
          totalTokens: 0,
          limits: e.start.limits,
          outcome: null,
        })),
      });
      return;
    }
    if (route === 'POST /v1/agent/executions') {
      const start = startExecutionSchema.parse(JSON.parse(body));
      if (this.refuseStart !== undefined) {
        envelope(500, this.refuseStart);
        return;
      }
      if (!this.configs.has(start.configHash)) {
        envelope(404, {
          code: 'agent_config_missing',
          message: 'no agent configuration with this hash: write it first',
        });
        return;
      }
      const id = `exe_${String(this.#next++)}`;
      this.executions.set(id, new FakeExecution(id, start));
      json(200, { executionId: id });
      return;
    }
    const execution = route.match(/^(GET|POST) \/v1\/agent\/executions\/([^/]+)\/(prompt|events|abort)$/);
    const found = execution === null ? undefined : this.executions.get(execution[2] ?? '');
    if (execution === null || found === undefined) {
      envelope(404, { code: 'not_found', message: 'no such endpoint or execution' });
      return;
    }
    if (execution[3] === 'abort') {
      found.aborted = true;
      if (!found.ended)
        found.event({ type: 'agent_failed', reason: 'aborted' }, { ...SUMMARY, exitCode: null });
      json(200, {});
      return;
    }
    if (execution[3] === 'events') {
      const after = Number(new URL(path, 'http://x').searchParams.get('after') ?? '0');
      found.serve(res, after);
      return;
    }
    found.prompt = body;
    found.serve(res, 0);
    this.onPrompt(found);
  }

  #info(state: 'running' | 'ended'): Record<string, unknown> {
    return fakeSandboxInfo(SANDBOX_ID, state, 'sdk-agent', false);
  }
}

/** The secret value behind every gateway of `createdHandle`: no error may ever carry it. */
export const SECRET_VALUE = 'sk-live-0123456789-SECRET';

/** A handle from `Sandbox.connect` (gateway state only, as in another process). */
export function connectedHandle(fake: FakeSandboxd): Promise<Sandbox> {
  return Sandbox.connect(fake.sandboxId, { accessToken: fake.accessToken, controlPlaneUrl: fake.url });
}

/**
 * The creating handle of a sandbox with `gateways` (definitions and presets known), their secret
 * `SECRET_VALUE` read from a local store in a temporary folder.
 */
export async function createdHandle(
  fake: FakeSandboxd,
  gateways: Record<string, SecretGateway>,
): Promise<Sandbox> {
  vi.stubEnv('SDK_API_KEY', 'operator-key');
  const dir = mkdtempSync(join(tmpdir(), 'sdk-agent-unit-'));
  try {
    const store = new SecretStore({ file: join(dir, 'secrets.json') });
    const names = new Set(Object.values(gateways).flatMap((g) => Object.values(g.headers)));
    for (const name of names) if (typeof name === 'string') await store.create(name, SECRET_VALUE);
    return await Sandbox.create({
      template: 'sdk-agent',
      allowInternetAccess: false,
      gateways,
      secretCache: new SecretCache({ store }),
      controlPlaneUrl: fake.url,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    vi.unstubAllEnvs();
  }
}

/** A spec on gateway `llm` with provider vendor_b, model `model-1`. */
export const VENDOR_B_SPEC = new AgentSpec({
  model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }),
});

/** Every event of a stream, in order. */
export async function allEvents(stream: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A fake sandboxd per test and a created handle on it with gateway `llm` (vendor_b preset). */
export function useFakeSandboxd(): { readonly fake: FakeSandboxd; readonly sbx: Sandbox } {
  let fake: FakeSandboxd | undefined;
  let sbx: Sandbox | undefined;
  beforeEach(async () => {
    fake = await FakeSandboxd.start();
    sbx = await createdHandle(fake, { llm: vendorBGateway('vendor-b-key') });
  });
  afterEach(() => fake?.close());
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the fake sandboxd is not set up');
    return value;
  };
  return {
    get fake() {
      return need(fake);
    },
    get sbx() {
      return need(sbx);
    },
  };
}
