/**
 * Issue 9, tried as an attacker works from sandbox code (and as a host process that happens to run as
 * uid 1000): identity, per-uid kernel resources, tmpfs and socket memory, CPU, and what a sandbox can see
 * of the host. Each case failed on the driver before the issue.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cgroupPaths, tcpLimitOf } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { FIRST_HOST_ID, RANGE_SIZE, SLOTS } from '../../../sandbox-drivers/namespace/uid-ranges.js';
import { gatewayStateSchema } from '../../../protocol/gateway-wire.js';
import { sandboxdPid, TestSandboxes, type TestSandbox } from '../support/namespace-sandbox.js';

const execFileAsync = promisify(execFile);

/**
 * What the kernel charges a stream socket with unsent data past the sandbox's TCP limit, at most: a
 * forced charge for the write in progress (about 60-165 KiB measured per socket on loopback), with room.
 */
const FORCED_WRITE_BYTES = 256 * 1024;
const sandboxes = new TestSandboxes();
let a: TestSandbox;
let b: TestSandbox;

beforeAll(async () => {
  [a, b] = await Promise.all([
    sandboxes.launch({ memoryBytes: 256 * 2 ** 20 }),
    sandboxes.launch({ memoryBytes: 256 * 2 ** 20 }),
  ]);
});

afterAll(async () => {
  await sandboxes.destroyAll();
});

