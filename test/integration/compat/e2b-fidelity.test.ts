/**
 * E2B fidelity: programs written the way E2B's documentation and its JS SDK's own tests use the SDK
 * (sandbox lifecycle, commands, files, watch, listing), run through the shim against a real control
 * plane and real sandboxes, asserting what E2B says such a program observes: result shapes, field
 * names and types, enum values, error classes and defaults.
 */
import { beforeAll, describe, expect, it } from 'vitest';
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
  Secret,
  Template,
  TimeoutError,
  Volume,
  type FilesystemEvent,
} from '../../../sdk/compat/e2b/index.js';
import { eventSeen, useShimSandbox } from './shim-world.js';

const { sandbox } = useShimSandbox(() => Sandbox.create('base', { envs: { FOO: 'bar' } }));
let sbx: Sandbox;
beforeAll(() => {
  sbx = sandbox();
});

describe('E2B programs: commands', () => {
  it('runs echo with special characters and multiline text; the user, home and cwd are E2B’s', async () => {
    for (const text of ['Hello, World!', '!@#$%^&*()_+', 'Hello,\nWorld!']) {
      const cmd = await sbx.commands.run(`echo "${text}"`);
      expect(cmd.exitCode).toBe(0);
      expect(cmd.stdout).toBe(`${text}\n`);
    }
    // As E2B's docs print a result.
    expect(Object.keys(await sbx.commands.run('true'))).toEqual(['exitCode', 'error', 'stdout', 'stderr']);
    const who = await sbx.commands.run('whoami; echo "$HOME"; pwd');
    expect(who.stdout).toBe('user\n/home/user\n/home/user\n');
    expect(await sbx.commands.run('echo ok', { timeoutMs: 4000, user: 'user' })).toEqual({
      exitCode: 0,
      stdout: 'ok\n',
      stderr: '',
    });
  });

  it("sandbox-wide envs (create's), command-scoped envs not kept for the next command", async () => {
    expect((await sbx.commands.run('echo $FOO')).stdout.trim()).toBe('bar');
    const scoped = await sbx.commands.run('echo $SCOPED', { envs: { SCOPED: 'only here' } });
    expect(scoped.stdout.trim()).toBe('only here');
    expect((await sbx.commands.run('echo "$SCOPED"')).stdout.trim()).toBe('');
    // E2B's envd gives every command these two.
    expect((await sbx.commands.run('echo "$E2B_SANDBOX $E2B_SANDBOX_ID $E2B_TEMPLATE_ID"')).stdout).toBe(
      `true ${sbx.sandboxId} sdk-base\n`,
    );
    const again = await Sandbox.connect(sbx.sandboxId);
    expect((await again.commands.run('echo "$E2B_TEMPLATE_ID"')).stdout).toBe('sdk-base\n');
  });

  it('a short timeout rejects with TimeoutError, foreground and background (wait)', async () => {
    const error = await sbx.commands.run('sleep 10', { timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as Error).name).toBe('TimeoutError');
    const handle = await sbx.commands.run('sleep 10', { timeoutMs: 2000, background: true });
    await expect(handle.wait()).rejects.toThrow(TimeoutError);
  });

  it('a background command streams to onStdout/onStderr, wait() gives its result', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const handle = await sbx.commands.run('for i in 1 2 3; do echo "line $i"; done; echo warn >&2', {
      background: true,
      onStdout: (data) => void out.push(data),
      onStderr: (data) => void err.push(data),
    });
    const result = await handle.wait();
    expect(result).toEqual({ exitCode: 0, stdout: 'line 1\nline 2\nline 3\n', stderr: 'warn\n' });
    expect(out.join('')).toBe(result.stdout);
    expect(err.join('')).toBe('warn\n');
    expect(handle.exitCode).toBe(0);
    expect(handle.error).toBeUndefined();
  });

  it('list: every process has pid, cmd, args and envs; connect by pid; kill of a missing pid is false', async () => {
    const first = await sbx.commands.run('sleep 10', { background: true });
    const second = await sbx.commands.run('sleep 10', { background: true });
    const processes = await sbx.commands.list();
    expect(processes.length).toBeGreaterThanOrEqual(2);
    for (const process of processes) {
      expect(typeof process.pid).toBe('number');
      expect(typeof process.cmd).toBe('string');
      expect(Array.isArray(process.args)).toBe(true);
      expect(typeof process.envs).toBe('object');
    }
    const connected = await sbx.commands.connect(first.pid);
    expect(connected.pid).toBe(first.pid);
    await sbx.commands.kill(first.pid);
    const probe = await sbx.commands.run(`kill -0 ${String(first.pid)}`).catch((e: unknown) => e);
    expect(probe).toBeInstanceOf(CommandExitError);
    expect((probe as CommandExitError).exitCode).toBe(1);
    expect(await sbx.commands.kill(999_999)).toBe(false);
    await expect(sbx.commands.connect(999_999)).rejects.toThrow(NotFoundError);
    expect(await second.kill()).toBe(true);
  });

  it('sendStdin to a command started with stdin: true (special characters, multiline)', async () => {
    for (const text of ['Hello, World!', '!@#$%^&*()_+', 'Hello,\nWorld!']) {
      const cmd = await sbx.commands.run('cat', { background: true, stdin: true });
      await sbx.commands.sendStdin(cmd.pid, text);
      await expect.poll(() => cmd.stdout).toBe(text);
      await cmd.kill();
    }
  });

  it('a sandbox killed while a command runs: wait() and later calls reject with TimeoutError, saying why', async () => {
    const own = await Sandbox.create({ timeoutMs: 60_000 });
    const cmd = await own.commands.run('sleep 60', { background: true });
    let watchEnd: unknown = 'running';
    await own.files.watchDir('.', () => undefined, {
      timeoutMs: 0,
      onExit: (err) => {
        watchEnd = err;
      },
    });
    expect(await own.kill()).toBe(true);
    await expect.poll(() => watchEnd, { timeout: 10_000 }).toBeInstanceOf(TimeoutError);
    const error = await cmd.wait().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('sandbox was killed or reached its end of life');
    // E2B's proxy answers for a sandbox that is gone, and its SDK says timeout: commands and files alike.
    await expect(own.commands.run('true')).rejects.toBeInstanceOf(TimeoutError);
    await expect(own.files.read('anything.txt')).rejects.toBeInstanceOf(TimeoutError);
    await expect(own.files.write('anything.txt', 'x')).rejects.toThrow(/end of life/);
    // The sandbox's own calls still say it is not found, as E2B's API does.
    await expect(own.getInfo()).rejects.toBeInstanceOf(SandboxNotFoundError);
  });
});

