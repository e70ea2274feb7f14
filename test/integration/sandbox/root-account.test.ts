/**
 * Issue 25, the API side, in real sandboxes of the namespace driver behind a control plane: commands
 * and files as `user: 'root'` (the root of the sandbox's own user namespace, home `/root`), and writes
 * whose parent folders are missing making them as E2B's envd does, owned by the calling account: as the
 * user also where the parent is root's (`/path/to/file`, E2B's `/0/multi_test_file0.txt`), the folders
 * made by root and handed to the user (uid and gid 1000) before the file is written as the user. A
 * folder that was there keeps its owner, and a root-owned one still refuses the user's own files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../rules/errors.js';
import type { FilesystemEvent } from '../../../sdk/files-watch.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { useControlPlane } from '../support/control-plane-hooks.js';
import { codeOf } from '../support/files-daemon.js';

const cp = useControlPlane();
let sbx: Sandbox;

beforeAll(async () => {
  sbx = await cp.createSandbox();
});

afterAll(async () => {
  await sbx.kill();
});

/** `[uid, gid]` of what `path` names, as the user sees it. */
async function ownerOf(path: string): Promise<[number, number]> {
  const { uid, gid } = await sbx.files.getInfo(path);
  return [uid, gid];
}

describe("commands as user: 'root'", () => {
  it('run as uid 0 in /root, with HOME /root; the user stays uid 1000 in its home', async () => {
    expect(await sbx.commands.run('id -u', { user: 'root' })).toMatchObject({ stdout: '0\n', exitCode: 0 });
    expect((await sbx.commands.run('id -u; id -g; pwd; echo $HOME', { user: 'root' })).stdout).toBe(
      '0\n0\n/root\n/root\n',
    );
    expect((await sbx.commands.run('id -u; pwd')).stdout).toBe('1000\n/home/user\n');
    expect((await sbx.commands.run('id -u', { user: 'user' })).stdout).toBe('1000\n');
  });

  it("never start the user's command in a folder the user may not search (root's /root)", async () => {
    await sbx.commands.run(
      'mkdir -p /root/private && echo secret > /root/private/f && chmod 755 /root/private && chmod 644 /root/private/f',
      { user: 'root' },
    );
    // Found in CI of issue 25: the user's process entered its cwd before its capabilities were dropped.
    const refused = await sbx.commands.run('cat f', { cwd: '/root/private' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'sandbox_error',
      message: expect.stringContaining('cwd EACCES') as unknown,
    });
    expect((await sbx.commands.run('cat f', { cwd: '/root/private', user: 'root' })).stdout).toBe('secret\n');
  });

  it('run in the background, listed and re-attached like any command', async () => {
    const handle = await sbx.commands.run('read line; id -u; echo "$line"', {
      user: 'root',
      background: true,
    });
    await handle.sendStdin('from the caller\n');
    expect(await handle.wait()).toMatchObject({ stdout: '0\nfrom the caller\n', exitCode: 0 });
    expect((await sbx.commands.list()).some((p) => p.pid === handle.pid)).toBe(true);
    expect((await (await sbx.commands.connect(handle.pid)).wait()).stdout).toBe('0\nfrom the caller\n');
  });

  it("may change the sandbox's system files, which the user may then read", async () => {
    expect(
      await sbx.commands.run('echo made-by-root > /etc/sdk-root-command && chmod 644 /etc/sdk-root-command', {
        user: 'root',
      }),
    ).toMatchObject({ exitCode: 0 });
    expect((await sbx.commands.run('cat /etc/sdk-root-command')).stdout).toBe('made-by-root\n');
    expect(await ownerOf('/etc/sdk-root-command')).toEqual([0, 0]);
  });
});

