/**
 * The `sdk-agent` template (issues 11 and 14): an image of its own with opencode and rg at /opt/agents
 * (the runtime `npm run template:agent` builds, laid in as a layer), read-only for sandbox code; its
 * memory default; and the commands' memory cgroup,
 * under which the sandbox's root creates a child cgroup per agent execution and the driver removes
 * every child at destroy.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sandboxdPid } from '../support/namespace-sandbox.js';
import { NamespaceDriver } from '../../../sandbox-drivers/namespace/namespace-driver.js';
import { cgroupPaths } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { claimsOf, sandboxdId } from '../../../sandbox-drivers/namespace/uid-ranges.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';

const execFileAsync = promisify(execFile);

/** Where `npm run template:agent` builds the folder (the driver's default). */
const AGENTS_BUILD = fileURLToPath(new URL('../../../templates/sdk-agent/build/opt-agents', import.meta.url));

let cp: InProcessControlPlane;
let agent: Sandbox;

beforeAll(async () => {
  if (!existsSync(join(AGENTS_BUILD, 'bin', 'opencode'))) {
    throw new Error('the sdk-agent template is not built: run `npm run template:agent` first');
  }
  cp = await startControlPlane();
  agent = await cp.createSandbox({ template: 'sdk-agent' });
});

afterAll(async () => {
  await cp.stop();
});

/** The user's memory cgroup limit of a sandbox, MiB, read on the host. */
const userMemoryMb = (sbx: Sandbox): number =>
  Number(
    readFileSync(
      join(cgroupPaths(cp.driver.instance, sbx.sandboxId).userMemory, 'memory.limit_in_bytes'),
      'utf8',
    ),
  ) /
  2 ** 20;

const sandboxdPidOf = (sbx: Sandbox): string => sandboxdPid(cp.driver.instance, sbx.sandboxId);

/** sandboxd's host uid and gid. */
const sandboxdIdOf = (sbx: Sandbox): number => {
  const range = claimsOf(cp.driver.instance).get(sbx.sandboxId);
  if (range === undefined) throw new Error('no uid range');
  return sandboxdId(range);
};

/**
 * Runs `script` as sandboxd does, in its mount namespace and root and as its host uid: stdout, or
 * `exit <code>: <stderr>` when it fails.
 */
async function asSandboxd(sbx: Sandbox, script: string): Promise<string> {
  try {
    const id = String(sandboxdIdOf(sbx));
    const { stdout } = await execFileAsync('nsenter', [
      `--target=${sandboxdPidOf(sbx)}`,
      '--mount',
      '--root', // sandboxd's root folder, not its mount namespace's
      '--wd',
      `--setuid=${id}`,
      `--setgid=${id}`,
      '/bin/sh',
      '-c',
      script,
    ]);
    return stdout;
  } catch (error) {
    const { code, stderr } = error as { code: number; stderr: string };
    return `exit ${String(code)}: ${stderr}`;
  }
}

describe('the sdk-agent template', () => {
  it('runs opencode and rg from /opt/agents as the sandbox user', async () => {
    const opencode = await agent.commands.run('id -u; /opt/agents/bin/opencode --version');
    expect(opencode.stdout).toBe('1000\n1.18.33\n');
    const rg = await agent.commands.run('/opt/agents/bin/rg --version');
    expect(rg.stdout).toMatch(/^ripgrep \d+\.\d+\.\d+/);
    // rg searches as the agent's grep tool does.
    const search = await agent.commands.run(
      'mkdir -p ~/w && echo needle > ~/w/a.txt && /opt/agents/bin/rg -l needle ~/w',
    );
    expect(search.stdout).toBe('/home/user/w/a.txt\n');
  });

  it("keeps /opt/agents the sandbox root's, read-only for the sandbox user, and with no host path", async () => {
    const { stdout } = await agent.commands.run(
      'stat -c "%a %U %n" /opt /opt/agents /opt/agents/bin /opt/agents/bin/opencode /opt/agents/bin/rg; ' +
        'for p in /opt/agents /opt/agents/bin /opt/agents/bin/opencode /opt/agents/bin/rg; do ' +
        '[ -w "$p" ] && echo "writable $p"; done; ' +
        '(touch /opt/agents/x || mkdir /opt/agents/bin/y || rm -f /opt/agents/bin/rg || chmod 777 /opt/agents/bin/rg) 2>/dev/null && echo changed; ' +
        'echo end',
    );
    expect(stdout).toBe(
      [
        '755 root /opt',
        '755 root /opt/agents',
        '755 root /opt/agents/bin',
        '755 root /opt/agents/bin/opencode',
        '755 root /opt/agents/bin/rg',
        'end',
        '',
      ].join('\n'),
    );
    const mounts = await agent.commands.run('cat /proc/self/mountinfo');
    for (const hostPath of [process.cwd(), '/work', AGENTS_BUILD])
      expect(mounts.stdout).not.toContain(hostPath);
  });

  it('gets at least 1 GiB of memory by default; an explicit memoryMb wins', async () => {
    expect(userMemoryMb(agent)).toBeGreaterThanOrEqual(1024);
    const small = await cp.createSandbox({ template: 'sdk-agent', memoryMb: 768 });
    const base = await cp.createSandbox();
    try {
      expect(userMemoryMb(small)).toBe(768);
      expect(userMemoryMb(base)).toBe(512);
    } finally {
      await Promise.all([small.kill(), base.kill()]);
    }
  });

  it('has no /opt/agents in a sandbox of sdk-base-caps, and /opt is reachable there too', async () => {
    const base = await cp.createSandbox();
    try {
      const { stdout } = await base.commands.run(
        'ls -A /opt; stat -c %a /opt; [ -e /opt/agents ] || echo none',
      );
      expect(stdout).toBe('sdk\n755\nnone\n');
    } finally {
      await base.kill();
    }
  });
});

