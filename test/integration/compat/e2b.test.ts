/**
 * Programs written for the E2B SDK, run against a real control plane and real sandboxes through the
 * shim with only the import changed (`sdk/compat/e2b` for `e2b`): written from what E2B's
 * documentation and SDK tests show (hello world, a failing command, a background command listed and
 * killed, stdin, timeouts, terminals, files written, read, listed and watched, reconnecting, pausing,
 * killing).
 * Then what SPEC "Compatibility shim" asks of the handle: no `agent`, `gateways` refused, and the native
 * handle's `agent.run()` failing with `InvalidArgumentError` before any call.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AgentModel,
  AgentSpec,
  InvalidArgumentError as NativeInvalidArgumentError,
  type DaemonEvent,
} from '../../../sdk/index.js';
import {
  CommandExitError,
  FileNotFoundError,
  FileType,
  FilesystemEventType,
  InvalidArgumentError,
  NotFoundError,
  NotSupportedError,
  Sandbox,
  SandboxError,
  SandboxNotFoundError,
  TimeoutError,
  type FilesystemEvent,
} from '../../../sdk/compat/e2b/index.js';
import { eventSeen, useShimSandbox } from './shim-world.js';

/** The metadata of the file's sandbox: E2B's tests tag theirs (`sandboxTestId`) and list by it. */
const TAG = { sandboxTestId: `e2b-${String(process.pid)}`, role: 'shim' };
const { cp, sandbox } = useShimSandbox(() =>
  Sandbox.create({ envs: { GREETING: 'hello from envs' }, metadata: TAG }),
);
let sbx: Sandbox;
beforeAll(() => {
  sbx = sandbox();
});

