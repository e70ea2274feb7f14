/**
 * The E2B shim without a sandbox: its options and environment (server, key precedence, template
 * mapping, E2B's defaults), every refusal before any call (`gateways`, E2B's hosted-service options,
 * features only E2B's cloud has), E2B's `network` as the egress policy, and the mapping of native
 * errors and entries to E2B's shapes. A recording HTTP server stands where the control plane would be,
 * answering every request with a refusal (unless a test sets `answer`), so a test sees whether a call
 * was made and what it carried.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError as NativeAuthenticationError,
  InvalidArgumentError as NativeInvalidArgumentError,
  SandboxError as NativeSandboxError,
  SdkError,
  type SandboxErrorCode,
} from '../../rules/errors.js';
import {
  ALL_TRAFFIC,
  AuthenticationError,
  CommandExitError,
  FileNotFoundError,
  FileType,
  InvalidArgumentError,
  NotEnoughSpaceError,
  NotFoundError,
  NotSupportedError,
  Sandbox,
  SandboxError,
  SandboxNotFoundError,
  type SandboxNetworkInfo,
  type SandboxNetworkOpts,
  type SandboxNetworkSelectorContext,
  type SandboxNetworkUpdate,
} from '../../sdk/compat/e2b/index.js';
import {
  GO_SIGNAL_NAMES,
  bashCommand,
  processInfoOf,
  signalError,
} from '../../sdk/compat/e2b/command-line.js';
import { nativeTemplate } from '../../sdk/compat/e2b/connection.js';
import { toE2BError } from '../../sdk/compat/e2b/errors.js';
import { e2bEntry, followed } from '../../sdk/compat/e2b/file-entries.js';
import { requireMemorySnapshot } from '../../sdk/compat/e2b/snapshots.js';
import type { SandboxInfo as NativeSandboxInfo } from '../../protocol/control-plane-api.js';
import { fakeSandboxInfo } from './sdk/fake-sandbox-info.js';

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

let server: Server;
let url: string;
const requests: Recorded[] = [];
/** A test's own answer to a request (status and body), else the server's refusal. */
let answer: ((request: Recorded) => { status: number; body: unknown } | undefined) | undefined;
const ENV_NAMES = ['SDK_CONTROL_PLANE_URL', 'SDK_API_KEY', 'E2B_API_KEY', 'E2B_DOMAIN', 'SDK_ACCESS_TOKEN'];
let savedEnv: Record<string, string | undefined>;

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void bodyOf(req).then((body) => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        body,
      };
      requests.push(recorded);
      const own = answer?.(recorded);
      res.writeHead(own?.status ?? 401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(own?.body ?? { code: 'unauthenticated', message: 'missing or invalid operator key' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});

afterAll(() => {
  server.close();
});

beforeEach(() => {
  savedEnv = Object.fromEntries(ENV_NAMES.map((name) => [name, process.env[name]]));
  for (const name of ENV_NAMES) Reflect.deleteProperty(process.env, name);
  process.env.SDK_CONTROL_PLANE_URL = url;
  requests.length = 0;
  answer = undefined;
});

afterEach(() => {
  for (const name of ENV_NAMES) {
    const value = savedEnv[name];
    if (value === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = value;
  }
});

/** The error `promise` rejects with (failing the test when it resolves). */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('Sandbox.create: server, key and template', () => {
  it("sends the template mapped (base → sdk-base) and E2B's 5-minute lifetime to SDK_CONTROL_PLANE_URL", async () => {
    process.env.SDK_API_KEY = 'operator-key';
    await expect(Sandbox.create()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.create('base')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.create('my-template', { allowInternetAccess: false })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    await expect(Sandbox.create({ template: 'my-template', timeoutMs: 60_000 })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    expect(requests.map((r) => [r.method, r.url])).toEqual(Array(4).fill(['POST', '/v1/sandboxes']));
    expect(requests.map((r) => r.body)).toMatchObject([
      { template: 'sdk-base', timeoutMs: 300_000, allowInternetAccess: true },
      { template: 'sdk-base', timeoutMs: 300_000 },
      { template: 'my-template', timeoutMs: 300_000, allowInternetAccess: false },
      { template: 'my-template', timeoutMs: 60_000 },
    ]);
  });

  it("maps only E2B's default name; any other template is used as given", () => {
    expect(nativeTemplate(undefined)).toBe('sdk-base');
    expect(nativeTemplate('base')).toBe('sdk-base');
    expect(nativeTemplate('sdk-agent')).toBe('sdk-agent');
    expect(nativeTemplate('code-interpreter-v1')).toBe('code-interpreter-v1');
  });

  it("presents apiKey, else SDK_API_KEY; never E2B_API_KEY, which may be a key of E2B's cloud", async () => {
    process.env.E2B_API_KEY = 'e2b-cloud-key';
    const refused = await failure(Sandbox.create());
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as Error).message).toMatch(/E2B_API_KEY is never sent/);
    expect((refused as Error).message).not.toContain('e2b-cloud-key');
    process.env.SDK_API_KEY = 'sdk-key';
    await failure(Sandbox.create());
    await failure(Sandbox.create({ apiKey: 'option-key' }));
    expect(requests.map((r) => r.authorization)).toEqual(['Bearer sdk-key', 'Bearer option-key']);
  });

  it("maps a refused key to E2B's AuthenticationError, keeping the native code and error", async () => {
    process.env.SDK_API_KEY = 'wrong';
    const error = await failure(Sandbox.create());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).not.toBeInstanceOf(SandboxError); // as in E2B
    expect(error).toMatchObject({ name: 'AuthenticationError', code: 'unauthenticated' });
    expect((error as Error).cause).toBeInstanceOf(NativeAuthenticationError);
  });

  it('without any key, raises AuthenticationError naming where a key comes from, before any call', async () => {
    const error = await failure(Sandbox.create());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toMatch(/apiKey.*SDK_API_KEY/);
    expect(requests).toEqual([]);
  });

  it('accepts secure: false (E2B without envd tokens): the sandbox is made as any other', async () => {
    process.env.SDK_API_KEY = 'k';
    await expect(Sandbox.create({ secure: false })).rejects.toBeInstanceOf(AuthenticationError);
    expect(requests.map((r) => [r.method, r.url])).toEqual([['POST', '/v1/sandboxes']]);
  });

  it("takes a snapshot id where the template goes (E2B's Sandbox.create(snapshotId)): the snapshot's template, E2B's lifetime and egress", async () => {
    process.env.SDK_API_KEY = 'k';
    process.env.SDK_ISOLATION = 'gvisor'; // a snapshot fixes the isolation: not sent
    try {
      await expect(Sandbox.create('snap_0123456789abcdef')).rejects.toBeInstanceOf(AuthenticationError);
      await expect(
        Sandbox.create({ template: 'snap_0123456789abcdef', allowInternetAccess: false, timeoutMs: 60_000 }),
      ).rejects.toBeInstanceOf(AuthenticationError);
    } finally {
      Reflect.deleteProperty(process.env, 'SDK_ISOLATION');
    }
    expect(requests.map((r) => [r.method, r.url])).toEqual(Array(2).fill(['POST', '/v1/sandboxes']));
    // No template (the snapshot's); egress as E2B sends it at create (open unless closed).
    expect(requests.map((r) => r.body)).toEqual([
      expect.objectContaining({
        snapshot: 'snap_0123456789abcdef',
        timeoutMs: 300_000,
        allowInternetAccess: true,
      }),
      expect.objectContaining({
        snapshot: 'snap_0123456789abcdef',
        timeoutMs: 60_000,
        allowInternetAccess: false,
      }),
    ]);
    for (const { body } of requests) {
      expect(body).not.toHaveProperty('template');
      expect(body).not.toHaveProperty('isolation');
    }
  });

  it('takes a snapshot by id (reading the isolation first when the memory is to be kept) and forks by id, with the key', async () => {
    process.env.SDK_API_KEY = 'k';
    await expect(Sandbox.createSnapshot('0123456789ab')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.createSnapshot('0123456789ab', { keepMemory: false })).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    await expect(Sandbox.fork('0123456789ab', { count: 2 })).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.listSnapshots().nextItems()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(Sandbox.deleteSnapshot('snap_0123456789abcdef')).rejects.toBeInstanceOf(AuthenticationError);
    expect(requests.map((r) => [r.method, r.url, r.authorization])).toEqual([
      ['GET', '/v1/sandboxes/0123456789ab', 'Bearer k'],
      ['POST', '/v1/sandboxes/0123456789ab/snapshots', 'Bearer k'],
      ['GET', '/v1/sandboxes/0123456789ab', 'Bearer k'],
      ['GET', '/v1/snapshots', 'Bearer k'],
      ['DELETE', '/v1/snapshots/snap_0123456789abcdef', 'Bearer k'],
    ]);
  });

  it('ignores E2B_DOMAIN when SDK_CONTROL_PLANE_URL names the server', async () => {
    process.env.E2B_DOMAIN = 'e2b.app';
    process.env.SDK_API_KEY = 'k';
    await expect(Sandbox.create()).rejects.toBeInstanceOf(AuthenticationError);
    expect(requests).toHaveLength(1);
  });
});

describe('refusals before any call', () => {
  beforeEach(() => {
    process.env.SDK_API_KEY = 'operator-key';
  });
  afterEach(() => {
    expect(requests).toEqual([]);
  });

  it('refuses gateways with InvalidArgumentError (also the native class), pointing at the native SDK', async () => {
    const error = await failure(Sandbox.create({ gateways: {} } as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toBeInstanceOf(NativeInvalidArgumentError);
    expect(error).toBeInstanceOf(SdkError);
    expect(error).toMatchObject({ code: 'invalid_argument' });
    expect((error as Error).message).toMatch(/does not accept gateways.*native SDK/);
    expect(((error as Error).cause as NativeInvalidArgumentError).field).toBe('gateways');
  });

  it('refuses domain with a clear error naming it', async () => {
    const error = await failure(Sandbox.create({ domain: 'e2b.app' }));
    expect(error).toBeInstanceOf(NotSupportedError);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ feature: 'domain', code: 'not_supported' });
    expect((error as Error).message).toContain(
      "the E2B shim runs on SDK_CONTROL_PLANE_URL; `domain` is E2B's hosted service",
    );
    await expect(Sandbox.connect('0123456789ab', { domain: 'e2b.app' })).rejects.toMatchObject({
      feature: 'domain',
    });
    await expect(Sandbox.kill('0123456789ab', { domain: 'e2b.app' })).rejects.toMatchObject({
      feature: 'domain',
    });
  });

  it('refuses E2B_DOMAIN when SDK_CONTROL_PLANE_URL is not set', async () => {
    Reflect.deleteProperty(process.env, 'SDK_CONTROL_PLANE_URL');
    process.env.E2B_DOMAIN = 'e2b.app';
    const error = await failure(Sandbox.create());
    expect(error).toMatchObject({ name: 'NotSupportedError', feature: 'E2B_DOMAIN' });
    expect((error as Error).message).toContain('set SDK_CONTROL_PLANE_URL');
  });

  it.each([
    ['apiUrl', { apiUrl: 'https://api.e2b.app' }],
    ['sandboxUrl', { sandboxUrl: 'https://sandbox.e2b.app' }],
    ['debug', { debug: true }],
    ['mcp', { mcp: {} }],
    ['iam', { iam: {} }],
    ['volumeMounts', { volumeMounts: {} }],
    ['lifecycle', { lifecycle: {} }],
  ])('refuses %s with NotSupportedError naming it', async (feature, options) => {
    await expect(Sandbox.create(options as never)).rejects.toMatchObject({
      name: 'NotSupportedError',
      feature,
    });
  });

  it('refuses an unknown option and a malformed one with InvalidArgumentError', async () => {
    await expect(Sandbox.create({ colour: 'red' } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(Sandbox.create({ envs: { 'NOT A NAME': 'x' } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(Sandbox.create({ timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    // create's envs go to sandboxd's secrets: at most 61 (E2B's three default variables take the rest of
    // its 64), no NUL (as the Python shim checks them).
    const many = Object.fromEntries(Array.from({ length: 62 }, (_, i) => [`V${String(i)}`, 'x']));
    await expect(Sandbox.create({ envs: many })).rejects.toThrow(/at most 61/);
    await expect(Sandbox.create({ envs: { A: 'a\0b' } })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(Sandbox.create('Not A Template!')).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('refuses to connect from another process without the sandbox token, saying how to give it', async () => {
    Reflect.deleteProperty(process.env, 'SDK_API_KEY'); // with a key, it first asks whether the sandbox exists
    // An id no other file's sandbox has: unit files share one process, and the shim remembers the
    // tokens of the sandboxes created in it.
    const error = await failure(Sandbox.connect('c0ffee0ff1ce'));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toMatch(/accessToken.*SDK_ACCESS_TOKEN/);
    // connect's lifetime is read from the sandbox (kept when within it): a malformed one is refused first.
    await expect(Sandbox.connect('c0ffee0ff1ce', { timeoutMs: -1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it("checks getMetrics', setTimeout's and list's arguments before any call", async () => {
    for (const opts of [{ start: 'not a date' }, { start: new Date(20), end: new Date(10) }, { step: 5 }]) {
      await expect(Sandbox.getMetrics('0123456789ab', opts as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
    }
    await expect(Sandbox.setTimeout('0123456789ab', 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => Sandbox.list({ query: { metadata: { '': 'b' } } })).toThrow(InvalidArgumentError);
  });

  it('answers for an id no sandbox can have before any call, as E2B answers for an unknown id (kill: false)', async () => {
    expect(await Sandbox.kill('not-an-id')).toBe(false);
    await expect(Sandbox.getInfo('not-an-id')).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(Sandbox.pause('not-an-id')).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(Sandbox.connect('not-an-id')).rejects.toBeInstanceOf(SandboxNotFoundError);
    // Not a string at all is a malformed argument.
    await expect(Sandbox.getInfo(42 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it("checks snapshot and fork options first: name refused, keepMemory a boolean, count 1 to 100, the copies' lifetime", async () => {
    const named = await failure(Sandbox.createSnapshot('0123456789ab', { name: 'my-snapshot' }));
    expect(named).toBeInstanceOf(NotSupportedError);
    expect(named).toMatchObject({ feature: 'Sandbox.createSnapshot({ name })' });
    expect((named as Error).message).toMatch(/ids only.*Sandbox\.create/);
    await expect(
      Sandbox.createSnapshot('0123456789ab', { keepMemory: 'yes' as never }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(Sandbox.createSnapshot('0123456789ab', { colour: 'red' } as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(Sandbox.createSnapshot('0123456789ab', { domain: 'e2b.app' })).rejects.toMatchObject({
      feature: 'domain',
    });
    await expect(Sandbox.createSnapshot('not-an-id')).rejects.toBeInstanceOf(SandboxNotFoundError);
    for (const count of [0, -1, 1.5, 101, '2']) {
      const error = await failure(Sandbox.fork('0123456789ab', { count: count as never }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toBeInstanceOf(NativeInvalidArgumentError);
      expect((error as Error).message).toMatch(/count must be a whole number from 1 to 100/);
    }
    await expect(Sandbox.fork('0123456789ab', { timeoutMs: -1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(Sandbox.fork('0123456789ab', { timeoutMs: 9 * 3_600_000 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(Sandbox.fork('0123456789ab', { keepMemory: 1 as never })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    // `mode` ('full' or 'filesystem') is the same choice; it must agree with keepMemory.
    await expect(Sandbox.createSnapshot('0123456789ab', { mode: 'partial' as never })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(
      Sandbox.createSnapshot('0123456789ab', { mode: 'full', keepMemory: false }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(Sandbox.fork('0123456789ab', { mode: 'memory' as never })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(Sandbox.fork('not-an-id')).rejects.toBeInstanceOf(SandboxNotFoundError);
    // A create from a snapshot id takes create's checks too.
    await expect(Sandbox.create('snap_0123456789abcdef', { timeoutMs: -1 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('forks only with the key, and answers false for a snapshot id that cannot be one', async () => {
    Reflect.deleteProperty(process.env, 'SDK_API_KEY');
    const error = await failure(Sandbox.fork('0123456789ab'));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toMatch(/Sandbox\.fork needs the control plane's operator key/);
    await expect(Sandbox.createSnapshot('0123456789ab')).rejects.toBeInstanceOf(AuthenticationError);
    process.env.SDK_API_KEY = 'operator-key';
    expect(await Sandbox.deleteSnapshot('my-snapshot:default')).toBe(false);
    await expect(Sandbox.deleteSnapshot(42 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => Sandbox.listSnapshots({ limit: 0 })).toThrow(InvalidArgumentError);
    expect(() => Sandbox.listSnapshots({ nextToken: 'next' })).toThrow(InvalidArgumentError);
    expect(() => Sandbox.listSnapshots({ sandboxId: 7 as never })).toThrow(InvalidArgumentError);
  });

  it("refuses a list query with a state E2B does not have, or an order other than 'asc' / 'desc'", () => {
    expect(() => Sandbox.list({ query: { state: ['stopped' as never] } })).toThrow(InvalidArgumentError);
    expect(() => Sandbox.list({ order: 'newest' as never })).toThrow(InvalidArgumentError);
  });
});

describe('native errors as E2B errors', () => {
  const native = (code: SandboxErrorCode): NativeSandboxError =>
    new NativeSandboxError(`failed: ${code}`, { code });

  it.each([
    ['file_not_found', FileNotFoundError],
    ['sandbox_not_found', SandboxNotFoundError],
    ['sandbox_ended', SandboxNotFoundError],
    ['process_not_found', NotFoundError],
    ['no_space', NotEnoughSpaceError],
    ['permission_denied', SandboxError],
    ['is_a_directory', InvalidArgumentError],
    ['not_a_directory', InvalidArgumentError],
  ] as const)('%s becomes %O, code, message and cause kept', (code, E2BClass) => {
    const original = native(code);
    const mapped = toE2BError(original);
    expect(mapped).toBeInstanceOf(E2BClass);
    expect(mapped).toBeInstanceOf(SandboxError);
    expect(mapped).toBeInstanceOf(NativeSandboxError); // the native brand too
    expect(mapped).toMatchObject({ code, message: `failed: ${code}`, name: E2BClass.name, cause: original });
  });

  it('file and sandbox not-found are both NotFoundError, as in E2B', () => {
    expect(toE2BError(native('file_not_found'))).toBeInstanceOf(NotFoundError);
    expect(toE2BError(native('sandbox_not_found'))).toBeInstanceOf(NotFoundError);
  });

  it("a native InvalidArgumentError becomes E2B's, and what is not a native error passes as it is", () => {
    expect(toE2BError(new NativeInvalidArgumentError('bad', { field: 'x' }))).toBeInstanceOf(
      InvalidArgumentError,
    );
    const other = new TypeError('bug');
    expect(toE2BError(other)).toBe(other);
  });

  it("CommandExitError carries the result, as E2B's does", () => {
    const error = new CommandExitError({ exitCode: 2, error: 'exit status 2', stdout: 'out', stderr: 'err' });
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({
      name: 'CommandExitError',
      message: 'exit status 2',
      exitCode: 2,
      error: 'exit status 2',
      stdout: 'out',
      stderr: 'err',
    });
  });
});

describe("entries in E2B's shape", () => {
  const entry = {
    name: 'notes.txt',
    path: '/home/user/notes.txt',
    size: 5,
    uid: 1000,
    gid: 1000,
    modifiedTime: '2026-01-02T03:04:05.000Z',
  };

  it('gives permissions as Go prints them, owner and group names, and a Date', () => {
    expect(e2bEntry({ ...entry, type: 'file', mode: 0o644 })).toEqual({
      name: 'notes.txt',
      type: FileType.FILE,
      path: '/home/user/notes.txt',
      size: 5,
      mode: 0o644,
      permissions: '-rw-r--r--',
      owner: 'user',
      group: 'user',
      modifiedTime: new Date('2026-01-02T03:04:05.000Z'),
    });
    expect(e2bEntry({ ...entry, type: 'dir', mode: 0o755, uid: 0, gid: 0 })).toMatchObject({
      type: FileType.DIR,
      permissions: 'drwxr-xr-x',
      owner: 'root',
      group: 'root',
    });
    expect(e2bEntry({ ...entry, type: 'symlink', mode: 0o777, symlinkTarget: '/etc' })).toMatchObject({
      type: FileType.SYMLINK,
      permissions: 'Lrwxrwxrwx',
      symlinkTarget: '/etc',
    });
    expect(e2bEntry({ ...entry, type: 'other', mode: 0o600, uid: 1234 })).not.toHaveProperty('type');
    expect(e2bEntry({ ...entry, type: 'other', mode: 0o600, uid: 1234 }).owner).toBe('1234');
  });

  it("follows a symlink as envd does: the target's type, its absolute path; a dangling link stays a symlink", async () => {
    const link = {
      ...entry,
      name: 'link',
      path: '/home/user/dir/link',
      type: 'symlink' as const,
      mode: 0o777,
    };
    const tree = new Map([
      ['/home/user/notes.txt', { ...entry, type: 'file' as const, mode: 0o644 }],
      ['/home/user/dir/up', { ...link, path: '/home/user/dir/up', symlinkTarget: '../notes.txt' }],
    ]);
    const lookUp = (
      path: string,
    ): Promise<(typeof entry & { type: 'file' | 'symlink'; mode: number }) | undefined> =>
      Promise.resolve(tree.get(path));
    // A link to a link to a file: the file's type, the path it finally resolves to; the link's own bits.
    expect(await followed({ ...link, symlinkTarget: 'up' }, lookUp)).toMatchObject({
      name: 'link',
      type: FileType.FILE,
      permissions: 'Lrwxrwxrwx',
      symlinkTarget: '/home/user/notes.txt',
    });
    expect(await followed({ ...link, symlinkTarget: '/home/user/missing' }, lookUp)).toMatchObject({
      type: FileType.SYMLINK,
      symlinkTarget: '/home/user/missing',
    });
    expect(await followed({ ...entry, type: 'file', mode: 0o644 }, lookUp)).not.toHaveProperty(
      'symlinkTarget',
    );
  });
});

describe("commands as E2B's envd runs them (the same line and table as the Python shim)", () => {
  it('runs `exec /bin/bash -l -c <cmd>`, quoted as shlex.quote, stdin from /dev/null unless asked', () => {
    expect(bashCommand("sleep 'a b'", false)).toBe(`exec /bin/bash -l -c 'sleep '"'"'a b'"'"'' </dev/null`);
    expect(bashCommand('ls', true)).toBe('exec /bin/bash -l -c ls');
    expect(bashCommand('', true)).toBe("exec /bin/bash -l -c ''");
  });

  it("lists a shim command as E2B's ProcessInfo, and any other as sh -c", () => {
    for (const cmd of ["sleep 'a b'", 'echo "$HOME" \\ done', 'ls', "it's"]) {
      expect(processInfoOf(7, bashCommand(cmd, false))).toEqual({
        pid: 7,
        cmd: '/bin/bash',
        args: ['-l', '-c', cmd],
        envs: {},
      });
      expect(processInfoOf(7, bashCommand(cmd, true)).args).toEqual(['-l', '-c', cmd]);
    }
    expect(processInfoOf(8, 'echo x')).toEqual({ pid: 8, cmd: '/bin/sh', args: ['-c', 'echo x'], envs: {} });
  });

  it('names a signal as Go does in `signal: <name>`, else as sandboxd named it', () => {
    expect(signalError('SIGKILL')).toBe('signal: killed');
    expect(signalError('SIGTERM')).toBe('signal: terminated');
    expect(signalError('SIGSEGV')).toBe('signal: segmentation fault');
    expect(signalError('SIGRTMIN')).toBe('signal: SIGRTMIN');
    expect(signalError(null)).toBe('signal: unknown');
    expect(Object.keys(GO_SIGNAL_NAMES)).toHaveLength(31);
  });
});

describe("snapshots: E2B's keep the memory", () => {
  const info = (isolation: 'namespace' | 'gvisor'): NativeSandboxInfo => ({
    sandboxId: '0123456789ab',
    template: 'sdk-base',
    isolation,
    state: 'running',
    allowInternetAccess: true,
    egress: { mode: 'open', allow: [], deny: [] },
    endReason: null,
    suspendReason: null,
    deadlineAt: 0,
    startedAt: 0,
    metadata: {},
    seq: 1,
  });

  it('refuses a memory snapshot of a namespace sandbox, naming the option, gVisor and files only', () => {
    let error: unknown;
    try {
      requireMemorySnapshot('createSnapshot', info('namespace'), true);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NotSupportedError);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ feature: 'createSnapshot({ keepMemory: true })', code: 'not_supported' });
    const message = (error as Error).message;
    expect(message).toContain('namespace isolation');
    expect(message).toContain("isolation: 'gvisor'");
    expect(message).toContain('SDK_ISOLATION=gvisor');
    expect(message).toContain('{ keepMemory: false }');
  });

  it("takes a gVisor sandbox's (memory) either way, and a namespace sandbox's files when asked", () => {
    expect(() => {
      requireMemorySnapshot('fork', info('gvisor'), true);
    }).not.toThrow();
    expect(() => {
      requireMemorySnapshot('fork', info('gvisor'), false);
    }).not.toThrow();
    expect(() => {
      requireMemorySnapshot('fork', info('namespace'), false);
    }).not.toThrow();
  });
});

describe("network: E2B's egress rules as the egress policy", () => {
  const SBX = '0123456789ab';
  const open = (deny: string[] = []) => ({ mode: 'open', allow: [], deny });
  const allowlist = (allow: string[]) => ({ mode: 'allowlist', allow, deny: [] });
  const body = (at: number): Record<string, unknown> => requests[at]?.body as Record<string, unknown>;

  beforeEach(() => {
    process.env.SDK_API_KEY = 'operator-key';
  });

  it.each<[string, SandboxNetworkOpts, unknown]>([
    [
      'denyOut ALL_TRAFFIC with allowOut is an allowlist of allowOut (normalised)',
      { denyOut: [ALL_TRAFFIC], allowOut: ['1.1.1.1', 'PyPI.org.', '*.npmjs.org', '8.8.8.0/24'] },
      allowlist(['1.1.1.1/32', 'pypi.org', '*.npmjs.org', '8.8.8.0/24']),
    ],
    [
      "selectors given as callbacks get E2B's context ({ allTraffic, rules })",
      {
        denyOut: ({ allTraffic }: SandboxNetworkSelectorContext) => [allTraffic],
        allowOut: ({ rules }: SandboxNetworkSelectorContext) => ['1.1.1.1', ...rules.keys()],
      },
      allowlist(['1.1.1.1/32']),
    ],
    ['denyOut ALL_TRAFFIC alone leaves nothing reachable', { denyOut: [ALL_TRAFFIC] }, allowlist([])],
    [
      'a denyOut without ALL_TRAFFIC is open with those denied',
      { denyOut: ['8.8.8.8', '10.0.0.0/8'] },
      open(['8.8.8.8/32', '10.0.0.0/8']),
    ],
    [
      'allowOut wins over denyOut: what allowOut names or covers is not denied',
      { denyOut: ['8.8.8.8', '1.1.1.0/24', '9.9.9.9'], allowOut: ['8.8.8.8', '1.0.0.0/8'] },
      open(['9.9.9.9/32']),
    ],
    ['allowOut alone restricts nothing', { allowOut: ['1.1.1.1', 'pypi.org'] }, open()],
    ['allowOut ALL_TRAFFIC opens everything', { denyOut: [ALL_TRAFFIC], allowOut: [ALL_TRAFFIC] }, open()],
    [
      "allowPublicTraffic true (E2B's default), empty rules and httpsPorts are accepted",
      { allowPublicTraffic: true, rules: {}, httpsPorts: [] },
      open(),
    ],
  ])('create: %s', async (_case, network, egress) => {
    await expect(Sandbox.create({ network })).rejects.toBeInstanceOf(AuthenticationError);
    expect(requests.map((r) => [r.method, r.url])).toEqual([['POST', '/v1/sandboxes']]);
    expect(body(0).egress).toEqual(egress);
    expect(body(0)).toMatchObject({ template: 'sdk-base', allowInternetAccess: true });
  });

  it('create with allowInternetAccess false and a network leaving nothing open: closed, on sdk-base-caps', async () => {
    await expect(
      Sandbox.create({ allowInternetAccess: false, network: { denyOut: ['8.8.8.8'] } }),
    ).rejects.toBeInstanceOf(AuthenticationError);
    expect(body(0)).toMatchObject({
      template: 'sdk-base-caps',
      allowInternetAccess: false,
      egress: { mode: 'closed', allow: [], deny: [] },
    });
  });

  it('create from a snapshot id sends the policy too', async () => {
    await expect(
      Sandbox.create('snap_0123456789abcdef', {
        network: { denyOut: [ALL_TRAFFIC], allowOut: ['pypi.org'] },
      }),
    ).rejects.toBeInstanceOf(AuthenticationError);
    expect(body(0)).toMatchObject({ snapshot: 'snap_0123456789abcdef', egress: allowlist(['pypi.org']) });
    expect(body(0)).not.toHaveProperty('template');
  });

  describe('refusals before any call', () => {
    afterEach(() => {
      expect(requests).toEqual([]);
    });

    it.each<[string, SandboxNetworkOpts]>([
      ['network.allowPublicTraffic', { allowPublicTraffic: false }],
      ['network.maskRequestHost', { maskRequestHost: '${PORT}-mine.example.com' }],
      ['network.httpsPorts', { httpsPorts: [3000] }],
      ['network.rules', { rules: { 'api.example.com': [{ transform: { headers: { A: 'b' } } }] } }],
      ['network.rules', { rules: new Map([['api.example.com', []]]) }],
      ['network.egressProxy', { egressProxy: { address: 'proxy.example.com:1080' } }],
      // An allow entry inside a denied range only works with an allowlist here.
      ['network.allowOut[1]', { denyOut: ['8.0.0.0/8'], allowOut: ['1.1.1.1', '8.8.8.0/24'] }],
      ['network.allowOut[0]', { denyOut: ['*.example.com'], allowOut: ['api.example.com'] }],
    ])('%s is NotSupportedError naming it', async (feature, network) => {
      const error = await failure(Sandbox.create({ network }));
      expect(error).toBeInstanceOf(NotSupportedError);
      expect(error).toMatchObject({ feature, code: 'not_supported' });
    });

    it.each<[string, unknown, RegExp]>([
      ['network.allowOut[1]', { allowOut: ['1.1.1.1', '2001:db8::/32'] }, /IPv6 is not routed/],
      ['network.denyOut[0]', { denyOut: ['pypi.org:443'] }, /without a scheme, port or path/],
      ['network.denyOut[0]', { denyOut: [42] }, /must be a string/],
      ['network.denyOut', { denyOut: () => 'all' }, /must be a list/],
      ['network.colour', { colour: 'red' }, /not an option of E2B's network/],
      ['network', 'closed', /network must be an object/],
    ])('%s is InvalidArgumentError naming it', async (field, network, message) => {
      const error = await failure(Sandbox.create({ network: network as SandboxNetworkOpts }));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toBeInstanceOf(NativeInvalidArgumentError);
      expect((error as Error).message).toMatch(message);
      expect(((error as Error).cause as NativeInvalidArgumentError).field).toBe(field);
    });

    it('refuses allowOut with allowInternetAccess false (here closed egress), saying how to get an allowlist', async () => {
      for (const allowOut of [['pypi.org'], [ALL_TRAFFIC]]) {
        const error = await failure(Sandbox.create({ allowInternetAccess: false, network: { allowOut } }));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toMatch(/denyOut: \[ALL_TRAFFIC\], allowOut/);
      }
    });

    it('updateNetwork checks its network, the id and the key first', async () => {
      await expect(Sandbox.updateNetwork(SBX, { rules: { a: [{}] } })).rejects.toMatchObject({
        name: 'NotSupportedError',
        feature: 'network.rules',
      });
      await expect(Sandbox.updateNetwork(SBX, { egressProxy: { address: 'p:1080' } })).rejects.toMatchObject({
        feature: 'network.egressProxy',
      });
      await expect(
        Sandbox.updateNetwork(SBX, { allowPublicTraffic: true } as SandboxNetworkUpdate),
      ).rejects.toBeInstanceOf(InvalidArgumentError); // a create option only
      await expect(Sandbox.updateNetwork(SBX, { allowInternetAccess: 'no' as never })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      await expect(Sandbox.updateNetwork(SBX, undefined as never)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      await expect(Sandbox.updateNetwork('not-an-id', {})).rejects.toBeInstanceOf(SandboxNotFoundError);
      await expect(Sandbox.updateNetwork(SBX, {}, { domain: 'e2b.app' })).rejects.toMatchObject({
        feature: 'domain',
      });
      Reflect.deleteProperty(process.env, 'SDK_API_KEY');
      await expect(Sandbox.updateNetwork(SBX, {})).rejects.toBeInstanceOf(AuthenticationError);
    });
  });

  it.each<[string, SandboxNetworkUpdate, unknown]>([
    [
      'an allowlist',
      { denyOut: [ALL_TRAFFIC], allowOut: ['1.1.1.1', '*.PyPI.org'] },
      allowlist(['1.1.1.1/32', '*.pypi.org']),
    ],
    ['denied entries', { denyOut: ['8.8.8.8'] }, open(['8.8.8.8/32'])],
    ["{} (E2B's update clears what is left out)", {}, open()],
    ['allowInternetAccess false (denyOut ALL_TRAFFIC)', { allowInternetAccess: false }, allowlist([])],
    [
      'allowInternetAccess false with allowOut',
      { allowInternetAccess: false, allowOut: ['1.1.1.1'] },
      allowlist(['1.1.1.1/32']),
    ],
    ['empty rules', { rules: new Map(), denyOut: ['10.0.0.0/8'] }, open(['10.0.0.0/8'])],
  ])('Sandbox.updateNetwork(id, %s) puts the policy with the key', async (_case, network, egress) => {
    await expect(Sandbox.updateNetwork(SBX, network)).rejects.toBeInstanceOf(AuthenticationError);
    expect(requests).toEqual([
      {
        method: 'PUT',
        url: `/v1/sandboxes/${SBX}/egress`,
        authorization: 'Bearer operator-key',
        body: egress,
      },
    ]);
  });

  it("sbx.updateNetwork puts the policy with the sandbox token; getInfo shows it as E2B's network", async () => {
    Reflect.deleteProperty(process.env, 'SDK_API_KEY');
    let egress: unknown = open();
    answer = ({ method, url: path, body: sent }) => {
      const info = { ...fakeSandboxInfo(SBX, 'running'), egress };
      if (method === 'POST' && path === `/v1/sandboxes/${SBX}/connect`) {
        return { status: 200, body: { ...info, daemonUrl: url, previewUrl: `${url}/{port}/` } };
      }
      if (method === 'GET' && path === `/v1/sandboxes/${SBX}`) return { status: 200, body: info };
      if (method === 'PUT' && path === `/v1/sandboxes/${SBX}/egress`) {
        egress = sent;
        return { status: 200, body: sent };
      }
      return undefined;
    };
    const sbx = await Sandbox.connect(SBX, { accessToken: 'sandbox-token' });
    expect((await sbx.getInfo()).network).toBeUndefined(); // open, nothing denied
    requests.length = 0;
    await sbx.updateNetwork({ denyOut: [ALL_TRAFFIC], allowOut: ['PyPI.org', '1.1.1.1'] });
    expect(requests.map((r) => [r.method, r.url, r.authorization, r.body])).toEqual([
      ['PUT', `/v1/sandboxes/${SBX}/egress`, 'Bearer sandbox-token', allowlist(['pypi.org', '1.1.1.1/32'])],
    ]);
    const network: SandboxNetworkInfo | undefined = (await sbx.getInfo()).network;
    expect(network).toEqual({ allowOut: ['pypi.org', '1.1.1.1/32'], denyOut: [ALL_TRAFFIC] });
    await sbx.updateNetwork({ denyOut: ['10.1.2.3/16'] });
    expect((await sbx.getInfo()).network).toEqual({ denyOut: ['10.1.0.0/16'] });
    egress = { mode: 'closed', allow: [], deny: [] };
    expect(await sbx.getInfo()).toMatchObject({ network: { denyOut: [ALL_TRAFFIC] } });
    // Refused before any call, as at create.
    requests.length = 0;
    await expect(sbx.updateNetwork({ rules: { a: [{}] } })).rejects.toMatchObject({
      feature: 'network.rules',
    });
    await expect(sbx.updateNetwork({ allowOut: ['::1'] })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.updateNetwork({}, { colour: 1 } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(requests).toEqual([]);
  });

  it("ALL_TRAFFIC is E2B's all-traffic CIDR", () => {
    expect(ALL_TRAFFIC).toBe('0.0.0.0/0');
  });
});
