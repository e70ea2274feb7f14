/**
 * The E2B shim's `sbx.pty` on the native terminals, without a sandbox: every argument checked before any
 * call; what `create` asks sandboxd for (E2B's `/bin/bash -i -l`, its size, E2B's `TERM` / `LANG` /
 * `LC_ALL` under the program's `envs`, the account's home, E2B's 60 s deadline); `onData` getting bytes;
 * `wait()` in E2B's shape (`CommandExitError` for a non-zero exit or a signal); the calls by pid going
 * through one stream per terminal; `kill` false for a terminal that does not run. A recording HTTP
 * server stands where the control plane and sandboxd would be; each terminal's event stream stays open
 * until the test ends it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CommandExitError,
  InvalidArgumentError,
  NotFoundError,
  NotSupportedError,
  Sandbox,
  SandboxError,
  TimeoutError,
} from '../../sdk/compat/e2b/index.js';
import { processInfoOf } from '../../sdk/compat/e2b/command-line.js';
import { fakeSandboxInfo } from './sdk/fake-sandbox-info.js';

const SBX = '0123456789ab';
const PID = 42;

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly body: unknown;
}

let server: Server;
let url: string;
/** The daemon's requests (the control plane's `activity` left out). */
const requests: Recorded[] = [];
/** Open event streams by pid; a terminal runs until `end` closes them. */
const streams = new Map<number, ServerResponse[]>();
const running = new Set<number>();
/** The bytes each new stream of a pid shows after its start. */
const screens = new Map<number, string>();

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  if (raw.length === 0) return undefined;
  return req.headers['content-type']?.startsWith('application/json') === true
    ? (JSON.parse(raw.toString('utf8')) as unknown)
    : raw.toString('utf8');
}

const line = (res: ServerResponse, event: object): boolean => res.write(`${JSON.stringify(event)}\n`);