describe('an E2B program: sandbox and commands', () => {
  it('hello world: create from the default template, run, read the result', async () => {
    const result = await sbx.commands.run('echo "Hello, World!"');
    expect(result).toEqual({ exitCode: 0, stdout: 'Hello, World!\n', stderr: '' });
    const info = await sbx.getInfo();
    expect(info).toMatchObject({ sandboxId: sbx.sandboxId, templateId: 'sdk-base', state: 'running' });
    // E2B's default lifetime: 5 minutes from create.
    expect(info.endAt.getTime() - Date.now()).toBeGreaterThan(200_000);
    expect(info.endAt.getTime() - Date.now()).toBeLessThanOrEqual(300_000);
    expect(await sbx.isRunning()).toBe(true);
  });

  it("runs in /home/user with the sandbox envs, a command's own envs winning, and output callbacks", async () => {
    const out: string[] = [];
    const result = await sbx.commands.run('pwd; echo "$GREETING"; echo "$OWN" >&2', {
      envs: { OWN: 'own value' },
      onStdout: (data) => {
        out.push(data);
      },
    });
    expect(result.stdout).toBe('/home/user\nhello from envs\n');
    expect(result.stderr).toBe('own value\n');
    expect(out.join('')).toBe(result.stdout);
    expect((await sbx.commands.run('echo "$GREETING"', { envs: { GREETING: 'mine' } })).stdout).toBe(
      'mine\n',
    );
    await sbx.files.makeDir('sub');
    expect((await sbx.commands.run('pwd', { cwd: 'sub' })).stdout).toBe('/home/user/sub\n');
  });

  it('a failing command throws CommandExitError with its result', async () => {
    const error = await sbx.commands.run('echo partial; echo oops >&2; exit 3').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CommandExitError);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({
      exitCode: 3,
      stdout: 'partial\n',
      stderr: 'oops\n',
      error: 'exit status 3',
    });
  });

  it('a background command: listed as E2B runs it, re-attached by pid, killed (then kill says false)', async () => {
    const handle = await sbx.commands.run('echo started; sleep 30', { background: true, timeoutMs: 0 });
    expect(handle.pid).toBeGreaterThan(0);
    // E2B's envd runs `/bin/bash -l -c <cmd>`, and so does the shim.
    expect((await sbx.commands.list()).find((p) => p.pid === handle.pid)).toEqual({
      pid: handle.pid,
      cmd: '/bin/bash',
      args: ['-l', '-c', 'echo started; sleep 30'],
      envs: {},
    });
    expect((await sbx.commands.run('echo "$0"; shopt -q login_shell && echo login')).stdout).toBe(
      '/bin/bash\nlogin\n',
    );
    const again = await sbx.commands.connect(handle.pid);
    await expect.poll(() => again.stdout).toBe('started\n');
    expect(await sbx.commands.kill(handle.pid)).toBe(true);
    const ended = await handle.wait().catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(CommandExitError);
    expect((ended as CommandExitError).exitCode).toBe(-1);
    expect((ended as CommandExitError).error).toMatch(/^signal: (killed|terminated)$/);
    expect(handle.exitCode).toBe(-1);
    await expect(sbx.commands.run(`kill -0 ${String(handle.pid)}`)).rejects.toBeInstanceOf(CommandExitError);
    expect((await sbx.commands.list()).map((p) => p.pid)).not.toContain(handle.pid);
    expect(await sbx.commands.kill(handle.pid)).toBe(false);
    expect(await handle.kill()).toBe(false);
    expect(await sbx.commands.kill(999_999)).toBe(false);
    const second = await sbx.commands.run('sleep 30', { background: true });
    expect(await second.kill()).toBe(true);
    await expect(second.wait()).rejects.toMatchObject({ exitCode: -1 });
    await expect(sbx.commands.kill(0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.commands.connect(999_999)).rejects.toBeInstanceOf(SandboxError);
  });

  it('stdin: closed unless asked for, as in E2B; open with stdin: true for sendStdin', async () => {
    // Without `stdin: true` a command reading stdin sees end of file at once.
    expect(await sbx.commands.run('cat; echo done')).toMatchObject({ exitCode: 0, stdout: 'done\n' });
    const cat = await sbx.commands.run('cat', { background: true, stdin: true });
    await cat.sendStdin('line one\n');
    await sbx.commands.sendStdin(cat.pid, 'line two\n');
    await expect.poll(() => cat.stdout).toBe('line one\nline two\n');
    await cat.closeStdin();
    expect(await cat.wait()).toMatchObject({ exitCode: 0, stdout: 'line one\nline two\n' });
  });

  it('a command past timeoutMs ends with TimeoutError, foreground and background', async () => {
    await expect(sbx.commands.run('sleep 10', { timeoutMs: 1000 })).rejects.toBeInstanceOf(TimeoutError);
    const handle = await sbx.commands.run('sleep 10', { timeoutMs: 1000, background: true });
    await expect(handle.wait()).rejects.toBeInstanceOf(TimeoutError);
    expect(await sbx.commands.run('echo quick', { timeoutMs: 4000 })).toMatchObject({ exitCode: 0 });
  });

  it("runs user: 'root' as the sandbox's root, in /root, as E2B does; refuses any other user", async () => {
    expect((await sbx.commands.run('id -u; pwd', { user: 'root' })).stdout).toBe('0\n/root\n');
    await sbx.files.write('/etc/sdk-test', 'as root', { user: 'root' });
    expect(await sbx.files.read('/etc/sdk-test', { user: 'root' })).toBe('as root');
    expect((await sbx.files.getInfo('/etc/sdk-test')).owner).toBe('root');
    const error = await sbx.commands.run('id', { user: 'nobody' as 'user' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toBe("commands.run: user must be 'user' or 'root'");
    expect((await sbx.commands.run('id -u', { user: 'user' })).stdout).toBe('1000\n');
  });
});

/** A terminal's screen as `onData` fills it, and a wait for text on it (events, never a clock). */
class Screen {
  text = '';
  readonly #decoder = new TextDecoder();
  readonly #waiters = new Set<() => void>();
  readonly onData = (data: Uint8Array): void => {
    expect(data).toBeInstanceOf(Uint8Array);
    this.text += this.#decoder.decode(data, { stream: true });
    for (const wake of this.#waiters) wake();
  };

  /** Resolves once the screen shows `pattern` (after `from`). */
  async shows(pattern: RegExp, from = 0): Promise<void> {
    while (!pattern.test(this.text.slice(from))) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiters.delete(wake);
          resolve();
        };
        this.#waiters.add(wake);
      });
    }
  }
}

