import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Commands, type CommandRunOptions } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { AuthenticationError, InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { isRunning } from '../../support/processes.js';
import { startSandboxd, type LocalSandboxd } from '../support/sandboxd.js';

let daemon: LocalSandboxd;
let home: string;
let commands: Commands;
const DAEMON_ONLY = 'daemon-env-marker-41c2';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'sdk-home-'));
  chmodSync(home, 0o777);
  daemon = await startSandboxd(home, { DAEMON_MARKER: DAEMON_ONLY });
  commands = new Commands(new DaemonClient({ url: daemon.url, accessToken: daemon.token }));
});

afterAll(async () => {
  await daemon.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('commands.run', () => {
  it('runs through a shell as uid 1000 and returns stdout, stderr and the exit code', async () => {
    const result = await commands.run('id -u; id -g; pwd; echo oops >&2; exit 3');
    expect(result).toEqual({ stdout: `1000\n1000\n${home}\n`, stderr: 'oops\n', exitCode: 3, signal: null });
  });

  it('gives the command a clean environment with the envs asked for, nothing of the daemon', async () => {
    const { stdout } = await commands.run('env', { envs: { GREETING: 'hi there' }, cwd: '/tmp' });
    expect(stdout).toContain('GREETING=hi there');
    expect(stdout).toContain(`HOME=${home}`);
    expect(stdout).not.toContain(DAEMON_ONLY);
    expect((await commands.run('pwd', { cwd: '/tmp' })).stdout).toBe('/tmp\n');
  });

  it('streams output to callbacks as it is written', async () => {
    const seen: string[] = [];
    const result = await commands.run('printf one; sleep 0.2; printf two >&2; sleep 0.2; printf three', {
      onStdout: (data) => seen.push(`out:${data}`),
      onStderr: (data) => seen.push(`err:${data}`),
    });
    expect(seen).toEqual(['out:one', 'err:two', 'out:three']);
    expect(result.stdout).toBe('onethree');
  });

  it('keeps binary output intact', async () => {
    const { stdout } = await commands.run("printf '\\303\\251\\342\\202\\254'");
    expect(stdout).toBe('é€');
  });

  it('runs in the background, lets another client re-attach by pid, and takes stdin', async () => {
    const handle = await commands.run('read line; echo "got $line"; cat', { background: true });
    expect(handle.pid).toBeGreaterThan(0);
    await handle.sendStdin('first\n');
    const other = new Commands(new DaemonClient({ url: daemon.url, accessToken: daemon.token }));
    const attached = await other.connect(handle.pid);
    await attached.sendStdin('rest');
    await attached.closeStdin();
    expect((await attached.wait()).stdout).toBe('got first\nrest');
    expect((await handle.wait()).exitCode).toBe(0);
    expect((await other.list()).find((p) => p.pid === handle.pid)?.running).toBe(false);
  });

  it('kills the whole tree and nothing outside it', async () => {
    const outside = await commands.run('sleep 300', { background: true });
    const tree = await commands.run('sleep 300 & sh -c "sleep 300 & wait" & echo started; wait', {
      background: true,
    });
    // Its two sleeps and the inner shell (whose own sleep may still be forking).
    await expect.poll(async () => (await descendants(tree.pid)).length).toBeGreaterThanOrEqual(3);
    const members = [tree.pid, ...(await descendants(tree.pid))];
    await tree.kill();
    const result = await tree.wait();
    // Ended by the tree kill's signal (SIGTERM first, SIGKILL if it still ran): no exit status.
    expect(result.exitCode).toBeNull();
    expect(['SIGTERM', 'SIGKILL']).toContain(result.signal);
    await expect.poll(() => members.filter(isRunning)).toEqual([]);
    expect(isRunning(outside.pid)).toBe(true);
    await outside.kill();
    await outside.wait();
  });

  it('ends a command and its tree at timeoutMs', async () => {
    const started = Date.now();
    const result = await commands.run('sh -c "sleep 30" & sleep 30', { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.signal).toBe('SIGTERM');
  });

  it('refuses bad options with InvalidArgumentError before any call', async () => {
    const offline = new Commands(new DaemonClient({ url: 'http://127.0.0.1:9', accessToken: 'x' }));
    await expect(offline.run('')).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(offline.run('true', { cwd: 'relative' })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(offline.run('true', { envs: { 'BAD-NAME': '1' } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(offline.run('true', { timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(offline.connect(5, { onStdout: 'print' as unknown as () => void })).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      field: 'onStdout',
    });
  });

  it("takes 'user' or 'root': any other user is refused before any call", async () => {
    const offline = new Commands(new DaemonClient({ url: 'http://127.0.0.1:9', accessToken: 'x' }));
    for (const user of ['nobody', 'USER', '']) {
      const options = { user, background: true } as unknown as CommandRunOptions & { background: true };
      const refused = await offline.run('id -u', options).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect(refused).toMatchObject({ code: 'invalid_argument', field: 'user' });
      expect((refused as Error).message).toBe("commands.run: user: must be 'user' or 'root'");
    }
    expect((await commands.run('id -u', { user: 'user' })).stdout).toBe('1000\n');
  });

  it('refuses root on a sandboxd outside any sandbox with invalid_argument on user, starting nothing', async () => {
    const before = (await commands.list()).length;
    for (const background of [true, false] as const) {
      const refused = await commands
        .run('id -u', { user: 'root', background } as CommandRunOptions & { background: true })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect(refused).toMatchObject({ code: 'invalid_argument', field: 'user' });
      expect((refused as Error).message).toMatch(/^commands\.run: user: 'root' exists only inside a sandbox/);
    }
    expect((await commands.list()).length).toBe(before);
  });

  it('reports an unknown pid as SandboxError process_not_found', async () => {
    await expect(commands.connect(999_999)).rejects.toMatchObject({ code: 'process_not_found' });
    await expect(commands.connect(999_999)).rejects.toBeInstanceOf(SandboxError);
  });
});

describe('daemon authentication', () => {
  it.each([
    ['a wrong token', 'not-the-token-0123456789'],
    ['an empty token', ''],
  ])('answers %s with AuthenticationError', async (_, token) => {
    const intruder = new Commands(new DaemonClient({ url: daemon.url, accessToken: token }));
    await expect(intruder.run('true')).rejects.toBeInstanceOf(AuthenticationError);
    await expect(intruder.list()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('answers health without a token and nothing else', async () => {
    const health = await fetch(`${daemon.url}/v1/health`);
    expect(health.status).toBe(200);
    const version = await fetch(`${daemon.url}/v1/version`);
    expect(version.status).toBe(401);
    expect(await version.json()).toMatchObject({ code: 'unauthenticated' });
  });
});

async function readChildren(pid: number): Promise<number[]> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(`/proc/${String(pid)}/task/${String(pid)}/children`, 'utf8').catch(() => '');
  return text.trim() === '' ? [] : text.trim().split(' ').map(Number);
}

async function descendants(pid: number): Promise<number[]> {
  const direct = await readChildren(pid);
  const nested = await Promise.all(direct.map(descendants));
  return [...direct, ...nested.flat()];
}
