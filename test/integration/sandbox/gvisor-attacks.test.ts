/**
 * Issue 26: a gVisor box tried as an attacker works, from sandbox code (root and user) and from the host.
 * What the namespace driver's attack files check of its own mechanics (`hostile-tenant.test.ts`,
 * `root-attacks.test.ts`) is checked here of the box's: the kernel sandbox code talks to is gVisor's, no
 * process of sandbox code is a host process, the box's host processes are the sandbox's host range's
 * in a user namespace of their own, its network reaches sandboxd's gateway listeners and nothing else of
 * the sandbox's namespace, closed egress holds against root's raw sockets, and the runsc control socket
 * that starts every process is out of the box's reach.
 * Sandbox code that exhausts the box's memory is killed alone (`BOX_STUB_OOM_SCORE_ADJ`); one that forks
 * without end is refused inside the box (RLIMIT_NPROC) before the host's pids bound would end it; one
 * that spins on every CPU is throttled on the host at the sandbox's quota.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { release } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cgroupPaths } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { FIRST_HOST_ID, MAPPED_IDS, RANGE_SIZE } from '../../../sandbox-drivers/namespace/uid-ranges.js';
import { boxPaths, readBoxState, stubsOf } from '../../../sandbox-drivers/gvisor/runsc-box.js';
import { oomScoreAdj } from '../support/box-stubs.js';
import { TestSandboxes, type TestSandbox } from '../support/namespace-sandbox.js';

const sandboxes = new TestSandboxes();
let closed: TestSandbox;
let open: TestSandbox;

beforeAll(async () => {
  [closed, open] = await Promise.all([
    sandboxes.launch({ isolation: 'gvisor' }),
    sandboxes.launch({ isolation: 'gvisor', allowInternetAccess: true }),
  ]);
});

afterAll(async () => {
  await sandboxes.destroyAll();
});

/** Host pids in the sandbox's own memory cgroup and its commands' one (sandboxd, the box's kernel). */
const hostPids = (sbx: TestSandbox): number[] => {
  const { memory, userMemory } = cgroupPaths(sandboxes.driver.instance, sbx.id);
  return [memory, userMemory].flatMap((dir) =>
    readFileSync(join(dir, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map(Number),
  );
};

describe('the kernel sandbox code talks to', () => {
  it("is gVisor's, not the host's: another release, and the host's never shows", async () => {
    const { stdout } = await closed.commands.run('uname -r; cat /proc/version; dmesg 2>&1 | head -1');
    expect(stdout).toContain('gvisor');
    expect(stdout).toContain('Starting gVisor');
    expect(stdout).not.toContain(release());
  });

  it('runs no process of sandbox code as a host process: only the box kernel, its stubs and sandboxd', async () => {
    await closed.commands.run('sleep 300 >/dev/null 2>&1 &');
    const names = hostPids(closed).map((pid) => readFileSync(`/proc/${String(pid)}/comm`, 'utf8').trim());
    // sandboxd's chain (`sdk-exec`, Node's `MainThread`) and runsc's processes (re-executed, `exe`).
    expect(new Set(names)).toEqual(new Set(['sdk-exec', 'MainThread', 'exe']));
    await closed.commands.run('pkill -x sleep; true');
  });
});

describe("the box's host processes", () => {
  it("run as the sandbox's host range, in a user namespace of their own, never the host's root", async () => {
    const state = await readBoxState(boxPaths(sandboxes.driver.instance, closed.id), closed.id);
    const kernel = String(state?.pid ?? 0);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${kernel}/status`, 'utf8'))?.[1]);
    expect(uid).toBeGreaterThanOrEqual(FIRST_HOST_ID);
    expect((uid - FIRST_HOST_ID) % RANGE_SIZE).toBe(0); // the range's root, id 0 inside
    expect(readFileSync(`/proc/${kernel}/uid_map`, 'utf8').trim().split(/\s+/)).toEqual([
      '0',
      String(uid),
      String(MAPPED_IDS),
    ]);
    expect(readlinkSync(`/proc/${kernel}/ns/user`)).not.toBe(readlinkSync('/proc/self/ns/user'));
  });
});

describe("the box's network", () => {
  const node = (code: string): string => `node -e "${code}"`;
  const connect = (host: string, port: number): string =>
    node(
      `require('net').connect(${String(port)}, '${host}').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) }); setTimeout(() => { console.log('timeout'); process.exit(0) }, 5000)`,
    );

  it("resets a connection to sandboxd's API, from the box's side of the link and by the sandbox's address", async () => {
    const api = new URL(closed.daemonUrl);
    for (const host of [api.hostname, '169.254.0.1']) {
      expect((await closed.commands.run(connect(host, Number(api.port)))).stdout.trim()).toBe('ECONNREFUSED');
    }
  });

  it('refuses link-local and metadata addresses even with open egress', async () => {
    for (const sbx of [closed, open]) {
      const { stdout } = await sbx.commands.run(connect('169.254.169.254', 80));
      expect(stdout.trim()).not.toBe('connected');
    }
  });

  it("keeps root's raw sockets from the network: no raw socket in gVisor's stack", async () => {
    const { stdout } = await closed.commands.run(
      `python3 -c 'import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP); print("raw")
except OSError as e:
    print("refused", e.errno)'`,
      { user: 'root' },
    );
    expect(stdout).toMatch(/^refused \d+/);
  });
});