describe('E2B programs: files', () => {
  it('write returns WriteInfo; read back; overwrite; write into a new directory', async () => {
    const info = await sbx.files.write('test_write.txt', 'This is a test file.');
    expect(Array.isArray(info)).toBe(false);
    expect(info).toEqual({ name: 'test_write.txt', type: 'file', path: '/home/user/test_write.txt' });
    expect(await sbx.files.exists('test_write.txt')).toBe(true);
    await sbx.files.write('test_write.txt', 'New content.');
    expect(await sbx.files.read('test_write.txt')).toBe('New content.');
    await sbx.files.write('non_existing_dir/test_write.txt', 'This should succeed too.');
    expect(await sbx.files.read('non_existing_dir/test_write.txt')).toBe('This should succeed too.');
    // `useOctetStream` (E2B's upload encoding) is accepted: the content is the same.
    const content = 'Streamed octet-stream upload. '.repeat(1000);
    const streamed = await sbx.files.write('octet.bin', new Blob([content]).stream(), {
      useOctetStream: true,
    });
    expect(streamed.path).toBe('/home/user/octet.bin');
    expect(await sbx.files.read('octet.bin')).toBe(content);
  });

  it('write of many files: [] gives [], absolute and relative paths, every data type, E2B’s messages', async () => {
    expect(await sbx.files.write([])).toEqual([]);
    expect(await sbx.files.writeFiles([])).toEqual([]);
    const files = Array.from({ length: 6 }, (_, i) => ({
      path:
        i % 2 === 0
          ? `/tmp/multi/${String(i)}/file${String(i)}.txt`
          : `/home/user/multi_file${String(i)}.txt`,
      data: `This is a test file ${String(i)}.`,
    }));
    const infos = await sbx.files.write(files);
    expect(infos.map((i) => i.path)).toEqual(files.map((f) => f.path));
    for (const [i, file] of files.entries()) {
      expect(infos[i]).toMatchObject({ name: file.path.split('/').pop(), type: 'file' });
      expect(await sbx.files.read(file.path)).toBe(file.data);
    }
    const encoder = new TextEncoder();
    const typed = await sbx.files.writeFiles([
      { path: 'wf_text.txt', data: 'Text string data' },
      { path: 'wf_arraybuffer.txt', data: encoder.encode('ArrayBuffer data').buffer },
      { path: 'wf_blob.txt', data: new Blob(['Blob data'], { type: 'text/plain' }) },
      {
        path: 'wf_stream.txt',
        data: new ReadableStream({
          start(controller) {
            controller.enqueue(encoder.encode('ReadableStream data'));
            controller.close();
          },
        }),
      },
    ]);
    expect(typed).toHaveLength(4);
    expect(await sbx.files.read('wf_arraybuffer.txt')).toBe('ArrayBuffer data');
    expect(await sbx.files.read('wf_blob.txt')).toBe('Blob data');
    expect(await sbx.files.read('wf_stream.txt')).toBe('ReadableStream data');

    const noPath = await sbx.files.write(undefined as never, 'x').catch((e: unknown) => e);
    expect(noPath).toBeInstanceOf(InvalidArgumentError);
    expect((noPath as Error).message).toContain('Path or files are required');
    const both = await sbx.files
      .write('/path/to/file', [{ path: 'one.txt', data: 'x' }] as never)
      .catch((e: unknown) => e);
    expect(both).toBeInstanceOf(InvalidArgumentError);
    expect((both as Error).message).toContain('Cannot specify both path and array of files');
  });

  it('read in every format, of an empty file too; a missing file is FileNotFoundError (a NotFoundError)', async () => {
    await sbx.commands.run('touch empty-file.txt');
    expect(await sbx.files.read('empty-file.txt', { format: 'text' })).toBe('');
    const bytes = await sbx.files.read('empty-file.txt', { format: 'bytes' });
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(bytes.length).toBe(0);
    const blob = await sbx.files.read('empty-file.txt', { format: 'blob' });
    expect(blob).toBeInstanceOf(Blob);
    expect(blob.size).toBe(0);
    const empty = await sbx.files.read('empty-file.txt', { format: 'stream' });
    expect(empty).toBeInstanceOf(ReadableStream);

    const content = 'Streamed read content. '.repeat(10_000);
    await sbx.files.write('stream.txt', content);
    const stream = await sbx.files.read('stream.txt', { format: 'stream', streamIdleTimeoutMs: 0 });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString('utf-8')).toBe(content);

    for (const readMissing of [
      () => sbx.files.read('non_existing_file.txt'),
      () => sbx.files.read('non_existing_file.txt', { format: 'stream' }),
    ]) {
      const error = await readMissing().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FileNotFoundError);
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as Error).name).toBe('FileNotFoundError');
    }
  });

  it('list: default depth 1, deeper levels in walk order, entry details as envd gives them', async () => {
    const dir = 'test_directory';
    for (const sub of ['subdir1/subdir1_1', 'subdir1/subdir1_2', 'subdir2/subdir2_1', 'subdir2/subdir2_2']) {
      await sbx.files.makeDir(`${dir}/${sub}`);
    }
    await sbx.files.write(`${dir}/file1.txt`, 'Hello, world!');
    const one = await sbx.files.list(dir);
    expect(one.map((e) => [e.name, e.type])).toEqual([
      ['file1.txt', 'file'],
      ['subdir1', 'dir'],
      ['subdir2', 'dir'],
    ]);
    const two = await sbx.files.list(dir, { depth: 2 });
    expect(two.map((e) => e.path.slice(`/home/user/${dir}/`.length))).toEqual([
      'file1.txt',
      'subdir1',
      'subdir1/subdir1_1',
      'subdir1/subdir1_2',
      'subdir2',
      'subdir2/subdir2_1',
      'subdir2/subdir2_2',
    ]);
    expect(await sbx.files.list(dir, { depth: 3 })).toHaveLength(7);
    await expect(sbx.files.list(dir, { depth: -1 })).rejects.toThrow('depth should be at least one');

    const [file] = one;
    expect(file).toMatchObject({
      name: 'file1.txt',
      path: `/home/user/${dir}/file1.txt`,
      type: FileType.FILE,
      mode: 0o644,
      permissions: '-rw-r--r--',
      owner: 'user',
      group: 'user',
      size: 13,
    });
    expect(file?.symlinkTarget).toBeUndefined();
    expect(file?.modifiedTime).toBeInstanceOf(Date);
    expect(one[1]).toMatchObject({ type: 'dir', mode: 0o755, permissions: 'drwxr-xr-x', owner: 'user' });
  });

  it('getInfo, exists, makeDir (false when present), rename, remove (also of nothing)', async () => {
    await sbx.files.write('info_file.txt', 'test');
    const { stdout: cwd } = await sbx.commands.run('pwd');
    const info = await sbx.files.getInfo('info_file.txt');
    expect(info).toMatchObject({ name: 'info_file.txt', type: 'file', path: `${cwd.trim()}/info_file.txt` });
    await expect(sbx.files.getInfo('test_does_not_exist.txt')).rejects.toThrow(NotFoundError);

    expect(await sbx.files.makeDir('test_directory2')).toBe(true);
    expect(await sbx.files.makeDir('test_directory2')).toBe(false);
    expect(await sbx.files.makeDir('test_directory3/nested_directory')).toBe(true);
    expect(await sbx.files.exists('test_directory3/nested_directory')).toBe(true);

    const renamed = await sbx.files.rename('info_file.txt', 'renamed.txt');
    expect(renamed).toMatchObject({ name: 'renamed.txt', type: 'file', path: '/home/user/renamed.txt' });
    expect(await sbx.files.exists('info_file.txt')).toBe(false);
    expect(await sbx.files.read('renamed.txt')).toBe('test');
    await expect(sbx.files.rename('non_existing_file.txt', 'new.txt')).rejects.toThrow(NotFoundError);

    await sbx.files.remove('renamed.txt');
    expect(await sbx.files.exists('renamed.txt')).toBe(false);
    await expect(sbx.files.remove('non_existing_file.txt')).resolves.toBeUndefined();
  });

  it("a symlink's entry: the target's type and its absolute target, in getInfo and list; a dangling one stays a symlink", async () => {
    const { stdout: cwd } = await sbx.commands.run('pwd');
    const dir = `${cwd.trim()}/test-symlink-entry`;
    await sbx.files.write('test-symlink-entry/test.txt', 'Hello, World!');
    await sbx.commands.run('ln -s test.txt symlink_to_test.txt', { cwd: 'test-symlink-entry' });
    const link = await sbx.files.getInfo('test-symlink-entry/symlink_to_test.txt');
    expect(link).toMatchObject({
      name: 'symlink_to_test.txt',
      type: FileType.FILE, // the target's, as envd reports it (E2B's Python test asserts it)
      path: `${dir}/symlink_to_test.txt`,
      symlinkTarget: `${dir}/test.txt`, // absolute, resolved (E2B's JS test asserts it)
    });
    const listed = await sbx.files.list('test-symlink-entry');
    expect(listed.find((entry) => entry.name === 'symlink_to_test.txt')?.symlinkTarget).toBe(
      `${dir}/test.txt`,
    );
    expect(listed.find((entry) => entry.name === 'test.txt')?.symlinkTarget).toBeUndefined();
    await sbx.commands.run('ln -s missing.txt dangling.txt', { cwd: 'test-symlink-entry' });
    expect(await sbx.files.getInfo('test-symlink-entry/dangling.txt')).toMatchObject({
      type: FileType.SYMLINK,
      symlinkTarget: `${dir}/missing.txt`,
    });
    await sbx.files.remove('test-symlink-entry');
  });

  it('watchDir: writes of an existing file, a nested folder added then written (recursive), a file or missing dir refused', async () => {
    await sbx.files.makeDir('test_watch_dir');
    await sbx.files.write('test_watch_dir/test_watch.txt', 'This file will be watched.');
    const events: FilesystemEvent[] = [];
    let exitArgs: unknown[] | undefined;
    const handle = await sbx.files.watchDir('test_watch_dir', (event) => void events.push(event), {
      onExit: (...args: unknown[]) => {
        exitArgs = args;
      },
    });
    await sbx.files.write('test_watch_dir/test_watch.txt', 'This file has been modified.');
    await eventSeen(events, (e) => e.type === FilesystemEventType.WRITE && e.name === 'test_watch.txt');
    await handle.stop();
    // Stopped cleanly: onExit is called with no argument, as E2B's.
    await expect.poll(() => exitArgs).toEqual([]);

    await sbx.files.makeDir('test_recursive_watch_dir_add');
    const deep: FilesystemEvent[] = [];
    const recursive = await sbx.files.watchDir(
      'test_recursive_watch_dir_add',
      (event) => void deep.push(event),
      {
        recursive: true,
        allowNetworkMounts: false,
      },
    );
    await sbx.files.makeDir('test_recursive_watch_dir_add/nested');
    await eventSeen(deep, (e) => e.type === FilesystemEventType.CREATE && e.name === 'nested');
    await sbx.files.write('test_recursive_watch_dir_add/nested/test_watch.txt', 'content');
    await eventSeen(deep, (e) => e.type === FilesystemEventType.WRITE && e.name === 'nested/test_watch.txt');
    await recursive.stop();

    await expect(sbx.files.watchDir('non_existing_watch_dir', () => undefined)).rejects.toThrow(
      FileNotFoundError,
    );
    await expect(sbx.files.watchDir('test_watch_dir/test_watch.txt', () => undefined)).rejects.toThrow(
      SandboxError,
    );
  });
});

