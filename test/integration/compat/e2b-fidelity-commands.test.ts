/**
 * E2B fidelity, commands: programs written the way E2B's documentation and its JS SDK's own tests run
 * commands (foreground, background, envs, timeouts, stdin, list, connect, kill), through the shim against
 * a real control plane and sandbox, asserting what E2B says such a program observes: result shapes,
 * field names and types, error classes and defaults.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CommandExitError,
  NotFoundError,
  Sandbox,
  SandboxError,
  SandboxNotFoundError,
  TimeoutError,
} from '../../../sdk/compat/e2b/index.js';
import { useShimSandbox } from './shim-world.js';

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
