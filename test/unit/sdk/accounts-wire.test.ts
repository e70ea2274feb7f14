/**
 * `user: 'root'` on the wire (issue 25): the native `sbx.commands` and `sbx.files` and the E2B shim's
 * accept `'user'` and `'root'` and send root as sandboxd reads it (`user` in a command's start or a JSON
 * body, `&user=root` in a files call's query); the user's calls are sent as they always were (no
 * `user` at all); anything else is an `InvalidArgumentError` on `user` before any call. A recording
 * server stands where sandboxd would be and refuses every request, so a test sees what each call carried.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError as NativeInvalidArgumentError } from '../../../rules/errors.js';
import { Commands, type CommandRunOptions } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { Files } from '../../../sdk/files.js';
import { Commands as E2BCommands } from '../../../sdk/compat/e2b/commands.js';
import { InvalidArgumentError } from '../../../sdk/compat/e2b/errors.js';
import { Filesystem } from '../../../sdk/compat/e2b/files.js';

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

let server: Server;
const requests: Recorded[] = [];
let client: DaemonClient;

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '' || req.headers['content-type'] !== 'application/json') return text;
  return JSON.parse(text) as unknown;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      const url = new URL(req.url ?? '/', 'http://sandboxd');
      requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, body });
      // A refusal sandboxd could give: every call fails after it was recorded.
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'sandbox_suspended', message: 'recorded' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new DaemonClient({
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    accessToken: 'recorded-token',
  });
});

afterAll(() => {
  server.close();
});

beforeEach(() => {
  requests.length = 0;
});

/** Runs `call`, which the recording server refuses; the request it made. */
async function sent(call: () => Promise<unknown>): Promise<Recorded> {
  const before = requests.length;
  await call().then(
    () => expect.fail('the recording server refuses every call'),
    () => undefined,
  );
  expect(requests.length).toBe(before + 1);
  return requests[before] as Recorded;
}

/** The InvalidArgumentError `call` rejects with, once it is clear no request was made. */
async function refused(call: () => Promise<unknown>): Promise<NativeInvalidArgumentError> {
  const before = requests.length;
  const error: unknown = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(NativeInvalidArgumentError);
  expect(requests.length).toBe(before);
  return error as NativeInvalidArgumentError;
}

describe('native commands.run', () => {
  it("sends user: 'root' in the start, foreground and background; the user's start has no user", async () => {
    const commands = new Commands(client);
    const foreground = await sent(() => commands.run('id -u', { user: 'root' }));
    expect([foreground.method, foreground.path, foreground.query.get('stream')]).toEqual([
      'POST',
      '/v1/processes',
      'true',
    ]);
    expect(foreground.body).toEqual({ cmd: 'id -u', user: 'root', envs: {}, killTree: true });
    const background = await sent(() => commands.run('id -u', { user: 'root', background: true }));
    expect(background.body).toMatchObject({ cmd: 'id -u', user: 'root' });
    for (const options of [{}, { user: 'user' as const }]) {
      const plain = await sent(() => commands.run('id -u', options));
      expect(plain.body).toEqual({ cmd: 'id -u', envs: {}, killTree: true });
    }
  });

  it("refuses any user but 'user' or 'root' before any call, naming the field", async () => {
    const commands = new Commands(client);
    for (const user of ['nobody', 'USER', 'Root', '', 0, null]) {
      const options = { user } as unknown as CommandRunOptions & { background?: false };
      const error = await refused(() => commands.run('id -u', options));
      expect(error).toMatchObject({ code: 'invalid_argument', field: 'user' });
      expect(error.message).toBe("commands.run: user: must be 'user' or 'root'");
    }
  });
});

