/**
 * runtime_b's runner as sandboxd starts it, on the host: the built template's Node 24 runs the built
 * `runtime-b/runner.mjs` (`npm run template:agent` makes both) with the prompt on stdin and
 * `SDK_AGENT_CONFIG`, against the scripted model server, in a home and a working directory of the
 * test's own. What it prints is the NDJSON contract of templates/README.md, every line of which the
 * runtime_b parser accepts.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PARSE_OPTIONS } from '../../../runtime-drivers/run-accumulator.js';
import { parseRunnerLine } from '../../../runtime-drivers/runtime-b/events.js';
import {
  createModelServer,
  errorStatus,
  text,
  toolCall,
  type ModelServer,
  type RecordedRequest,
  type ScriptEntry,
} from '../../support/model-server/index.js';

const AGENTS = resolve(import.meta.dirname, '../../../templates/sdk-agent/build/opt-agents');
const NODE = join(AGENTS, 'node', 'bin', 'node');
const RUNNER = join(AGENTS, 'runtime-b', 'runner.mjs');
const PLACEHOLDER = 'sdk-placeholder';
/** Usage of every scripted turn: 120 in (20 of them cached), 7 out (3 of them reasoning). */
const USAGE = { input: 120, cacheRead: 20, output: 7, reasoning: 3 };
/** Usage with cache writes too: 130 in (20 read from the cache, 10 written to it), 7 out (3 reasoning). */
const FULL_USAGE = { input: 130, cacheRead: 20, cacheWrite: 10, output: 7, reasoning: 3 };
/** FULL_USAGE as a wire without cache writes reports it (they are input), made disjoint. */
const NO_CACHE_WRITE = { input: 110, output: 4, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 137 };
/** FULL_USAGE as a wire without reasoning reports it (it is output), made disjoint. */
const NO_REASONING = { input: 100, output: 7, reasoning: 0, cacheRead: 20, cacheWrite: 10, total: 137 };

type Json = Record<string, unknown>;
type Provider = 'vendor_a' | 'vendor_b' | 'vendor_c' | 'vendor_d' | 'vendor_e' | 'compatible';

interface Run {
  readonly code: number | null;
  readonly events: Json[];
  readonly stdout: string;
  readonly stderr: string;
  /** Milliseconds from spawn to the first model request (undefined when none came). */
  readonly firstRequestMs: number | undefined;
}

/** The scripted model server behind a listener that notes when each request arrives. */
interface World {
  readonly model: ModelServer;
  readonly origin: string;
  readonly arrivals: number[];
  readonly server: Server;
}

let world: World;
const timings: { name: string; firstRequestMs: number | undefined }[] = [];
const dirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