describe('E2B programs: sandbox lifecycle', () => {
  it('create(opts) and create(template, opts), connect by id, getInfo by id, isRunning false after kill', async () => {
    const own = await Sandbox.create({ timeoutMs: 60_000 });
    expect(typeof own.sandboxId).toBe('string');
    expect(await own.isRunning()).toBe(true);
    const again = await Sandbox.connect(own.sandboxId);
    expect(await again.isRunning()).toBe(true);
    const info = await Sandbox.getInfo(own.sandboxId);
    expect(info.sandboxId).toBe(own.sandboxId);
    expect(info.endAt).toBeInstanceOf(Date);
    expect(info.state).toBe('running');
    expect(info.metadata).toEqual({});
    // E2B's extra fields: no egress rules or lifecycle options set, no volumes.
    expect(info.volumeMounts).toEqual([]);
    expect(info.network).toBeUndefined();
    expect(info.lifecycle).toBeUndefined();
    expect(await own.kill()).toBe(true);
    expect(await own.isRunning()).toBe(false);
    const error = await Sandbox.connect(own.sandboxId).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'SandboxNotFoundError' });
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('a sandbox past its timeoutMs is no longer running; its calls then time out, as in E2B', async () => {
    const short = await Sandbox.create({ timeoutMs: 3_000 });
    expect(await short.isRunning()).toBe(true);
    await expect.poll(() => short.isRunning(), { timeout: 20_000, interval: 500 }).toBe(false);
    await expect(short.commands.run('true')).rejects.toBeInstanceOf(TimeoutError);
    expect(await Sandbox.kill(short.sandboxId)).toBe(false);
  });

  it("E2B's default template without internet access: commands run, egress is closed", async () => {
    const closed = await Sandbox.create({ allowInternetAccess: false, timeoutMs: 60_000 });
    try {
      expect(await closed.getInfo()).toMatchObject({
        allowInternetAccess: false,
        templateId: 'sdk-base-caps',
      });
      expect((await closed.commands.run('echo "$HOME"')).stdout).toBe('/home/user\n');
      const curl = await closed.commands
        .run('curl --connect-timeout 3 --max-time 5 -Is http://1.1.1.1')
        .catch((e: unknown) => e);
      expect(curl).toBeInstanceOf(CommandExitError);
      expect((curl as CommandExitError).exitCode).not.toBe(0);
      const listed = await Sandbox.list({ query: { template: 'base' } }).nextItems();
      expect(listed.map((s) => s.sandboxId)).toContain(closed.sandboxId);
    } finally {
      await closed.kill();
    }
  });

  it('Sandbox.kill of an id that does not exist is false; getInfo and connect say SandboxNotFoundError', async () => {
    expect(await Sandbox.kill('nonexistingsandbox')).toBe(false);
    expect(await Sandbox.kill('0123456789ab')).toBe(false);
    await expect(Sandbox.getInfo('nonexistingsandbox')).rejects.toThrow(SandboxNotFoundError);
    await expect(Sandbox.connect('nonexistingsandbox')).rejects.toThrow(SandboxNotFoundError);
  });

  it('connect with a timeoutMs shorter than the lifetime left does not shorten it; a longer one is refused by name', async () => {
    const own = await Sandbox.create({ timeoutMs: 300_000 });
    try {
      const before = await Sandbox.getInfo(own.sandboxId);
      await Sandbox.connect(own.sandboxId, { timeoutMs: 10_000 });
      await own.connect({ timeoutMs: 10_000 });
      expect((await own.getInfo()).endAt.getTime()).toBe(before.endAt.getTime());
      await expect(own.connect({ timeoutMs: 600_000 })).rejects.toMatchObject({
        name: 'NotSupportedError',
      });
      await expect(own.setTimeout(5000)).rejects.toBeInstanceOf(NotSupportedError);
    } finally {
      await own.kill();
    }
  });

  it('list: newest first by default, order asc/desc, limit pages with nextToken, state and template filters', async () => {
    const older = await Sandbox.create({ timeoutMs: 60_000 });
    const newer = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      const ids = [older.sandboxId, newer.sandboxId];
      const ours = (list: { sandboxId: string }[]): string[] =>
        list.map((s) => s.sandboxId).filter((id) => ids.includes(id));
      expect(ours(await Sandbox.list().nextItems())).toEqual([newer.sandboxId, older.sandboxId]);
      expect(ours(await Sandbox.list({ order: 'desc' }).nextItems())).toEqual([
        newer.sandboxId,
        older.sandboxId,
      ]);
      expect(ours(await Sandbox.list({ order: 'asc' }).nextItems())).toEqual([
        older.sandboxId,
        newer.sandboxId,
      ]);

      const paginator = Sandbox.list({ limit: 1, query: { state: ['running'] } });
      const first = await paginator.nextItems();
      expect(first).toHaveLength(1);
      expect(first[0]?.state).toBe('running');
      expect(paginator.hasNext).toBe(true);
      expect(paginator.nextToken).not.toBeUndefined();
      expect(first[0]?.sandboxId).toBe(newer.sandboxId);

      await older.pause();
      const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems();
      expect(paused.map((s) => [s.sandboxId, s.state])).toEqual([[older.sandboxId, 'paused']]);
      const byTemplate = await Sandbox.list({ query: { template: 'base' } }).nextItems();
      expect(byTemplate.map((s) => s.sandboxId)).toEqual(expect.arrayContaining(ids));
      expect(await Sandbox.list({ query: { template: 'no-such-template' } }).nextItems()).toEqual([]);
      expect(() => Sandbox.list({ query: { startedAfter: new Date() } })).toThrow(NotSupportedError);
      const resumed = await Sandbox.connect(older.sandboxId);
      expect(await resumed.isRunning()).toBe(true);
    } finally {
      await older.kill();
      await newer.kill();
    }
    const gone = await Sandbox.list({ query: { state: ['running'] } }).nextItems();
    expect(gone.map((s) => s.sandboxId)).not.toContain(older.sandboxId);
  });
});