const typed = (text: string): Uint8Array => new Uint8Array(Buffer.from(text));

// E2B's tests/sandbox/pty: ptyCreate, sendInput, resize, ptyConnect, kill.
describe('an E2B program: terminals', () => {
  it('create with cols and rows: input by pid, output to onData, envs, resize, exit 0', async () => {
    const screen = new Screen();
    const terminal = await sbx.pty.create({
      cols: 80,
      rows: 24,
      onData: screen.onData,
      envs: { ABC: '123' },
    });
    expect(terminal.pid).toBeGreaterThan(0);
    // E2B's envd runs `/bin/bash -i -l` on a terminal, and so does the shim.
    expect((await sbx.commands.list()).find((p) => p.pid === terminal.pid)).toEqual({
      pid: terminal.pid,
      cmd: '/bin/bash',
      args: ['-i', '-l'],
      envs: {},
    });
    // The typed line shows `$((6*7))`; only the output shows 42.
    await sbx.pty.sendInput(
      terminal.pid,
      typed('echo "[$ABC] [$TERM] [$LC_ALL] $((6*7)) $PWD"; stty size\n'),
    );
    await screen.shows(/\[123\] \[xterm-256color\] \[C\.UTF-8\] 42 \/home\/user/);
    await screen.shows(/[\r\n]24 80\r?\n/);
    await sbx.pty.resize(terminal.pid, { cols: 100, rows: 30 });
    const from = screen.text.length;
    await sbx.pty.sendInput(terminal.pid, typed('stty size\n'));
    // bash ends bracketed paste (`ESC[?2004l`, then CR) before a command's output.
    await screen.shows(/[\r\n]30 100\r?\n/, from);
    await sbx.pty.sendInput(terminal.pid, typed('exit 0\n'));
    expect(await terminal.wait()).toEqual({ exitCode: 0, error: undefined, stdout: '', stderr: '' });
    expect(terminal.exitCode).toBe(0);
    expect(terminal.stdout).toBe('');
    await expect(sbx.pty.resize(terminal.pid, { cols: 0, rows: 24 })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
  });

  it('connect by pid from another handle (screen replayed), root, kill (then false), exit status, timeoutMs', async () => {
    const first = new Screen();
    const terminal = await sbx.pty.create({
      cols: 80,
      rows: 24,
      onData: first.onData,
      user: 'root',
      timeoutMs: 0,
    });
    await sbx.pty.sendInput(terminal.pid, typed('echo "uid-$(id -u) $PWD"\n'));
    await first.shows(/uid-0 \/root/);
    await terminal.disconnect();
    // As another process would: another handle on the sandbox, the terminal's pid.
    const other = await Sandbox.connect(sbx.sandboxId);
    const second = new Screen();
    const again = await other.pty.connect(terminal.pid, { onData: second.onData });
    expect(again.pid).toBe(terminal.pid);
    await second.shows(/uid-0 \/root/); // what sandboxd kept of the screen, first
    const from = second.text.length;
    await other.pty.sendInput(terminal.pid, typed('echo "again-$((2+3))"\n'));
    await second.shows(/again-5/, from);
    expect(first.text).not.toMatch(/again-5/); // disconnected: no more callbacks
    await expect(again.sendStdin('x')).rejects.toThrow(
      'Sending stdin is not supported for this command handle.',
    );
    expect(await other.pty.kill(terminal.pid)).toBe(true);
    const killed = await again.wait().catch((e: unknown) => e);
    expect(killed).toBeInstanceOf(CommandExitError);
    expect(killed).toMatchObject({ exitCode: -1, stdout: '', stderr: '' });
    expect((killed as CommandExitError).error).toMatch(/^signal: (killed|terminated)$/);
    // A disconnected handle follows nothing (as E2B's, whose stream is closed): its wait() cannot say.
    const unknown = await terminal.wait().catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(SandboxError);
    expect(unknown).not.toBeInstanceOf(CommandExitError);
    await expect(sbx.commands.run(`kill -0 ${String(terminal.pid)}`)).rejects.toBeInstanceOf(
      CommandExitError,
    );
    expect(await sbx.pty.kill(terminal.pid)).toBe(false);
    expect(await sbx.pty.kill(999_999)).toBe(false);
    await expect(sbx.pty.sendInput(999_999, typed('x'))).rejects.toBeInstanceOf(NotFoundError);

    // A non-zero exit is CommandExitError; E2B's deadline (60 s unless given) ends a terminal with TimeoutError.
    const failing = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined });
    await sbx.pty.sendInput(failing.pid, typed('exit 3\n'));
    await expect(failing.wait()).rejects.toMatchObject({ exitCode: 3, error: 'exit status 3' });
    const short = await sbx.pty.create({ cols: 80, rows: 24, onData: () => undefined, timeoutMs: 1000 });
    await expect(short.wait()).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('an E2B program: files', () => {
  it('writes, reads (text, bytes, blob, stream), lists, stats, renames and removes, relative to /home/user', async () => {
    const written = await sbx.files.write('notes/hello.txt', 'Hello, files!');
    expect(written).toEqual({ name: 'hello.txt', type: FileType.FILE, path: '/home/user/notes/hello.txt' });
    expect(await sbx.files.read('notes/hello.txt')).toBe('Hello, files!');
    expect(await sbx.files.read('/home/user/notes/hello.txt', { format: 'bytes' })).toEqual(
      new TextEncoder().encode('Hello, files!'),
    );
    // gzip is E2B's compression on the wire: accepted, the content is the same.
    expect(await sbx.files.read('notes/hello.txt', { gzip: true })).toBe('Hello, files!');
    const blob = await sbx.files.read('notes/hello.txt', { format: 'blob' });
    expect(await blob.text()).toBe('Hello, files!');
    const stream = await sbx.files.read('notes/hello.txt', { format: 'stream' });
    expect(await new Response(stream).text()).toBe('Hello, files!');

    const entries = await sbx.files.list('notes');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      name: 'hello.txt',
      type: FileType.FILE,
      path: '/home/user/notes/hello.txt',
      size: 13,
      permissions: '-rw-r--r--',
      owner: 'user',
      group: 'user',
    });
    expect(entries[0]?.modifiedTime).toBeInstanceOf(Date);
    expect(await sbx.files.exists('notes/hello.txt')).toBe(true);
    expect(await sbx.files.exists('notes/missing.txt')).toBe(false);
    expect(await sbx.files.getInfo('notes')).toMatchObject({ type: FileType.DIR, name: 'notes' });

    expect(await sbx.files.makeDir('notes/deeper/still')).toBe(true);
    expect(await sbx.files.makeDir('notes/deeper/still')).toBe(false);
    expect((await sbx.files.list('notes', { depth: 2 })).map((e) => e.path).sort()).toEqual([
      '/home/user/notes/deeper',
      '/home/user/notes/deeper/still',
      '/home/user/notes/hello.txt',
    ]);
    const moved = await sbx.files.rename('notes/hello.txt', 'notes/deeper/moved.txt');
    expect(moved).toMatchObject({ name: 'moved.txt', path: '/home/user/notes/deeper/moved.txt' });
    await sbx.files.remove('notes');
    expect(await sbx.files.exists('notes')).toBe(false);
    await sbx.files.remove('notes'); // nothing there: not an error, as in E2B (envd's RemoveAll)
  });

  it('refuses per-file metadata, naming it (files carry none here)', async () => {
    await expect(sbx.files.write('meta.txt', 'x', { metadata: { k: 'v' } })).rejects.toMatchObject({
      name: 'NotSupportedError',
      feature: 'metadata',
    });
    expect(await sbx.files.exists('meta.txt')).toBe(false);
  });

  it('writes many files in one call, and binary data', async () => {
    const infos = await sbx.files.write([
      { path: 'many/a.txt', data: 'a' },
      { path: '/home/user/many/b.bin', data: new Uint8Array([0, 1, 2, 255]).buffer },
      { path: 'many/c.txt', data: new Blob(['from a blob']) },
    ]);
    expect(infos.map((i) => i.path)).toEqual([
      '/home/user/many/a.txt',
      '/home/user/many/b.bin',
      '/home/user/many/c.txt',
    ]);
    expect(await sbx.files.read('many/b.bin', { format: 'bytes' })).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(await sbx.files.read('many/c.txt')).toBe('from a blob');
    // A bad path anywhere in the list: nothing is written.
    await expect(
      sbx.files.write([
        { path: 'many/d.txt', data: 'd' },
        { path: 'bad\0path', data: 'x' },
      ]),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await sbx.files.exists('many/d.txt')).toBe(false);
  });

  it('a missing file is FileNotFoundError; a directory read is an InvalidArgumentError with its code', async () => {
    await expect(sbx.files.read('no/such/file.txt')).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sbx.files.getInfo('no-such-entry')).rejects.toBeInstanceOf(FileNotFoundError);
    await expect(sbx.files.read('/home/user')).rejects.toMatchObject({ code: 'is_a_directory' });
    await expect(sbx.files.read('/home/user')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sbx.files.list('/etc/shadow')).rejects.toBeInstanceOf(SandboxError);
  });

  it('watchDir reports writes by relative name, recursively when asked, until stop', async () => {
    await sbx.files.makeDir('watched/nested');
    const events: FilesystemEvent[] = [];
    let exited = false;
    const handle = await sbx.files.watchDir(
      'watched',
      (event) => {
        events.push(event);
      },
      {
        onExit: () => {
          exited = true;
        },
      },
    );
    await sbx.files.write('watched/file.txt', 'one');
    await eventSeen(events, (e) => e.type === FilesystemEventType.CREATE && e.name === 'file.txt');
    await sbx.files.write('watched/file.txt', 'two');
    await eventSeen(events, (e) => e.type === FilesystemEventType.WRITE && e.name === 'file.txt');
    await handle.stop();
    await expect.poll(() => exited).toBe(true);

    const deep: FilesystemEvent[] = [];
    const recursive = await sbx.files.watchDir('watched', (event) => void deep.push(event), {
      recursive: true,
    });
    await sbx.files.write('watched/nested/inner.txt', 'deep');
    await eventSeen(deep, (e) => e.name === 'nested/inner.txt');
    await sbx.files.remove('watched/nested/inner.txt');
    await eventSeen(deep, (e) => e.type === FilesystemEventType.REMOVE && e.name === 'nested/inner.txt');
    await recursive.stop();

    const withEntries: FilesystemEvent[] = [];
    const detailed = await sbx.files.watchDir('watched', (event) => void withEntries.push(event), {
      includeEntry: true,
    });
    await sbx.files.write('watched/detailed.txt', 'four');
    await eventSeen(withEntries, (e) => e.name === 'detailed.txt' && e.entry !== undefined);
    expect(withEntries.find((e) => e.entry !== undefined)?.entry).toMatchObject({
      name: 'detailed.txt',
      path: '/home/user/watched/detailed.txt',
      type: FileType.FILE,
    });
    await detailed.stop();
    await expect(sbx.files.watchDir('no-such-dir', () => undefined)).rejects.toBeInstanceOf(
      FileNotFoundError,
    );
  });

  it('a watch ends at its timeoutMs with onExit(TimeoutError)', async () => {
    await sbx.files.makeDir('timed');
    let exit: Error | undefined | 'not yet' = 'not yet';
    await sbx.files.watchDir('timed', () => undefined, {
      timeoutMs: 500,
      onExit: (err) => {
        exit = err;
      },
    });
    await expect.poll(() => exit).toBeInstanceOf(TimeoutError);
  });
});