describe("the commands' memory cgroup", () => {
  it('lets sandboxd make child cgroups but not change the limits, hides it from sandbox code, and destroy removes every child', async () => {
    const sbx = await cp.createSandbox({ template: 'sdk-agent' });
    const paths = cgroupPaths(cp.driver.instance, sbx.sandboxId);
    expect(statSync(paths.userMemory).uid).toBe(sandboxdIdOf(sbx));
    for (const file of ['memory.limit_in_bytes', 'memory.kmem.tcp.limit_in_bytes', 'memory.oom_control']) {
      expect(statSync(join(paths.userMemory, file)).uid).toBe(0);
    }

    // sandboxd, in its own root: a child per execution, and one below it.
    expect(
      await asSandboxd(
        sbx,
        'mkdir /run/sdk/memory/exec-1 /run/sdk/memory/exec-1/inner /run/sdk/memory/exec-2 && echo made',
      ),
    ).toBe('made\n');
    expect(existsSync(join(paths.userMemory, 'exec-1', 'inner', 'cgroup.procs'))).toBe(true);
    // ... but not the limits of `user`, nor anything of the sandbox's own cgroup.
    const limits = await asSandboxd(
      sbx,
      'for f in memory.limit_in_bytes memory.kmem.tcp.limit_in_bytes memory.oom_control memory.soft_limit_in_bytes; do ' +
        '(echo 1 > /run/sdk/memory/$f) 2>/dev/null && echo "wrote $f"; done; ' +
        '(chmod 666 /run/sdk/memory/memory.limit_in_bytes) 2>/dev/null && echo chmod; echo end',
    );
    expect(limits).toBe('end\n');
    expect(Number(readFileSync(join(paths.userMemory, 'memory.limit_in_bytes'), 'utf8'))).toBe(
      1024 * 2 ** 20,
    );
    // Sandbox code, its root included, has no cgroup filesystem at all (nor may it mount one).
    for (const user of ['user', 'root'] as const) {
      const seen = await sbx.commands.run(
        'grep -c cgroup /proc/self/mountinfo; ls /run/sdk/memory 2>/dev/null || echo none; mount -t cgroup -o memory cg /mnt 2>/dev/null || echo refused',
        { user },
      );
      expect({ user, out: seen.stdout }).toEqual({ user, out: '0\nnone\nrefused\n' });
    }

    // A sandbox process in the deepest child: destroy kills it, then removes children before `user`.
    await sbx.commands.run('sleep 300 >/dev/null 2>&1 &');
    const sleeper = await vi.waitFor(() => {
      const pid = readFileSync(join(paths.userMemory, 'cgroup.procs'), 'utf8')
        .split('\n')
        .find((p) => p !== '' && readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('sleep'));
      if (pid === undefined) throw new Error('the sleeper did not start');
      return pid;
    });
    writeFileSync(join(paths.userMemory, 'exec-1', 'inner', 'cgroup.procs'), sleeper);
    expect(readFileSync(join(paths.userMemory, 'exec-1', 'inner', 'cgroup.procs'), 'utf8')).toBe(
      `${sleeper}\n`,
    );

    await sbx.kill();
    expect(existsSync(paths.memory)).toBe(false);
    expect(existsSync(`/proc/${sleeper}`)).toBe(false);
    expect(await cp.driver.list()).not.toContain(sbx.sandboxId);
  });
});

describe('reconciliation', () => {
  it("removes a leftover sandbox's child cgroups too when a restarted driver destroys it", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'sdk-state-'));
    const first = new NamespaceDriver({ stateDir });
    const id = randomBytes(6).toString('hex');
    try {
      await first.launch({
        id,
        isolation: 'namespace',
        template: 'sdk-agent',
        allowInternetAccess: false,
        memoryBytes: 1024 * 2 ** 20,
        maxPids: 256,
        cpus: 1,
        accessToken: randomBytes(24).toString('base64url'),
      });
      const { userMemory, memory } = cgroupPaths(first.instance, id);
      mkdirSync(join(userMemory, 'exec-1', 'inner'), { recursive: true });
      first.close(); // the process that launched it is gone; the sandbox is a leftover
      const restarted = new NamespaceDriver({ stateDir });
      expect(await restarted.list()).toEqual([id]);
      await restarted.destroy(id);
      restarted.close();
      expect(existsSync(memory)).toBe(false);
      expect(await restarted.list()).toEqual([]);
    } finally {
      await first.destroy(id);
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
