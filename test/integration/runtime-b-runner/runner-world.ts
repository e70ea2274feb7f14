/**
 * The world of the runtime_b runner's tests: the built template's Node 24 and runner (`npm run
 * template:agent` makes both), the scripted model server behind a listener that notes arrivals, temp
 * homes and working directories, and `runRunner`, which starts the runner as sandboxd would.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, onTestFinished } from 'vitest';
import { DEFAULT_PARSE_OPTIONS } from '../../../runtime-drivers/run-accumulator.js';
import { OPENCODE_PROVIDERS } from '../../../runtime-drivers/runtime-a/providers.js';
import { parseRunnerLine } from '../../../runtime-drivers/runtime-b/events.js';
import {
  createModelServer,
  type ModelServer,
  type RecordedRequest,
  type ScriptEntry,
} from '../../support/model-server/index.js';

const AGENTS = resolve(import.meta.dirname, '../../../templates/sdk-agent/build/opt-agents');
export const NODE = join(AGENTS, 'node', 'bin', 'node');
export const RUNNER = join(AGENTS, 'runtime-b', 'runner.mjs');
export const PLACEHOLDER = 'sdk-placeholder';
/** Usage of every scripted turn: 120 in (20 of them cached), 7 out (3 of them reasoning). */
export const USAGE = { input: 120, cacheRead: 20, output: 7, reasoning: 3 };
/** Usage with cache writes too: 130 in (20 read from the cache, 10 written to it), 7 out (3 reasoning). */
export const FULL_USAGE = { input: 130, cacheRead: 20, cacheWrite: 10, output: 7, reasoning: 3 };
/** FULL_USAGE as a wire without cache writes reports it (they are input), made disjoint. */
export const NO_CACHE_WRITE = {
  input: 110,
  output: 4,
  reasoning: 3,
  cacheRead: 20,
  cacheWrite: 0,
  total: 137,
};
/** FULL_USAGE as a wire without reasoning reports it (it is output), made disjoint. */
export const NO_REASONING = {
  input: 100,
  output: 7,
  reasoning: 0,
  cacheRead: 20,
  cacheWrite: 10,
  total: 137,
};

export type Json = Record<string, unknown>;
export type Provider = 'vendor_a' | 'vendor_b' | 'vendor_c' | 'vendor_d' | 'vendor_e' | 'compatible';

export interface Run {
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

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A fresh home and working directory for one run (removed after the file). */
export function runnerDirs(): { home: string; workdir: string } {
  return { home: tempDir('rb-home-'), workdir: tempDir('rb-work-') };
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

export function modelConfig(provider: Provider, id = 'scripted-model'): Json {
  return {
    provider,
    id,
    baseURL: `${world.origin}${provider === 'compatible' ? '/v1' : OPENCODE_PROVIDERS[provider].basePath}`,
    ...(provider === 'vendor_a' ? { region: 'us-east-1' } : {}),
  };
}

export function config(workdir: string, extra: Json = {}): Json {
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
export async function runRunner(
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
  const closed = once(child, 'close') as Promise<[number | null]>;
  // A test that ends early (a failure, a timeout) ends its runner before the next test starts, so a
  // runner left behind never takes the next test's scripted turns.
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await closed;
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(options.prompt ?? 'Write the file, then say done.');
  const [code] = await closed;
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

export const types = (run: Run): string[] => run.events.map((event) => String(event.type));
export const toolCalls = (run: Run): Json[] => run.events.filter((event) => event.type === 'tool_call');
export const requests = (): readonly RecordedRequest[] => world.model.requests;
/** The scripted model server's origin (`http://127.0.0.1:<port>`). */
export const modelOrigin = (): string => world.origin;

/** Roles of the messages a chat-completions request carried. */
export function roles(request: RecordedRequest | undefined): string[] {
  const messages = (request?.body as { messages?: { role: string }[] } | undefined)?.messages ?? [];
  return messages.map((message) => message.role);
}

/** Registers the hooks that start and stop the world (one per test file). */
export function useRunnerWorld(): void {
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
}