describe("files as user: 'root'", () => {
  it('write a file in /etc that reads back, owned by root', async () => {
    const written = await sbx.files.write('/etc/sdk-test', 'written by root\n', { user: 'root' });
    expect(written).toMatchObject({ path: '/etc/sdk-test', type: 'file', uid: 0, gid: 0 });
    expect(await sbx.files.read('/etc/sdk-test', { user: 'root' })).toBe('written by root\n');
    expect(await sbx.files.read('/etc/sdk-test')).toBe('written by root\n'); // 0644: the user reads it
    // The user may not write root's file, nor make files in root's folder.
    expect(await codeOf(sbx.files.write('/etc/sdk-test', 'by the user'))).toBe('permission_denied');
    expect(await codeOf(sbx.files.write('/etc/sdk-user-planted', 'x'))).toBe('permission_denied');
    expect(await sbx.files.exists('/etc/sdk-user-planted')).toBe(false);
  });

  it('read, list, stat, rename, remove and watch what only root may reach', async () => {
    await sbx.files.write('/root/secret.txt', 'root only', { user: 'root' });
    expect(await codeOf(sbx.files.read('/root/secret.txt'))).toBe('permission_denied');
    expect(await sbx.files.read('/root/secret.txt', { user: 'root' })).toBe('root only');
    expect((await sbx.files.list('/root', { user: 'root' })).map((e) => e.name)).toContain('secret.txt');
    expect(await sbx.files.exists('/root/secret.txt', { user: 'root' })).toBe(true);
    expect(await sbx.files.getInfo('/root/secret.txt', { user: 'root' })).toMatchObject({ uid: 0 });

    const events: FilesystemEvent[] = [];
    const watch = await sbx.files.watchDir('/root', (event) => void events.push(event), { user: 'root' });
    try {
      const renamed = await sbx.files.rename('/root/secret.txt', '/root/moved.txt', { user: 'root' });
      expect(renamed).toMatchObject({ path: '/root/moved.txt', uid: 0 });
      await expect.poll(() => events.some((e) => e.name === 'moved.txt')).toBe(true);
    } finally {
      await watch.stop();
    }
    await sbx.files.remove('/root/moved.txt', { user: 'root' });
    expect(await sbx.files.exists('/root/moved.txt', { user: 'root' })).toBe(false);
  });

  it("make missing parents root's, as root", async () => {
    await sbx.files.write('/srv/root-made/deep/file.txt', 'x', { user: 'root' });
    expect(await ownerOf('/srv/root-made')).toEqual([0, 0]);
    expect(await ownerOf('/srv/root-made/deep')).toEqual([0, 0]);
    expect(await sbx.files.makeDir('/opt/root-dir/nested', { user: 'root' })).toBe(true);
    expect(await ownerOf('/opt/root-dir')).toEqual([0, 0]);
  });
});

describe("the user's writes with missing parents (E2B's envd makes them)", () => {
  it('make /path and /path/to for /path/to/file, owned by the user, and write the file as the user', async () => {
    const written = await sbx.files.write('/path/to/file', 'hello');
    expect(written).toMatchObject({ path: '/path/to/file', type: 'file', uid: 1000, gid: 1000 });
    expect(await ownerOf('/path')).toEqual([1000, 1000]);
    expect(await ownerOf('/path/to')).toEqual([1000, 1000]);
    expect(await sbx.files.read('/path/to/file')).toBe('hello');
    expect(await ownerOf('/')).toEqual([0, 0]); // what was there keeps its owner
  });

  it("make /0 for E2B's /0/multi_test_file0.txt, in a write of many", async () => {
    const written = await sbx.files.write([
      { path: '/0/multi_test_file0.txt', data: 'This is a test file 0' },
      { path: '/1/multi_test_file1.txt', data: 'This is a test file 1' },
    ]);
    expect(written.map((e) => [e.path, e.uid, e.gid])).toEqual([
      ['/0/multi_test_file0.txt', 1000, 1000],
      ['/1/multi_test_file1.txt', 1000, 1000],
    ]);
    expect(await ownerOf('/0')).toEqual([1000, 1000]);
    expect(await ownerOf('/1')).toEqual([1000, 1000]);
    expect(await sbx.files.read('/0/multi_test_file0.txt')).toBe('This is a test file 0');
  });

  it('make a directory and its missing parents the user’s (makeDir), false once it is there', async () => {
    expect(await sbx.files.makeDir('/data/nested')).toBe(true);
    expect(await ownerOf('/data')).toEqual([1000, 1000]);
    expect(await ownerOf('/data/nested')).toEqual([1000, 1000]);
    expect(await sbx.files.makeDir('/data/nested')).toBe(false);
    // The user's own folder: its files are the user's to make without root.
    await sbx.files.write('/data/nested/notes.txt', 'mine');
    expect((await sbx.commands.run('cat /data/nested/notes.txt')).stdout).toBe('mine');
  });

  it('leave a root-owned folder that was there as it was: a file in it is still refused', async () => {
    expect(await codeOf(sbx.files.write('/usr/sdk-user-file', 'x'))).toBe('permission_denied');
    expect(await ownerOf('/usr')).toEqual([0, 0]);
    // A new folder under it is made and handed over, as envd makes it; /usr itself stays root's.
    await sbx.files.write('/usr/sdk-user-folder/file', 'x');
    expect(await ownerOf('/usr/sdk-user-folder')).toEqual([1000, 1000]);
    expect(await ownerOf('/usr')).toEqual([0, 0]);
  });

  it('refuse bad input with a typed error before any folder is made', async () => {
    await expect(sbx.files.write('relative/parent/file', 'x')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(
      sbx.files.write('/never-made/file', 'x', { user: 'nobody' as 'user' }),
    ).rejects.toMatchObject({ name: 'InvalidArgumentError', field: 'user' });
    expect(await sbx.files.exists('/never-made')).toBe(false);
    // A file where a folder should be: not_a_directory, and nothing made below it.
    await sbx.files.write('/path/plain', 'x');
    expect(await codeOf(sbx.files.write('/path/plain/sub/file', 'x'))).toBe('not_a_directory');
    expect(await codeOf(sbx.files.makeDir('/path/plain/sub'))).toBe('not_a_directory');
  });
});