/** Ends terminal `pid` as sandboxd reports it: its exit code, or the signal that ended it. */
function end(pid: number, exitCode: number | null, signal: string | null = null): void {
  running.delete(pid);
  for (const res of streams.get(pid) ?? []) {
    line(res, { type: 'end', exitCode, signal, seq: 3 });
    res.end();
  }
  streams.delete(pid);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      const method = req.method ?? '';
      const path = req.url ?? '';
      const send = (status: number, answer: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      };
      const info = fakeSandboxInfo(SBX, 'running');
      if (path.startsWith(`/v1/sandboxes/${SBX}`)) {
        if (path.endsWith('/connect')) send(200, { ...info, daemonUrl: url, previewUrl: `${url}/{port}/` });
        else send(200, info);
        return;
      }
      if (path !== '/v1/gateways') requests.push({ method, url: path, body });
      const events = /^\/v1\/processes\/(\d+)\/events$/.exec(path);
      if (method === 'POST' && path === '/v1/processes') {
        running.add(PID);
        send(200, { pid: PID });
      } else if (method === 'GET' && path === '/v1/processes') {
        send(
          200,
          [...running].map((pid) => ({ pid, cmd: 'exec /bin/bash -i -l', running: true, pty: true })),
        );
      } else if (events !== null) {
        const pid = Number(events[1]);
        if (!running.has(pid)) {
          send(404, { code: 'process_not_found', message: `no process ${String(pid)}` });
          return;
        }
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        line(res, { type: 'start', pid, seq: 1 });
        const shown = screens.get(pid);
        if (shown !== undefined) {
          line(res, { type: 'data', stream: 'stdout', data: Buffer.from(shown).toString('base64'), seq: 2 });
        }
        streams.set(pid, [...(streams.get(pid) ?? []), res]);
      } else if (/^\/v1\/processes\/\d+\/(stdin|resize|signal)$/.test(path)) {
        const pid = Number(/processes\/(\d+)/.exec(path)?.[1]);
        if (running.has(pid)) send(200, {});
        else send(404, { code: 'process_not_found', message: `no process ${String(pid)}` });
      } else {
        // As the host test's fake: connect's gateway-state read refused does not fail it.
        send(401, { code: 'unauthenticated', message: 'not faked' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  process.env.SDK_CONTROL_PLANE_URL = url;
});

afterAll(() => {
  for (const pid of [...streams.keys()]) end(pid, 0);
  server.close();
  Reflect.deleteProperty(process.env, 'SDK_CONTROL_PLANE_URL');
});

beforeEach(() => {
  for (const pid of [...streams.keys()]) end(pid, 0);
  running.clear();
  screens.clear();
});

/** A shim handle on the fake, its requests so far forgotten. */
async function connected(): Promise<Sandbox> {
  const sbx = await Sandbox.connect(SBX, { accessToken: 'sandbox-token' });
  requests.length = 0;
  return sbx;
}

const eventStreams = (): string[] =>
  requests.filter((r) => r.method === 'GET' && r.url.endsWith('/events')).map((r) => r.url);

describe('pty: arguments checked before any call', () => {
  it('refuses malformed create options: size, onData, user, timeoutMs, cwd, envs, unknown or signal', async () => {
    const sbx = await connected();
    const onData = (): void => undefined;
    for (const opts of [
      undefined,
      null,
      { rows: 24, onData },
      { cols: 80, onData },
      { cols: 0, rows: 24, onData },
      { cols: 80, rows: 1001, onData },
      { cols: 80.5, rows: 24, onData },
      { cols: 80, rows: 24, onData: 'not a function' },
      { cols: 80, rows: 24, onData, user: 'nobody' },
      { cols: 80, rows: 24, onData, timeoutMs: -1 },
      { cols: 80, rows: 24, onData, cwd: 5 },
      { cols: 80, rows: 24, onData, envs: ['A=1'] },
      { cols: 80, rows: 24, onData, colour: 'red' },
    ]) {
      await expect(sbx.pty.create(opts as never), JSON.stringify(opts)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    await expect(
      sbx.pty.create({ cols: 80, rows: 24, onData, signal: new AbortController().signal } as never),
    ).rejects.toBeInstanceOf(NotSupportedError);
    expect(requests).toEqual([]);
  });

  it('refuses a malformed pid, data, size or option of connect, sendInput, resize and kill', async () => {
    const sbx = await connected();
    const bytes = new Uint8Array([0x61]);
    await expect(sbx.pty.connect(0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.connect(PID, { onData: 5 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.connect(PID, { timeoutMs: -1 } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(sbx.pty.connect(PID, { cols: 80 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.sendInput(-1, bytes)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.sendInput(PID, 42 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.sendInput(PID, bytes, { user: 'root' } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(sbx.pty.resize(PID, { cols: 0, rows: 24 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.resize(PID, { cols: 80 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.resize(1.5, { cols: 80, rows: 24 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.kill('42' as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.pty.kill(PID, { signal: new AbortController().signal } as never)).rejects.toBeInstanceOf(
      NotSupportedError,
    );
    expect(requests).toEqual([]);
  });
});

describe('pty: E2B terminals on the native ones', () => {
  it("create asks for E2B's bash on a terminal of cols x rows, E2B's envs under the program's, its home, 60 s", async () => {
    const sbx = await connected();
    const terminal = await sbx.pty.create({
      cols: 100,
      rows: 30,
      onData: () => undefined,
      envs: { ABC: '123', LANG: 'en_US.UTF-8' },
    });
    expect(terminal.pid).toBe(PID);
    expect(requests[0]).toEqual({
      method: 'POST',
      url: '/v1/processes',
      body: {
        cmd: 'exec /bin/bash -i -l',
        pty: { cols: 100, rows: 30 },
        envs: { TERM: 'xterm-256color', LANG: 'en_US.UTF-8', LC_ALL: 'C.UTF-8', ABC: '123' },
        killTree: true,
        cwd: '/home/user',
        timeoutMs: 60_000,
      },
    });
    end(PID, 0);
    await terminal.wait();
    requests.length = 0;
    const root = await sbx.pty.create({
      cols: 80,
      rows: 24,
      onData: () => undefined,
      user: 'root',
      timeoutMs: 0,
    });
    expect(requests[0]?.body).toMatchObject({ user: 'root', cwd: '/root', timeoutMs: 0 });
    end(PID, 0);
    await root.wait();
    requests.length = 0;
    const sub = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined, cwd: 'app' });
    expect(requests[0]?.body).toMatchObject({ cwd: '/home/user/app' });
    end(PID, 0);
    await sub.wait();
  });

  it("gives onData the bytes; wait() is E2B's CommandResult with no stdout, CommandExitError otherwise", async () => {
    const sbx = await connected();
    const seen: Uint8Array[] = [];
    screens.set(PID, 'héllo\r\n');
    const terminal = await sbx.pty.create({ cols: 80, rows: 24, onData: (data) => void seen.push(data) });
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(seen[0] ?? []).toString('utf8')).toBe('héllo\r\n');
    expect(terminal.exitCode).toBeUndefined();
    // E2B's terminal handle has no stdin of its own: typing goes through pty.sendInput.
    await expect(terminal.sendStdin('x')).rejects.toThrow(
      new SandboxError('Sending stdin is not supported for this command handle.'),
    );
    await expect(terminal.closeStdin()).rejects.toBeInstanceOf(SandboxError);
    end(PID, 0);
    expect(await terminal.wait()).toEqual({ exitCode: 0, error: undefined, stdout: '', stderr: '' });
    expect(terminal.stdout).toBe('');

    const failing = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined });
    end(PID, 3);
    const exited = await failing.wait().catch((e: unknown) => e);
    expect(exited).toBeInstanceOf(CommandExitError);
    expect(exited).toMatchObject({ exitCode: 3, error: 'exit status 3', stdout: '', stderr: '' });

    const killed = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined });
    end(PID, null, 'SIGKILL');
    await expect(killed.wait()).rejects.toMatchObject({ exitCode: -1, error: 'signal: killed' });
  });

  it('ends at its timeoutMs with TimeoutError, as a command does', async () => {
    const sbx = await connected();
    const before = Date.now();
    const terminal = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined, timeoutMs: 1 });
    // sandboxd ends it with a signal once its 1 ms have passed.
    while (Date.now() - before < 2) await new Promise<void>((resolve) => setImmediate(resolve));
    end(PID, null, 'SIGTERM');
    await expect(terminal.wait()).rejects.toBeInstanceOf(TimeoutError);
  });

  it("sends input and resizes by pid with one call each and no stream; a disconnect closes a handle's stream", async () => {
    const sbx = await connected();
    const terminal = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined });
    await sbx.pty.sendInput(terminal.pid, new Uint8Array(Buffer.from('echo hi\n')));
    await sbx.pty.sendInput(terminal.pid, 'ls\n');
    await sbx.pty.resize(terminal.pid, { cols: 120, rows: 40 });
    expect(requests.filter((r) => r.url !== '/v1/processes').map((r) => [r.method, r.url, r.body])).toEqual([
      ['GET', `/v1/processes/${String(PID)}/events`, undefined],
      ['POST', `/v1/processes/${String(PID)}/stdin`, 'echo hi\n'],
      ['POST', `/v1/processes/${String(PID)}/stdin`, 'ls\n'],
      ['POST', `/v1/processes/${String(PID)}/resize`, { cols: 120, rows: 40 }],
    ]);
    // The handle's stream closes on disconnect (a program may exit); the terminal runs on.
    const [stream] = streams.get(PID) ?? [];
    const closed = new Promise((resolve) => stream?.once('close', resolve));
    await terminal.disconnect();
    await closed;
    expect(running.has(PID)).toBe(true);
    // A terminal another handle (or process) opened: by pid, never a stream.
    running.add(7);
    const other = await connected();
    await other.pty.sendInput(7, 'a');
    await other.pty.resize(7, { cols: 90, rows: 20 });
    expect(eventStreams()).toEqual([]);
    // One that does not run is E2B's NotFoundError.
    await expect(other.pty.sendInput(8, 'x')).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.pty.resize(8, { cols: 90, rows: 20 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.pty.connect(8)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('connect gives a handle with the screen kept first; kill ends a running terminal, false otherwise', async () => {
    running.add(7);
    screens.set(7, 'prompt$ ');
    const sbx = await connected();
    const seen: string[] = [];
    const again = await sbx.pty.connect(7, {
      onData: (data) => void seen.push(Buffer.from(data).toString()),
    });
    expect(again.pid).toBe(7);
    await expect.poll(() => seen).toEqual(['prompt$ ']);
    requests.length = 0;
    expect(await sbx.pty.kill(7)).toBe(true);
    expect(requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['GET', '/v1/processes', undefined],
      ['POST', '/v1/processes/7/signal', { signal: 'SIGKILL', tree: true }],
    ]);
    end(7, null, 'SIGKILL');
    await expect(again.wait()).rejects.toBeInstanceOf(CommandExitError);
    requests.length = 0;
    expect(await sbx.pty.kill(7)).toBe(false);
    expect(await again.kill()).toBe(false);
    expect(requests.every((r) => r.url === '/v1/processes')).toBe(true);
  });

  it("lists a terminal as E2B's envd runs it: /bin/bash -i -l", () => {
    expect(processInfoOf(PID, 'exec /bin/bash -i -l')).toEqual({
      pid: PID,
      cmd: '/bin/bash',
      args: ['-i', '-l'],
      envs: {},
    });
  });
});