async function startWorld(): Promise<World> {
  const model = createModelServer({
    expectedCredentials: {
      authorization: `Bearer ${PLACEHOLDER}`,
      'x-api-key': PLACEHOLDER,
      'x-goog-api-key': PLACEHOLDER,
      'api-key': PLACEHOLDER,
    },
  });
  const arrivals: number[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    arrivals.push(performance.now());
    model.handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { model, origin: `http://127.0.0.1:${String(port)}`, arrivals, server };
}

/** The gateway base path of each provider (runtime_a's), as the driver puts it into `baseURL`. */
const BASE_PATH: Readonly<Record<Provider, string>> = {
  vendor_a: '',
  vendor_b: '/v1',
  vendor_c: '/v1',
  vendor_d: '/v1beta',
  vendor_e: '/vendor_c/v1',
  compatible: '/v1',
};

function modelConfig(provider: Provider, id = 'scripted-model'): Json {
  return {
    provider,
    id,
    baseURL: `${world.origin}${BASE_PATH[provider]}`,
    ...(provider === 'vendor_a' ? { region: 'us-east-1' } : {}),
  };
}

function config(workdir: string, extra: Json = {}): Json {
  return {
    model: modelConfig('compatible'),
    smallModel: 'scripted-model',
    subagents: {},
    permissions: { default: 'allow', tools: {} },
    reasoning: false,
    workdir,
    ...extra,
  };
}

/** Spawns the runner as sandboxd would and waits for it to exit. */
async function runRunner(
  name: string,
  options: { config: Json; home: string; prompt?: string; script?: readonly ScriptEntry[] },
): Promise<Run> {
  if (options.script !== undefined) world.model.reset(options.script);
  world.arrivals.length = 0;
  const workdir = String(options.config.workdir);
  const started = performance.now();
  const child = spawn(NODE, [RUNNER], {
    cwd: existsSync(workdir) ? workdir : options.home,
    env: {
      HOME: options.home,
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      SDK_AGENT_CONFIG: JSON.stringify(options.config),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.prompt ?? 'Write the file, then say done.');
  const [code] = (await once(child, 'close')) as [number | null];
  const first = world.arrivals[0];
  const firstRequestMs = first === undefined ? undefined : first - started;
  timings.push({ name, firstRequestMs });
  const lines = stdout.split('\n').filter((line) => line !== '');
  for (const line of lines) {
    expect(parseRunnerLine(line, { ...DEFAULT_PARSE_OPTIONS, reasoning: true }).kind, line).not.toBe(
      'dropped',
    );
  }
  return { code, events: lines.map((line) => JSON.parse(line) as Json), stdout, stderr, firstRequestMs };
}

const types = (run: Run): string[] => run.events.map((event) => String(event.type));
const toolCalls = (run: Run): Json[] => run.events.filter((event) => event.type === 'tool_call');
const requests = (): readonly RecordedRequest[] => world.model.requests;

/** Roles of the messages a chat-completions request carried. */
function roles(request: RecordedRequest | undefined): string[] {
  const messages = (request?.body as { messages?: { role: string }[] } | undefined)?.messages ?? [];
  return messages.map((message) => message.role);
}

function toolNames(request: RecordedRequest | undefined): string[] {
  const tools = (request?.body as { tools?: { function: { name: string } }[] } | undefined)?.tools ?? [];
  return tools.map((tool) => tool.function.name);
}

beforeAll(async () => {
  if (!existsSync(NODE) || !existsSync(RUNNER)) {
    throw new Error(`${RUNNER} or ${NODE} is missing: run npm run template:agent first`);
  }
  world = await startWorld();
});

afterAll(() => {
  world.server.closeAllConnections();
  world.server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  // Spawn → first model request, for the record (templates/README.md).
  console.log(
    timings
      .map(
        ({ name, firstRequestMs }) =>
          `${name}: ${firstRequestMs === undefined ? '-' : firstRequestMs.toFixed(0)} ms`,
      )
      .join('\n'),
  );
});

describe('runtime_b runner', () => {
  it('compatible: a bash call writes a real file, then text; usage streamed and made disjoint', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('compatible (cold)', {
      home,
      config: config(workdir),
      script: [
        toolCall('execute', { command: 'echo hello > made.txt && echo written' }, { usage: USAGE }),
        text('All done.', USAGE),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'made.txt'), 'utf8')).toBe('hello\n');
    const usage = { input: 100, output: 4, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 127 };
    expect(run.events[0]).toEqual({
      type: 'session',
      sessionId: expect.stringMatching(/^rda_[0-9a-f]{32}$/) as unknown,
    });
    expect(run.events.slice(1)).toEqual([
      { type: 'step_started' },
      { type: 'step_finished', usage },
      {
        type: 'tool_call',
        name: 'bash',
        status: 'completed',
        input: { command: 'echo hello > made.txt && echo written' },
        output: 'written\n\n[Command succeeded with exit code 0]',
      },
      { type: 'step_started' },
      { type: 'text_delta', text: 'All ' },
      { type: 'text_delta', text: 'done.' },
      { type: 'text', text: 'All done.' },
      { type: 'step_finished', usage },
    ]);
    const [first, second] = requests();
    expect(first?.path).toBe('/v1/chat/completions');
    expect((first?.body as Json).stream_options).toEqual({ include_usage: true });
    expect(first?.credentials).toEqual({ authorization: 'expected' });
    expect(roles(first)).toEqual(['system', 'user']);
    expect(toolNames(first).sort()).toEqual(
      [
        'delete',
        'edit_file',
        'execute',
        'glob',
        'grep',
        'ls',
        'read_file',
        'task',
        'write_file',
        'write_todos',
      ].sort(),
    );
    expect(roles(second)).toEqual(['system', 'user', 'assistant', 'tool']);
    // Nothing but the checkpoints (and Node's compile cache) in the home.
    expect(existsSync(join(home, '.local', 'share', 'sdk-runtime-b', 'checkpoints.db'))).toBe(true);
  });

  it('the file tools work on the working directory, seen as /', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('file tools', {
      home,
      config: config(workdir),
      script: [
        toolCall('write_file', { file_path: '/dir/a.txt', content: 'hello world\n' }),
        toolCall('edit_file', { file_path: '/dir/a.txt', old_string: 'world', new_string: 'there' }),
        toolCall('read_file', { file_path: '/dir/a.txt' }),
        toolCall('grep', { pattern: 'hello', path: '/' }),
        toolCall('glob', { pattern: '**/*.txt' }),
        toolCall('ls', { path: '/dir' }),
        toolCall('write_todos', { todos: [{ content: 'check', status: 'completed' }] }),
        text('Done.'),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'dir', 'a.txt'), 'utf8')).toBe('hello there\n');
    const calls = toolCalls(run);
    expect(calls.map((call) => [call.name, call.status])).toEqual([
      ['edit', 'completed'],
      ['edit', 'completed'],
      ['read', 'completed'],
      ['grep', 'completed'],
      ['glob', 'completed'],
      ['list', 'completed'],
      ['todowrite', 'completed'],
    ]);
    expect(calls[2]?.output).toContain('hello there');
    expect(calls[3]?.output).toContain('/dir/a.txt');
    expect(calls[4]?.output).toContain('/dir/a.txt');
    expect(calls[5]?.output).toContain('/dir/a.txt');
  });

  it('starts faster once its compile cache is warm', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    for (const round of [1, 2, 3]) {
      const run = await runRunner(`compatible (warm ${String(round)})`, {
        home,
        config: config(workdir),
        script: [text('ok', USAGE)],
      });
      expect(run.code, run.stderr).toBe(0);
    }
  });

  // Each provider through its base path: a bash call and a text, with the placeholder as the only key,
  // and the usage each wire can carry made disjoint (LangChain's own sums put right).
  const PROVIDER_CASES: readonly {
    provider: Provider;
    id: string;
    path: string;
    credentials: Record<string, 'expected'>;
    usage: Json;
  }[] = [
    {
      provider: 'vendor_a',
      id: 'vendor-a.model-v1:0',
      path: '/model/vendor-a.model-v1%3A0/converse-stream',
      credentials: { authorization: 'expected' },
      usage: NO_REASONING,
    },
    {
      provider: 'vendor_b',
      id: 'model-b',
      path: '/v1/messages',
      credentials: { 'x-api-key': 'expected' },
      usage: NO_REASONING,
    },
    {
      provider: 'vendor_c',
      id: 'model-c',
      path: '/v1/responses',
      credentials: { authorization: 'expected' },
      usage: NO_CACHE_WRITE,
    },
    {
      provider: 'vendor_d',
      id: 'model-d',
      path: '/v1beta/models/model-d:streamGenerateContent',
      credentials: { 'x-goog-api-key': 'expected' },
      usage: NO_CACHE_WRITE,
    },
    {
      provider: 'vendor_e',
      id: 'model-e',
      path: '/vendor_c/v1/responses',
      credentials: { authorization: 'expected', 'api-key': 'expected' },
      usage: NO_CACHE_WRITE,
    },
    {
      provider: 'compatible',
      id: 'model-f',
      path: '/v1/chat/completions',
      credentials: { authorization: 'expected' },
      usage: NO_CACHE_WRITE,
    },
  ];

  it.each(PROVIDER_CASES)('$provider reaches $path', async ({ provider, id, path, credentials, usage }) => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner(provider, {
      home,
      config: config(workdir, { model: modelConfig(provider, id) }),
      script: [
        toolCall('execute', { command: `echo ${provider} > made.txt` }, { usage: FULL_USAGE }),
        text('Done.', FULL_USAGE),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'made.txt'), 'utf8')).toBe(`${provider}\n`);
    expect(requests().map((request) => request.path)).toEqual([path, path]);
    for (const request of requests()) expect(request.credentials).toEqual(credentials);
    expect(types(run)).toEqual([
      'session',
      'step_started',
      'step_finished',
      'tool_call',
      'step_started',
      ...types(run).slice(5, -2),
      'text',
      'step_finished',
    ]);
    expect(run.events.at(-2)).toEqual({ type: 'text', text: 'Done.' });
    expect(toolCalls(run)).toEqual([
      expect.objectContaining({
        name: 'bash',
        status: 'completed',
        input: { command: `echo ${provider} > made.txt` },
      }),
    ]);
    expect(run.events.filter((event) => event.type === 'step_finished')).toEqual([
      { type: 'step_finished', usage },
      { type: 'step_finished', usage },
    ]);
  });

  it('continues a session in a second process: the second request carries the first conversation', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const sessionId = `rda_${'0123456789abcdef'.repeat(2)}`;
    const first = await runRunner('session, first', {
      home,
      config: config(workdir, { sessionId }),
      prompt: 'first prompt',
      script: [toolCall('execute', { command: 'echo one > one.txt' }), text('First answer.')],
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.events[0]).toEqual({ type: 'session', sessionId });
    const second = await runRunner('session, second', {
      home,
      config: config(workdir, { sessionId }),
      prompt: 'second prompt',
      script: [text('Second answer.')],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.events[0]).toEqual({ type: 'session', sessionId });
    const [request] = requests();
    expect(roles(request)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const messages = (request?.body as { messages: { content: unknown }[] }).messages;
    expect(JSON.stringify(messages)).toContain('first prompt');
    expect(JSON.stringify(messages)).toContain('First answer.');
    expect(messages.at(-1)?.content).toBe('second prompt');
  });

  it('permissions: a denied bash is not offered, and a call to it is refused', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('bash denied', {
      home,
      config: config(workdir, {
        permissions: { default: 'allow', tools: { bash: 'deny', todowrite: 'deny' } },
      }),
      script: [toolCall('execute', { command: 'echo no > denied.txt' }), text('Could not.')],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(workdir, 'denied.txt'))).toBe(false);
    expect(toolNames(requests()[0])).not.toContain('execute');
    expect(toolNames(requests()[0])).not.toContain('write_todos');
    expect(toolNames(requests()[0])).toContain('read_file');
    expect(toolCalls(run)).toEqual([
      {
        type: 'tool_call',
        name: 'bash',
        status: 'error',
        input: { command: 'echo no > denied.txt' },
        output: 'permission denied: the bash tool is not allowed',
      },
    ]);
  });

  it('permissions: bash patterns, last match wins, the default when none matches', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('bash patterns', {
      home,
      config: config(workdir, {
        permissions: {
          default: 'deny',
          tools: { read: 'allow', bash: { '*': 'deny', 'echo *': 'allow', 'echo secret*': 'deny' } },
        },
      }),
      script: [
        toolCall('execute', { command: 'echo fine > fine.txt' }),
        toolCall('execute', { command: 'echo secret > secret.txt' }),
        toolCall('execute', { command: 'touch other.txt' }),
        toolCall('ls', { path: '/' }),
        text('Done.'),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(workdir, 'fine.txt'))).toBe(true);
    expect(existsSync(join(workdir, 'secret.txt'))).toBe(false);
    expect(existsSync(join(workdir, 'other.txt'))).toBe(false);
    // default deny: only read and bash are offered.
    expect(toolNames(requests()[0]).sort()).toEqual(['execute', 'read_file']);
    expect(toolCalls(run).map((call) => [call.name, call.status])).toEqual([
      ['bash', 'completed'],
      ['bash', 'error'],
      ['bash', 'error'],
      ['list', 'error'],
    ]);
  });

  it('subagents from the configuration, with permissions of their own; their text stays in the task output', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('subagent', {
      home,
      config: config(workdir, {
        subagents: {
          reviewer: {
            description: 'Reviews changes.',
            instructions: 'REVIEWER PROMPT.',
            permissions: { default: 'allow', tools: { bash: 'deny' } },
          },
        },
      }),
      script: [
        toolCall('task', { description: 'review it', subagent_type: 'reviewer' }),
        toolCall('execute', { command: 'echo sub > sub.txt' }),
        text('Reviewed: fine.'),
        toolCall('execute', { command: 'echo main > main.txt' }),
        text('All done.'),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    const [, subFirst] = requests();
    const system = (subFirst?.body as { messages: { role: string; content: unknown }[] }).messages[0];
    expect(JSON.stringify(system?.content)).toContain('REVIEWER PROMPT.');
    expect(toolNames(requests()[0])).toContain('execute');
    expect(toolNames(subFirst)).not.toContain('execute');
    expect(existsSync(join(workdir, 'sub.txt'))).toBe(false);
    expect(existsSync(join(workdir, 'main.txt'))).toBe(true);
    expect(toolCalls(run).map((call) => [call.name, call.status, call.output])).toEqual([
      ['bash', 'error', 'permission denied: the bash tool is not allowed'],
      ['task', 'completed', 'Reviewed: fine.'],
      ['bash', 'completed', '<no output>\n[Command succeeded with exit code 0]'],
    ]);
    expect(run.events.filter((event) => event.type === 'text')).toEqual([
      { type: 'text', text: 'All done.' },
    ]);
    expect(types(run).filter((type) => type === 'step_started')).toHaveLength(5);
  });

  const ENTRYPOINT = (withMiddleware: boolean): string => `
import { createDeepAgent } from 'deepagents';
export async function build(context) {
  if (typeof context.workdir !== 'string' || typeof context.checkpointer?.put !== 'function') throw new Error('bad context');
  return createDeepAgent({
    model: context.model,
    systemPrompt: 'ENTRYPOINT PROMPT. ' + context.instructions,
    backend: context.backend,
    subagents: context.subagents,
    middleware: ${withMiddleware ? '[context.permissionMiddleware]' : '[]'},
    checkpointer: context.checkpointer,
  });
}
`;

  it.each([
    [true, false],
    [false, true],
  ])(
    'an entrypoint builds the graph (with the middleware: %s, bash runs despite a deny: %s)',
    async (withMiddleware, ran) => {
      const home = tempDir('rb-home-');
      const workdir = tempDir('rb-work-');
      mkdirSync(join(workdir, 'agent'));
      writeFileSync(join(workdir, 'agent', 'graph.mjs'), ENTRYPOINT(withMiddleware));
      const run = await runRunner(`entrypoint (middleware ${String(withMiddleware)})`, {
        home,
        config: config(workdir, {
          entrypoint: 'agent.graph:build',
          permissions: { default: 'allow', tools: { bash: 'deny' } },
        }),
        script: [toolCall('execute', { command: 'echo ran > ran.txt' }), text('Done.')],
      });
      expect(run.code, run.stderr).toBe(0);
      const system = (requests()[0]?.body as { messages: { role: string; content: unknown }[] }).messages[0];
      expect(JSON.stringify(system?.content)).toContain('ENTRYPOINT PROMPT.');
      expect(existsSync(join(workdir, 'ran.txt'))).toBe(ran);
      expect(toolCalls(run).map((call) => call.status)).toEqual([ran ? 'completed' : 'error']);
    },
  );

  it('an entrypoint graph compiled without a checkpointer still keeps its session', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    mkdirSync(join(workdir, 'agent'));
    writeFileSync(
      join(workdir, 'agent', 'bare.mjs'),
      [
        "import { createDeepAgent } from 'deepagents';",
        'export const build = ({ model, instructions, backend, permissionMiddleware }) =>',
        '  createDeepAgent({ model, systemPrompt: instructions, backend, middleware: [permissionMiddleware] });',
        '',
      ].join('\n'),
    );
    const sessionId = `rda_${'fedcba9876543210'.repeat(2)}`;
    const entry = { entrypoint: 'agent.bare:build', sessionId };
    const first = await runRunner('entrypoint session, first', {
      home,
      config: config(workdir, entry),
      prompt: 'remember this',
      script: [text('Remembered.')],
    });
    expect(first.code, first.stderr).toBe(0);
    const second = await runRunner('entrypoint session, second', {
      home,
      config: config(workdir, entry),
      prompt: 'what was it?',
      script: [text('This.')],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(roles(requests()[0])).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('an entrypoint that is not there fails with EntrypointError', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('entrypoint missing', {
      home,
      config: config(workdir, { entrypoint: 'nowhere.graph:build' }),
      script: [],
    });
    expect(run.code).toBe(1);
    expect(run.events.slice(1)).toEqual([{ type: 'error', name: 'EntrypointError', statusCode: null }]);
    expect(requests()).toEqual([]);
  });

  it('a model error ends the run with the error class and status, never its message', async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('401', {
      home,
      config: config(workdir),
      script: [errorStatus(401, { message: 'vendor text that must not leak' })],
    });
    expect(run.code).toBe(1);
    expect(run.events.slice(1)).toEqual([
      { type: 'step_started' },
      { type: 'error', name: 'AuthenticationError', statusCode: 401 },
    ]);
    expect(run.stdout).not.toContain('vendor text');
  });

  it("a subagent's model error ends the run the same way, its message nowhere on stdout", async () => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner('subagent 401', {
      home,
      config: config(workdir),
      script: [
        toolCall('task', { description: 'look', subagent_type: 'general-purpose' }),
        errorStatus(401, { message: 'vendor text that must not leak' }),
      ],
    });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('vendor text');
    expect(toolCalls(run)).toEqual([
      {
        type: 'tool_call',
        name: 'task',
        status: 'error',
        input: { description: 'look', subagent_type: 'general-purpose' },
        output: 'the tool failed',
      },
    ]);
    expect(run.events.at(-1)).toEqual({ type: 'error', name: 'AuthenticationError', statusCode: 401 });
  });

  it('a configuration it cannot use fails with ConfigError before anything else', async () => {
    const home = tempDir('rb-home-');
    const run = await runRunner('bad config', {
      home,
      config: { model: { provider: 'nobody', id: 'x', baseURL: world.origin }, workdir: home },
    });
    expect(run.code).toBe(1);
    expect(run.events).toEqual([{ type: 'error', name: 'ConfigError', statusCode: null }]);
  });
});

describe('runtime_b runner reasoning', () => {
  /** A chat-completions stream with `reasoning_content` deltas (what compatible servers send). */
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: Json, finish: string | null = null): void => {
          const body = {
            id: 'chatcmpl-r1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [{ index: 0, delta, finish_reason: finish }],
          };
          res.write(`data: ${JSON.stringify(body)}\n\n`);
        };
        chunk({ role: 'assistant', reasoning_content: 'Thinking ' });
        chunk({ reasoning_content: 'hard.' });
        chunk({ content: 'Answer.' });
        chunk({}, 'stop');
        res.end('data: [DONE]\n\n');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it.each([true, false])('reasoning: %s', async (reasoning) => {
    const home = tempDir('rb-home-');
    const workdir = tempDir('rb-work-');
    const run = await runRunner(`reasoning ${String(reasoning)}`, {
      home,
      config: config(workdir, {
        reasoning,
        model: { provider: 'compatible', id: 'm', baseURL: `${origin}/v1` },
      }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.events.filter((event) => event.type === 'reasoning' || event.type === 'text')).toEqual([
      ...(reasoning ? [{ type: 'reasoning', text: 'Thinking hard.' }] : []),
      { type: 'text', text: 'Answer.' },
    ]);
  });
});