describe("E2B programs: what only E2B's cloud has", () => {
  it('Template, Volume and Secret import, and refuse any use naming it', () => {
    expect(() => Template.build('template', { alias: 'mine' })).toThrow(NotSupportedError);
    expect(() => Template.build('template', { alias: 'mine' })).toThrow(/sdk template build/);
    expect(() => new Template()).toThrow(expect.objectContaining({ feature: 'Template' }) as Error);
    expect(() => Volume.create('data')).toThrow(
      expect.objectContaining({ feature: 'Volume.create' }) as Error,
    );
    expect(() => Secret.list()).toThrow(NotSupportedError);
  });

  it("a call's AbortSignal is refused by name, as in the connection options", async () => {
    const signal = AbortSignal.timeout(5000);
    await expect(sbx.commands.run('true', { signal } as never)).rejects.toMatchObject({
      name: 'NotSupportedError',
      feature: 'signal',
    });
    await expect(sbx.files.read('x.txt', { signal } as never)).rejects.toMatchObject({ feature: 'signal' });
    await expect(sbx.commands.list({ signal } as never)).rejects.toMatchObject({ feature: 'signal' });
  });

  it("Sandbox's statics for E2B's cloud refuse by name; getFullInfo is getInfo", async () => {
    for (const feature of ['updateNetwork', 'createSnapshot', 'deleteSnapshot', 'fork'] as const) {
      await expect(Sandbox[feature](sbx.sandboxId)).rejects.toMatchObject({
        name: 'NotSupportedError',
        feature: `Sandbox.${feature}`,
      });
    }
    expect(() => Sandbox.listSnapshots()).toThrow(NotSupportedError);
    expect((await Sandbox.getFullInfo(sbx.sandboxId)).sandboxId).toBe(sbx.sandboxId);
  });
});
