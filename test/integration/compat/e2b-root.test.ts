/**
 * Issue 25's "done when", for the shim: programs from E2B's documentation and its SDK's tests that write
 * outside the home or use `sudo`, changed only in their import, run against the shim as they do on E2B.
 * Writes and `makeDir` whose parent folders are missing (`/path/to/file`, `/0/multi_test_file0.txt`,
 * `/data/x`) make them owned by the calling account, as E2B's envd does; `user` has passwordless
 * `sudo`; `user: 'root'` runs commands and file calls as the sandbox's root. What stays the user's own
 * limit: writing a file straight into an existing folder only root may write to (`/etc`) is refused
 * with the shim's class for `permission_denied`, a `SandboxError` with that `code`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CommandExitError,
  FileNotFoundError,
  InvalidArgumentError,
  NotFoundError,
  Sandbox,
  SandboxError,
} from '../../../sdk/compat/e2b/index.js';
import { useShimSandbox } from './shim-world.js';

const { sandbox } = useShimSandbox(() => Sandbox.create());
let sbx: Sandbox;
beforeAll(() => {
  sbx = sandbox();
});

/** `stat -c "%U %a"` of each path, one line each, as the sandbox's user sees them. */
async function ownersOf(...paths: string[]): Promise<string> {
  return (await sbx.commands.run(`stat -c "%U %a" ${paths.join(' ')}`)).stdout;
}

describe('E2B programs that write outside the home or use sudo', () => {
  it("write('/path/to/file'): the missing folders under / are made, they and the file are the user's", async () => {
    const info = await sbx.files.write('/path/to/file', 'content');
    expect(info).toEqual({ name: 'file', type: 'file', path: '/path/to/file' });
    expect(await sbx.files.read('/path/to/file')).toBe('content');
    expect(await ownersOf('/path', '/path/to', '/path/to/file')).toBe('user 755\nuser 755\nuser 644\n');
    // The folders are the user's own: the user's later writes there need no sudo.
    expect((await sbx.commands.run('echo more > /path/to/other && cat /path/to/other')).stdout).toBe(
      'more\n',
    );
  });

  it('write of many files into a folder that does not exist under /', async () => {
    const infos = await sbx.files.write([
      { path: '/0/multi_test_file0.txt', data: 'x' },
      { path: '/0/multi_test_file1.txt', data: 'y' },
    ]);
    expect(infos).toEqual([
      { name: 'multi_test_file0.txt', type: 'file', path: '/0/multi_test_file0.txt' },
      { name: 'multi_test_file1.txt', type: 'file', path: '/0/multi_test_file1.txt' },
    ]);
    expect(await sbx.files.read('/0/multi_test_file0.txt')).toBe('x');
    expect(await sbx.files.read('/0/multi_test_file1.txt')).toBe('y');
    expect(await ownersOf('/0', '/0/multi_test_file0.txt', '/0/multi_test_file1.txt')).toBe(
      'user 755\nuser 644\nuser 644\n',
    );
  });

  it("makeDir('/data/x') makes /data and /data/x, the user's; false once they are there", async () => {
    expect(await sbx.files.makeDir('/data/x')).toBe(true);
    expect(await sbx.files.makeDir('/data/x')).toBe(false);
    expect(await sbx.files.getInfo('/data/x')).toMatchObject({
      name: 'x',
      type: 'dir',
      path: '/data/x',
      owner: 'user',
      group: 'user',
      permissions: 'drwxr-xr-x',
    });
    expect(await ownersOf('/data', '/data/x')).toBe('user 755\nuser 755\n');
    await sbx.files.write('/data/x/notes.txt', 'in the new folder');
    expect(await sbx.files.read('/data/x/notes.txt')).toBe('in the new folder');
  });

  it("sudo: 'sudo whoami' is root, without a password", async () => {
    expect(await sbx.commands.run('sudo whoami')).toEqual({ exitCode: 0, stdout: 'root\n', stderr: '' });
    // No password is asked for: sudo -n fails where one would be.
    expect((await sbx.commands.run('sudo -n true && echo no-password')).stdout).toBe('no-password\n');
  });

  it('sudo makes a folder under /opt and hands it to the user, who then writes there', async () => {
    const result = await sbx.commands.run(
      'sudo mkdir -p /opt/tool && sudo chown user /opt/tool && echo ok > /opt/tool/f && cat /opt/tool/f',
    );
    expect(result).toEqual({ exitCode: 0, stdout: 'ok\n', stderr: '' });
    expect(await ownersOf('/opt/tool', '/opt/tool/f')).toBe('user 755\nuser 644\n');
    expect(await sbx.files.read('/opt/tool/f')).toBe('ok\n');
  });

  it("commands.run('whoami', { user: 'root' }) is root, in /root", async () => {
    expect(await sbx.commands.run('whoami', { user: 'root' })).toEqual({
      exitCode: 0,
      stdout: 'root\n',
      stderr: '',
    });
    expect((await sbx.commands.run('id -u; pwd', { user: 'root' })).stdout).toBe('0\n/root\n');
    // The default is still the user.
    expect((await sbx.commands.run('whoami')).stdout).toBe('user\n');
  });

  it("files.write('/etc/e2b-test', …, { user: 'root' }) writes root's file; read back as root", async () => {
    const info = await sbx.files.write('/etc/e2b-test', 'x', { user: 'root' });
    expect(info).toEqual({ name: 'e2b-test', type: 'file', path: '/etc/e2b-test' });
    expect(await sbx.files.read('/etc/e2b-test', { user: 'root' })).toBe('x');
    expect(await sbx.files.getInfo('/etc/e2b-test', { user: 'root' })).toMatchObject({
      owner: 'root',
      group: 'root',
      permissions: '-rw-r--r--',
    });
    expect(await ownersOf('/etc/e2b-test')).toBe('root 644\n');
    // Root's missing parents are root's.
    await sbx.files.write('/srv/root-only/f', 'r', { user: 'root' });
    expect(await ownersOf('/srv/root-only', '/srv/root-only/f')).toBe('root 755\nroot 644\n');
  });

  it("a user's write straight into root's /etc is refused: SandboxError, code permission_denied", async () => {
    const error = await sbx.files.write('/etc/x', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).not.toBeInstanceOf(InvalidArgumentError);
    expect(error).not.toBeInstanceOf(NotFoundError);
    expect(error).not.toBeInstanceOf(FileNotFoundError);
    expect((error as SandboxError).name).toBe('SandboxError');
    expect((error as SandboxError).code).toBe('permission_denied');
    // Nothing was written, and /etc is still root's.
    expect(await sbx.files.exists('/etc/x')).toBe(false);
    expect(await ownersOf('/etc')).toBe('root 755\n');
    // The same write with sudo's help (as a shell program would) works.
    const tee = await sbx.commands.run('echo x | sudo tee /etc/x > /dev/null && cat /etc/x');
    expect(tee.stdout).toBe('x\n');
    // The user's own shell is refused the same way: a CommandExitError, as E2B's.
    const shell = await sbx.commands.run('echo y > /etc/y').catch((e: unknown) => e);
    expect(shell).toBeInstanceOf(CommandExitError);
    expect((shell as CommandExitError).stderr).toContain('Permission denied');
  });
});