describe("runsc's control socket", () => {
  it("is out of the box: in none of its files; the box's own spawner socket is its root's alone", async () => {
    // As root: the one socket under /run/sdk is the spawner's; no runsc socket anywhere.
    const asRoot = await closed.commands.run(
      'ls -A /run/sdk; find / -xdev \\( -name "runsc-*.sock" -o -name control.sock \\) 2>/dev/null; echo end',
      { user: 'root' },
    );
    expect(asRoot.stdout).toBe('spawn.sock\nend\n');
    // As the user: not even the folder.
    const asUser = await closed.commands.run('ls /run/sdk 2>&1; echo end');
    expect(asUser.stdout).toMatch(/Permission denied\nend\n$/);
  });
});

describe("sandbox code exhausting the box's memory", () => {
  it('is killed alone, as Linux kills a hog: the box kernel, its other processes and sandboxd live on', async () => {
    const small = await sandboxes.launch({ isolation: 'gvisor', memoryBytes: 192 * 2 ** 20 });
    const kernel = (await readBoxState(boxPaths(sandboxes.driver.instance, small.id), small.id))?.pid;
    await small.commands.run('sleep 300 >/dev/null 2>&1 &');
    const hog = `node -e "const held = []; for (;;) held.push(Buffer.alloc(8 << 20, 1))"; echo "exit=$?"`;
    // Twice: the box is whole after the first.
    for (const attempt of [1, 2]) {
      const { stdout } = await small.commands.run(hog);
      expect({ attempt, stdout }).toEqual({ attempt, stdout: 'exit=137\n' });
    }
    const { userMemory } = cgroupPaths(sandboxes.driver.instance, small.id);
    const oomKills = Number(
      /oom_kill (\d+)/.exec(readFileSync(join(userMemory, 'memory.oom_control'), 'utf8'))?.[1],
    );
    expect(oomKills).toBeGreaterThanOrEqual(2); // the sandbox's own limit ended them, not gVisor
    // Answered by sandboxd, through the same box kernel, where the bystander still runs.
    expect((await small.commands.run('pgrep -x sleep >/dev/null && echo bystander lives')).stdout).toBe(
      'bystander lives\n',
    );
    expect((await readBoxState(boxPaths(sandboxes.driver.instance, small.id), small.id))?.pid).toBe(kernel);
    // Why the hog and not the kernel: every stub (one per address space, the bystander's and those made
    // since the box started among them) is the OOM killer's first choice, the kernel is not.
    const stubs = await stubsOf(kernel ?? 0);
    expect(stubs.length).toBeGreaterThanOrEqual(3); // the first, pid 1's, the bystander's
    expect(new Set(stubs.map(oomScoreAdj))).toEqual(new Set(['1000']));
    expect(oomScoreAdj(kernel ?? 0)).toBe('0');
  });
});

describe('sandbox code forking without end', () => {
  it("is refused inside the box past the sandbox's maxPids, as user and as root; the box lives on", async () => {
    const small = await sandboxes.launch({ isolation: 'gvisor', maxPids: 64 });
    const bomb = 'for i in $(seq 1 100); do sleep 5 & done 2>&1 | head -1; wait';
    for (const user of ['user', 'root'] as const) {
      const forked = await small.commands.run(bomb, { user, timeoutMs: 30_000 });
      expect({ user, stdout: forked.stdout }).toEqual({
        user,
        stdout: expect.stringMatching(/fork|Resource temporarily unavailable/i) as unknown,
      });
    }
    // The host's bound (`boxHostTasks`) was never reached: the box kernel, which could not have
    // started a thread past it, still answers.
    expect((await small.commands.run('echo alive')).stdout).toBe('alive\n');
  });
});

describe('sandbox code spinning on every CPU', () => {
  it("gets the sandbox's CPU quota on the host, not the host's CPUs: the box kernel is throttled", async () => {
    const half = await sandboxes.launch({ isolation: 'gvisor', cpus: 0.5 });
    const { cpu, unified } = cgroupPaths(sandboxes.driver.instance, half.id);
    const stat = (dir: string, field: string): number =>
      Number(new RegExp(`^${field} (\\d+)$`, 'm').exec(readFileSync(join(dir, 'cpu.stat'), 'utf8'))?.[1]);
    const [usedBefore, throttledBefore, startedAt] = [
      stat(unified, 'usage_usec'),
      stat(cpu, 'nr_throttled'),
      Date.now(),
    ];
    // gVisor's own clocks do not see the host throttle it (its `os.times` counts what it scheduled), so
    // the box's CPU time is read on the host: the sandbox's cgroups hold the box kernel and its stubs.
    const spin = `node -e "const end = Date.now() + 2000; while (Date.now() < end);"`;
    await half.commands.run(`for i in 1 2 3 4; do ${spin} & done; wait`, { timeoutMs: 60_000 });
    const cpuSeconds = (stat(unified, 'usage_usec') - usedBefore) / 1e6;
    const wallSeconds = (Date.now() - startedAt) / 1000;
    expect(stat(cpu, 'nr_throttled')).toBeGreaterThan(throttledBefore);
    // Four loops would take the host's 2 CPUs whole; half a CPU (one 100 ms period of slack) allows half.
    expect(cpuSeconds).toBeLessThan(0.5 * wallSeconds + 0.2);
  });
});