/** Host pids of the commands running in a sandbox. */
const commandPids = (sbx: TestSandbox): number[] =>
  readFileSync(join(cgroupPaths(sandboxes.driver.instance, sbx.id).userMemory, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);

/** The real, effective and saved host uids of a host pid. */
const hostUids = (pid: number): number[] =>
  (/^Uid:\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8')) ?? [])
    .slice(1)
    .map(Number);

/** Starts `sleep` in the sandbox and returns its host pid. */
async function sleeper(sbx: TestSandbox): Promise<number> {
  const before = new Set(commandPids(sbx));
  await sbx.commands.run('SDK_TEST_SECRET=env-of-sandbox-code sleep 60 >/dev/null 2>&1 &');
  // The background child may still be a shell a moment after the command returns.
  await vi.waitFor(
    () =>
      expect(
        commandPids(sbx).some(
          (p) => !before.has(p) && readFileSync(`/proc/${String(p)}/comm`, 'utf8').startsWith('sleep'),
        ),
      ).toBe(true),
    { timeout: 2_000 },
  );
  const pid = commandPids(sbx).find(
    (p) => !before.has(p) && readFileSync(`/proc/${String(p)}/comm`, 'utf8').startsWith('sleep'),
  );
  if (pid === undefined) throw new Error('the sleeper did not start');
  return pid;
}

/** Python in the sandbox with ctypes' libc, errno kept. */
const python = (code: string): string =>
  `python3 -c 'import ctypes, os, sys, time\nlibc = ctypes.CDLL(None, use_errno=True)\n${code}'`;

describe('identity: a user namespace per sandbox, mapped to a host range of its own', () => {
  it('runs sandbox code as uid 1000 inside and as a host uid of its own range outside, different per sandbox', async () => {
    expect((await a.commands.run('id -u; cat /proc/self/uid_map')).stdout).toMatch(
      /^1000\n\s+0\s+\d+\s+65535\n$/,
    );
    const [pa, pb] = [await sleeper(a), await sleeper(b)];
    const [ua, ub] = [hostUids(pa), hostUids(pb)];
    for (const uids of [ua, ub]) {
      expect(new Set(uids).size).toBe(1); // real, effective and saved alike: no way back to root
      const uid = uids[0] ?? 0;
      expect(uid).toBeGreaterThanOrEqual(FIRST_HOST_ID);
      expect(uid).toBeLessThan(FIRST_HOST_ID + SLOTS * RANGE_SIZE);
      expect((uid - FIRST_HOST_ID) % RANGE_SIZE).toBe(1000);
    }
    expect(ua[0]).not.toBe(ub[0]);
  });

  it('keeps a host process running as uid 1000 out of sandbox code: no environ, no root, no signal', async () => {
    const pid = String(await sleeper(a));
    const asHostUser = (script: string) =>
      execFileAsync('setpriv', ['--reuid=1000', '--regid=1000', '--clear-groups', 'sh', '-c', script]).then(
        (r) => r.stdout,
      );
    const out = await asHostUser(
      `cat /proc/${pid}/environ >/dev/null 2>&1 && echo environ; ls /proc/${pid}/root/ >/dev/null 2>&1 && echo root; kill -0 ${pid} 2>/dev/null && echo signal; echo done`,
    );
    expect(out).toBe('done\n');
  });

  it("never runs anything as the sandbox's root with the caller's environment (no LD_PRELOAD as root)", async () => {
    // The dynamic loader honours LD_DEBUG_OUTPUT in every process that gets it: each file it writes is
    // owned by the uid that process ran as. Before the fix the cgroup step ran as root with these.
    await a.commands.run('true', { envs: { LD_DEBUG: 'libs', LD_DEBUG_OUTPUT: '/tmp/ld-trace' } });
    const owners = await a.commands.run('stat -c %U /tmp/ld-trace.* | sort -u; rm -f /tmp/ld-trace.*');
    expect(owners.stdout).toBe('user\n');
    // And the command still lands in the commands' cgroup (the root of the sandbox's cgroup namespace),
    // first in line for the OOM killer.
    const placed = await a.commands.run('grep memory /proc/self/cgroup; cat /proc/self/oom_score_adj');
    expect(placed.stdout).toMatch(/memory:\/\n1000\n$/);
  });

  it('gives each sandbox its own per-uid kernel counts: one exhausting inotify leaves the other whole', async () => {
    // Hold every inotify instance the per-user limit allows in sandbox A, in the background.
    await a.commands.run(
      `${python('fds = []\nwhile True:\n    fd = libc.inotify_init()\n    if fd < 0: break\n    fds.append(fd)\nopen("/tmp/held", "w").write(str(len(fds)))\ntime.sleep(30)')} >/dev/null 2>&1 &
       for i in $(seq 50); do [ -s /tmp/held ] && break; sleep 0.1; done; cat /tmp/held`,
    );
    const inA = await a.commands.run(python('print(libc.inotify_init() >= 0)'));
    expect(inA.stdout.trim()).toBe('False');
    const inB = await b.commands.run(python('print(libc.inotify_init() >= 0)'));
    expect(inB.stdout.trim()).toBe('True');
  });

  it("gives sandboxd nothing of the launcher's environment (an operator key, cloud credentials)", async () => {
    process.env.SDK_TEST_LAUNCHER_SECRET = 'launcher-secret-0123456789';
    try {
      const sbx = await sandboxes.launch();
      const daemon = sandboxdPid(sandboxes.driver.instance, sbx.id);
      const environ = readFileSync(`/proc/${daemon}/environ`, 'utf8').split('\0').filter(Boolean);
      expect(environ).toEqual(['PATH=/usr/bin:/bin']);
    } finally {
      delete process.env.SDK_TEST_LAUNCHER_SECRET;
    }
  });

  it("counts RLIMIT_NPROC per sandbox: another sandbox's processes do not use up this one's", async () => {
    await a.commands.run('for i in $(seq 40); do sleep 30 >/dev/null 2>&1 & done');
    // In B, a process limit of 20 for its user: with one host uid for every sandbox, A's 40 would count.
    const within = await b.commands.run(
      "prlimit --nproc=20 sh -c 'for i in 1 2 3 4 5; do sleep 0.2 & done; wait; echo ok'",
    );
    expect(within.stdout.trim()).toBe('ok');
    // The limit itself holds in B.
    const beyond = await b.commands.run(
      "prlimit --nproc=20 sh -c 'for i in $(seq 30); do sleep 1 & done; wait' 2>&1; echo end",
    );
    expect(beyond.stdout).toMatch(/fork|Resource temporarily unavailable/i);
    await a.commands.run('pkill -x sleep; true');
  });

  it('never lets sandbox code write host-owned files, its own limits or the runtime', async () => {
    const { stdout } = await a.commands.run(
      'for f in /run/sdk/memory/memory.limit_in_bytes /run/sdk/memory/cgroup.procs /opt/sdk/sandboxd.cjs /opt/sdk/sandboxd.code-cache /etc/passwd /usr/bin/sh; do (echo x >> "$f") 2>/dev/null && echo "wrote $f"; done; echo end',
    );
    expect(stdout).toBe('end\n');
  });

  it('shows no host path: not in /proc/1/cmdline, not in mountinfo', async () => {
    const { stdout } = await a.commands.run('tr "\\0" " " < /proc/1/cmdline; echo; cat /proc/self/mountinfo');
    for (const hostPath of [sandboxes.stateDir, process.cwd(), '/work', '/root', '/tmp/sdk-']) {
      expect(stdout).not.toContain(hostPath);
    }
  });
});

describe('the gateway and the sandbox itself', () => {
  it("keeps sandbox code off sandboxd's API port, so it cannot flood it with connections", async () => {
    const open = await sandboxes.launch({ allowInternetAccess: true });
    for (const sbx of [a, open]) {
      const own = new URL(sbx.daemonUrl);
      const { stdout } = await sbx.commands.run(
        `node -e "require('net').connect(${own.port}, '${own.hostname}').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })"`,
      );
      expect(stdout.trim()).toBe('ECONNREFUSED');
    }
  });

  it("refuses an upstream at the sandbox's own address, where sandbox code can listen", async () => {
    const own = new URL(a.daemonUrl).hostname;
    // Sandbox code listens on every address and notes each connection.
    await a.commands.run(
      `node -e "require('net').createServer((s) => { require('fs').appendFileSync('/tmp/conns', 'x'); s.destroy(); }).listen(8443)" >/dev/null 2>&1 & sleep 0.5`,
    );
    const state = await a.client.call('POST', '/v1/gateways', gatewayStateSchema, {
      routes: {
        self: {
          upstream: `https://${own}:8443`,
          headers: { authorization: 'Bearer sk-self-0123456789' },
          allow: [['GET', '/*']],
        },
      },
    });
    const { stdout } = await a.commands.run(
      `node -e "fetch('${state.routes.self?.url ?? ''}/v1/x').then((r) => console.log(r.status))"; cat /tmp/conns 2>/dev/null | wc -c`,
    );
    expect(stdout).toBe('502\n0\n');
  });
});

describe('resources', () => {
  it('bounds the tmpfs mounts and keeps sandboxd serving when sandbox code fills them and its memory', async () => {
    const filled = await a.commands.run(
      'head -c 2000000000 /dev/zero > /home/user/big; head -c 2000000000 /dev/zero > /tmp/big; df -k /home /tmp | tail -2',
      { timeoutMs: 30_000 },
    );
    // Each write ended with ENOSPC at the mount's size, a share of the sandbox's 256 MiB.
    expect(filled.stderr).toMatch(/No space left on device/);
    const sizes = filled.stdout
      .trim()
      .split('\n')
      .map((line) => Number(line.split(/\s+/)[1]));
    expect(sizes).toEqual([128 * 1024, 64 * 1024]);
    // Memory of sandbox code on top of the full tmpfs: the OOM killer takes sandbox code, never sandboxd.
    await a.commands.run('node -e "const a = []; for (;;) a.push(Buffer.alloc(2 ** 20, 1))"', {
      timeoutMs: 30_000,
    });
    expect((await a.commands.run('echo alive')).stdout).toBe('alive\n');
    await a.commands.run('rm -f /home/user/big /tmp/big');
  });

  it('charges kernel socket buffers to the sandbox: its TCP limit plus one forced write per socket', async () => {
    const user = cgroupPaths(sandboxes.driver.instance, b.id).userMemory;
    const limit = tcpLimitOf(256 * 2 ** 20);
    expect(Number(readFileSync(join(user, 'memory.kmem.tcp.limit_in_bytes'), 'utf8'))).toBe(limit);
    /** The peak TCP buffer memory charged while `count` loopback connections are written and never read. */
    const pinned = async (count: number, port: number): Promise<number> => {
      writeFileSync(join(user, 'memory.kmem.tcp.max_usage_in_bytes'), '0');
      await b.commands.run(
        `node -e "
          const net = require('net');
          const server = net.createServer(() => {}).listen(${String(port)}, '127.0.0.1', () => {
            for (let i = 0; i < ${String(count)}; i++) {
              const c = net.connect(${String(port)}, '127.0.0.1', () => { const chunk = Buffer.alloc(1 << 20); const pump = () => { while (c.write(chunk)); }; c.on('drain', pump); pump(); });
              c.on('error', () => {});
            }
          });
          setTimeout(() => process.exit(0), 4000);
        "`,
        { timeoutMs: 20_000 },
      );
      return Number(readFileSync(join(user, 'memory.kmem.tcp.max_usage_in_bytes'), 'utf8'));
    };
    // A hundred loopback connections whose receivers never read: without a limit the kernel buffered
    // hundreds of MiB for them, outside the sandbox's memory limit.
    const hundred = await pinned(100, 7100);
    expect(hundred).toBeGreaterThan(0);
    expect(hundred).toBeLessThanOrEqual(limit + 100 * FORCED_WRITE_BYTES);
    // The limit alone is not the bound (sandbox-drivers/README.md): a v1 TCP limit lets each stream
    // socket finish the write it is in past the limit, so what is pinned grows with the sockets.
    const thousand = await pinned(1_000, 7101);
    expect(thousand).toBeGreaterThan(limit);
    expect(thousand).toBeLessThanOrEqual(limit + 1_000 * FORCED_WRITE_BYTES);
  });

  it('limits CPU time: busy loops get the quota, not the host', async () => {
    const half = await sandboxes.launch({ cpus: 0.5 });
    const { stdout } = await half.commands.run(
      python(
        'pids = []\nfor i in range(4):\n    pid = os.fork()\n    if pid == 0:\n        end = time.time() + 2\n        while time.time() < end: pass\n        os._exit(0)\n    pids.append(pid)\nfor pid in pids: os.waitpid(pid, 0)\nt = os.times()\nprint(t.children_user + t.children_system)',
      ),
      { timeoutMs: 20_000 },
    );
    // Four loops for 2 s would use up to 4 CPU seconds on this host's 2 CPUs; half a CPU allows about 1.
    expect(Number(stdout.trim())).toBeLessThan(1.4);
  });
});
