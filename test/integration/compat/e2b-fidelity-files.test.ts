/**
 * E2B fidelity, files: programs written the way E2B's documentation and its JS SDK's own tests use
 * `sbx.files` (write, read in every format, list, getInfo, makeDir, rename, remove, symlinks, watchDir),
 * through the shim against a real control plane and sandbox, asserting what E2B says such a program
 * observes: result shapes, field names and types, enum values, error classes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FileNotFoundError,
  FileType,
  FilesystemEventType,
  InvalidArgumentError,
  NotFoundError,
  Sandbox,
  SandboxError,
  type FilesystemEvent,
} from '../../../sdk/compat/e2b/index.js';
import { eventSeen, useShimSandbox } from './shim-world.js';

const { sandbox } = useShimSandbox(() => Sandbox.create('base', { envs: { FOO: 'bar' } }));
let sbx: Sandbox;
beforeAll(() => {
  sbx = sandbox();
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