describe('native files', () => {
  const files = (): Files => new Files(client);

  it('sends &user=root in the query of every GET and PUT call, and nothing for the user', async () => {
    const root = { user: 'root' } as const;
    const calls: [string, () => Promise<unknown>][] = [
      ['/v1/files/content', () => files().read('/etc/hostname', root)],
      ['/v1/files/content', () => files().read('/etc/hostname', { ...root, format: 'bytes' })],
      ['/v1/files/content', () => files().write('/etc/sdk-test', 'x', root)],
      ['/v1/files/list', () => files().list('/etc', { ...root, depth: 2 })],
      ['/v1/files/info', () => files().getInfo('/etc', root)],
      ['/v1/files/info', () => files().exists('/etc', root)],
      ['/v1/files/watch', () => files().watchDir('/etc', () => undefined, { ...root, recursive: true })],
    ];
    for (const [path, call] of calls) {
      const request = await sent(call);
      expect(request.path).toBe(path);
      expect(request.query.get('user')).toBe('root');
      expect(request.query.get('path')?.startsWith('/etc')).toBe(true);
    }
    const written = await sent(() => files().write([{ path: '/etc/a', data: 'a' }], root));
    expect([written.method, written.query.get('user'), written.body]).toEqual(['PUT', 'root', 'a']);
    for (const call of [
      () => files().read('/home/user/a'),
      () => files().write('/home/user/a', 'a', { user: 'user' }),
      () => files().list('/home/user'),
      () => files().getInfo('/home/user', { user: 'user' }),
      () => files().watchDir('/home/user', () => undefined),
    ]) {
      expect((await sent(call)).query.has('user')).toBe(false);
    }
  });

  it('sends "user": "root" in the body of makeDir, remove and rename, and nothing for the user', async () => {
    const root = { user: 'root' } as const;
    expect((await sent(() => files().makeDir('/data', root))).body).toEqual({ path: '/data', user: 'root' });
    expect((await sent(() => files().remove('/data', root))).body).toEqual({ path: '/data', user: 'root' });
    expect((await sent(() => files().rename('/a', '/b', root))).body).toEqual({
      from: '/a',
      to: '/b',
      user: 'root',
    });
    expect((await sent(() => files().makeDir('/data'))).body).toEqual({ path: '/data' });
    expect((await sent(() => files().remove('/data', { user: 'user' }))).body).toEqual({ path: '/data' });
    expect((await sent(() => files().rename('/a', '/b'))).body).toEqual({ from: '/a', to: '/b' });
  });

  it("refuses any user but 'user' or 'root' on every call before any request", async () => {
    const bad = { user: 'nobody' } as never;
    const noop = (): void => undefined;
    for (const call of [
      () => files().read('/a', bad),
      () => files().write('/a', 'x', bad),
      () => files().write([{ path: '/a', data: 'x' }], bad),
      () => files().list('/a', bad),
      () => files().exists('/a', bad),
      () => files().getInfo('/a', bad),
      () => files().makeDir('/a', bad),
      () => files().remove('/a', bad),
      () => files().rename('/a', '/b', bad),
      () => files().watchDir('/a', noop, bad),
    ]) {
      expect(await refused(call)).toMatchObject({ field: 'user' });
    }
  });
});

describe('the E2B shim', () => {
  const probe = (): Promise<boolean> => Promise.resolve(true);

  it("runs a root command in /root, passing user: 'root' through as E2B's SDK does", async () => {
    const commands = new E2BCommands(new Commands(client), probe);
    const root = await sent(() => commands.run('id -u', { user: 'root' }));
    expect(root.body).toMatchObject({ user: 'root', cwd: '/root' });
    const relative = await sent(() => commands.run('pwd', { user: 'root', cwd: 'work' }));
    expect(relative.body).toMatchObject({ user: 'root', cwd: '/root/work' });
    const user = await sent(() => commands.run('id -u'));
    expect(user.body).toMatchObject({ cwd: '/home/user' });
    expect(user.body).not.toHaveProperty('user');
  });

  it("resolves a root call's relative paths under /root and sends its account", async () => {
    const fs = new Filesystem(new Files(client), probe);
    const write = await sent(() => fs.write('notes.txt', 'x', { user: 'root' }));
    expect([write.query.get('path'), write.query.get('user')]).toEqual(['/root/notes.txt', 'root']);
    const read = await sent(() => fs.read('notes.txt'));
    expect([read.query.get('path'), read.query.has('user')]).toEqual(['/home/user/notes.txt', false]);
    const renamed = await sent(() => fs.rename('a', 'b', { user: 'root' }));
    expect(renamed.body).toEqual({ from: '/root/a', to: '/root/b', user: 'root' });
    const made = await sent(() => fs.makeDir('/path/to', { user: 'root' }));
    expect(made.body).toEqual({ path: '/path/to', user: 'root' });
    const many = await sent(() => fs.write([{ path: 'a.txt', data: 'a' }], { user: 'root' }));
    expect([many.query.get('path'), many.query.get('user')]).toEqual(['/root/a.txt', 'root']);
  });

  it("refuses any user but 'user' or 'root' with E2B's InvalidArgumentError before any call", async () => {
    const commands = new E2BCommands(new Commands(client), probe);
    const fs = new Filesystem(new Files(client), probe);
    const bad = { user: 'nobody' } as never;
    for (const call of [
      () => commands.run('id', bad),
      () => fs.read('a', bad),
      () => fs.write('a', 'x', bad),
      () => fs.list('a', bad),
      () => fs.makeDir('a', bad),
      () => fs.rename('a', 'b', bad),
    ]) {
      const error = await refused(call);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as unknown as { cause: NativeInvalidArgumentError }).cause.field).toBe('user');
    }
  });
});