describe('an E2B program: lifecycle', () => {
  it('reconnects by id, pauses and resumes, lists, and kills', async () => {
    const own = await Sandbox.create({ timeoutMs: 120_000 });
    await own.files.write('state.txt', 'kept');
    const again = await Sandbox.connect(own.sandboxId);
    expect(again.sandboxId).toBe(own.sandboxId);
    expect(await again.files.read('state.txt')).toBe('kept');
    // create's envs are sandboxd's, not the first handle's: a second handle's commands have them.
    const second = await Sandbox.connect(sbx.sandboxId);
    expect((await second.commands.run('echo "$GREETING"')).stdout).toBe('hello from envs\n');

    const listed = await Sandbox.list().nextItems();
    expect(listed.map((i) => i.sandboxId)).toEqual(expect.arrayContaining([own.sandboxId, sbx.sandboxId]));
    const pages = Sandbox.list({ limit: 1 });
    const seen: string[] = [];
    while (pages.hasNext) {
      const page = await pages.nextItems();
      expect(page).toHaveLength(1);
      seen.push(...page.map((i) => i.sandboxId));
    }
    expect(seen).toEqual(expect.arrayContaining([own.sandboxId, sbx.sandboxId]));
    expect(pages.nextToken).toBeUndefined();
    await expect(pages.nextItems()).rejects.toThrow(/No more items/);
    expect(() => Sandbox.list({ limit: 0 })).toThrow(InvalidArgumentError);

    expect(await own.pause()).toBe(true);
    expect(await own.isRunning()).toBe(false);
    expect(await own.pause()).toBe(false);
    expect((await Sandbox.getInfo(own.sandboxId)).state).toBe('paused');
    const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems();
    expect(paused.map((i) => i.sandboxId)).toEqual([own.sandboxId]);
    const resumed = await Sandbox.connect(own.sandboxId);
    expect(await resumed.isRunning()).toBe(true);
    expect((await resumed.commands.run('cat state.txt')).stdout).toBe('kept');

    expect(await own.kill()).toBe(true);
    expect(await own.kill()).toBe(false);
    expect(await own.isRunning()).toBe(false);
    await expect(Sandbox.connect(own.sandboxId)).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(Sandbox.getInfo(own.sandboxId)).rejects.toBeInstanceOf(SandboxNotFoundError);
    expect(await Sandbox.kill(own.sandboxId)).toBe(false);
  });

  it("getHost: E2B's host of a port over plain HTTP, reached once the port is public (E2B's default) or with its token", async () => {
    const app = await sbx.commands.run(
      `node -e "require('http').createServer((q, s) => s.end('hello ' + q.url)).listen(3000, '127.0.0.1')"`,
      { background: true, timeoutMs: 0 },
    );
    try {
      const host = sbx.getHost(3000);
      expect(host).toBe(`${new URL(cp.url).host}/v1/sandboxes/${sbx.sandboxId}/ports/3000`);
      const token = { 'x-sdk-preview-token': sbx.native.ports.token(3000) };
      // A closed port answers 502 until the app listens.
      await expect.poll(async () => (await fetch(`http://${host}/`, { headers: token })).status).toBe(200);
      expect((await fetch(`http://${host}/`)).status).toBe(401); // private until exposed
      await sbx.native.ports.expose(3000, { public: true });
      const page = await fetch(`http://${host}/api?x=1`);
      expect([page.status, await page.text()]).toEqual([200, 'hello /api?x=1']);
      // E2B's `https://${host}` with no path: here http, and the redirect to the slash is followed.
      const bare = await fetch(`http://${host}`);
      expect([bare.status, await bare.text(), bare.redirected]).toEqual([200, 'hello /', true]);
    } finally {
      await sbx.native.ports.expose(3000, { public: false });
      await app.kill();
    }
  });

  it("refuses on a handle what only E2B's cloud has, naming it", async () => {
    expect(() => sbx.getMcpUrl()).toThrow(NotSupportedError);
    expect(() => sbx.trafficAccessToken).toThrow(NotSupportedError);
    for (const feature of ['getMcpToken', 'uploadUrl', 'downloadUrl'] as const) {
      await expect((sbx[feature] as () => Promise<never>)()).rejects.toMatchObject({
        name: 'NotSupportedError',
        feature,
      });
    }
    expect(() => sbx.git).toThrow(NotSupportedError);
  });

  it("reads the sandbox's metrics in E2B's shape, on the handle and by id", async () => {
    const samples = await sbx.getMetrics();
    expect(samples.length).toBeGreaterThan(0);
    const latest = samples.at(-1);
    expect(latest?.timestamp).toBeInstanceOf(Date);
    expect(latest).toMatchObject({ cpuCount: 1, memTotal: 512 * 2 ** 20 });
    expect(Object.keys(latest ?? {}).sort()).toEqual(
      ['cpuCount', 'cpuUsedPct', 'diskTotal', 'diskUsed', 'memTotal', 'memUsed', 'timestamp'].sort(),
    );
    if (latest === undefined) throw new Error('no sample');
    const byId = await Sandbox.getMetrics(sbx.sandboxId, { end: latest.timestamp });
    expect(byId.at(-1)).toEqual(latest);
    expect(await sbx.getMetrics({ start: new Date(Date.now() + 3_600_000) })).toEqual([]);
  });

  it('create with metadata, list by it, setTimeout, getInfo shows the metadata and the new end', async () => {
    const listed = await Sandbox.list({
      query: { metadata: { sandboxTestId: TAG.sandboxTestId } },
    }).nextItems();
    expect(listed.map((s) => [s.sandboxId, s.metadata])).toEqual([[sbx.sandboxId, TAG]]);
    expect(listed[0]?.startedAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(await Sandbox.list({ query: { metadata: { ...TAG, role: 'other' } } }).nextItems()).toEqual([]);
    expect(await Sandbox.list({ query: { metadata: TAG, state: ['paused'] } }).nextItems()).toEqual([]);
    const before = await sbx.getInfo();
    await sbx.setTimeout(600_000); // longer than E2B's 5 minutes of create
    const longer = await sbx.getInfo();
    expect(longer.metadata).toEqual(TAG);
    expect(longer.startedAt).toEqual(before.startedAt);
    expect(longer.endAt.getTime()).toBeGreaterThan(before.endAt.getTime());
    expect(longer.endAt.getTime() - Date.now()).toBeGreaterThan(500_000);
    await Sandbox.setTimeout(sbx.sandboxId, 400_000); // by id with the key; shorter again
    const shorter = await Sandbox.getInfo(sbx.sandboxId);
    expect(shorter.endAt.getTime()).toBeLessThan(longer.endAt.getTime());
    expect(shorter.metadata).toEqual(TAG);
    // Past 8 h from its creation: E2B's InvalidArgumentError, nothing changed.
    await expect(sbx.setTimeout(8 * 3_600_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect((await sbx.getInfo()).endAt).toEqual(shorter.endAt);
  });

  it('kills by id with the key (Sandbox.kill)', async () => {
    const other = await Sandbox.create();
    expect(await Sandbox.kill(other.sandboxId)).toBe(true);
    await expect(other.commands.run('true')).rejects.toBeInstanceOf(SandboxError);
  });

  it('creates from another template as given, with closed egress', async () => {
    const caps = await Sandbox.create('sdk-base-caps', { allowInternetAccess: false });
    try {
      expect(await caps.getInfo()).toMatchObject({ templateId: 'sdk-base-caps', allowInternetAccess: false });
    } finally {
      await caps.kill();
    }
  });
});

describe('SPEC "Compatibility shim"', () => {
  it('the shim handle has no agent; gateways are refused before anything is launched', async () => {
    expect('agent' in sbx).toBe(false);
    expect((sbx as unknown as Record<string, unknown>)['agent']).toBeUndefined();
    const before = await cp.driver.list();
    await expect(Sandbox.create({ gateways: {} } as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await cp.driver.list()).toEqual(before);
  });

  it('sbx.native.agent.run() fails with InvalidArgumentError before any call to the sandbox', async () => {
    const seen: DaemonEvent[] = [];
    const subscription = sbx.native.events$.subscribe((event) => seen.push(event));
    try {
      const spec = new AgentSpec({
        model: new AgentModel({ provider: 'vendor_b', id: 'model-1', gateway: 'llm' }),
      });
      const error = await sbx.native.agent.run('fix the tests', { spec }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NativeInvalidArgumentError);
      expect((error as NativeInvalidArgumentError).field).toBe('spec.model.gateway');
      // A marker command after it: the feed is in order, so every call before the marker is in by then.
      await sbx.commands.run('echo agent-marker');
      await expect
        .poll(() =>
          seen.some((e) => e.type === 'process' && e.command?.includes('echo agent-marker') === true),
        )
        .toBe(true);
      const calls = seen.flatMap((e) => (e.type === 'call' ? [e.endpoint] : []));
      expect(calls.filter((endpoint) => endpoint.includes('/agent'))).toEqual([]);
    } finally {
      subscription.unsubscribe();
    }
  });
});
