import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkNames } from '../../../sandbox-drivers/namespace/sandbox-network.js';
import { cgroupPaths } from '../../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { claimsOf, sandboxdId } from '../../../sandbox-drivers/namespace/uid-ranges.js';
import { createTestNetwork, sh } from '../support/test-network.js';
import { sandboxdPid, TestSandboxes, type TestSandbox } from '../support/namespace-sandbox.js';
import { isRunning } from '../../support/processes.js';
import { SANDBOXD_NODE_FLAGS } from '../../../protocol/sandboxd-node.js';

const sandboxes = new TestSandboxes();
let closed: TestSandbox;
let hostService: Server;
let hostPort = 0;

beforeAll(async () => {
  closed = await sandboxes.launch();
  // A host service bound to every address: sandbox code must not reach it through the veth.
  hostService = createServer((socket) => socket.end('host secret service\n'));
  await new Promise<void>((resolve) => hostService.listen(0, '0.0.0.0', resolve));
  hostPort = (hostService.address() as { port: number }).port;
});

afterAll(async () => {
  hostService.close();
  await sandboxes.destroyAll();
});

/** A node one-liner run inside the sandbox that prints `connected`, the connect error code or `timeout`. */
const probe = (host: string, port: number): string =>
  `node -e "setTimeout(() => { console.log('timeout'); process.exit(0) }, 3000); require('net').connect(${String(port)}, '${host}').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })"`;

const hostAddressOf = (daemonUrl: string): string => {
  const sandboxAddress = new URL(daemonUrl).hostname;
  const parts = sandboxAddress.split('.').map(Number);
  return [...parts.slice(0, 3), (parts[3] ?? 2) - 1].join('.');
};

describe('namespace sandbox', () => {
  it('runs commands as uid 1000 in its own hostname, home and pid namespace', async () => {
    const { stdout } = await closed.commands.run(
      'id -u; id -g; hostname; echo $HOME; pwd; ps -e -o pid= | wc -l',
    );
    const [uid, gid, hostname, home, pwd, processes] = stdout.trim().split('\n');
    expect({ uid, gid, hostname, home, pwd }).toEqual({
      uid: '1000',
      gid: '1000',
      hostname: 'sandbox',
      home: '/home/user',
      pwd: '/home/user',
    });
    expect(Number(processes)).toBe(4); // its pid 1, this shell, ps and wc: not sandboxd, not the host's
  });

  it("sees its template's files, not the host's", async () => {
    const { stdout } = await closed.commands.run(
      'for p in /etc/shadow /root /home/cloudsdk /work /var/lib/sdk /etc/ssl/private /proc/1/environ; do if [ -r "$p" ]; then echo "readable $p"; fi; done; ' +
        // The host's own programs (its Node, bubblewrap, nftables) are not in the template's image.
        'for p in /usr/bin/node /usr/bin/bwrap /usr/sbin/nft /usr/bin/mmdebstrap; do if [ -e "$p" ]; then echo "host $p"; fi; done; ' +
        'node --version; dpkg-query -W python3 gcc git | cut -f1',
    );
    expect(stdout.trim().split('\n')).toEqual(['v24.21.0', 'gcc', 'git', 'python3']);
  });

  it('does not see sandboxd at all, as the user or as root', async () => {
    for (const user of ['user', 'root'] as const) {
      const { stdout } = await closed.commands.run('ps -e -o pid=,comm= | sort -n', { user });
      const processes = stdout
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/));
      // Its pid 1 (`sdk-exec init`), then only this shell, ps and sort (or sort's shell before its exec):
      // sandboxd runs in a pid namespace of its own.
      expect({ user, first: processes[0] }).toEqual({ user, first: ['1', 'sdk-exec'] });
      expect({
        user,
        rest: processes.slice(1).filter(([, name]) => !['sh', 'ps', 'sort'].includes(name ?? '')),
      }).toEqual({ user, rest: [] });
    }
  });

  it('with closed egress reaches only its own loopback', async () => {
    const own = await closed.commands.run(
      `node -e "require('net').createServer(s => s.end()).listen(7000, '127.0.0.1')" >/dev/null 2>&1 & sleep 0.5; ${probe('127.0.0.1', 7000)}; kill $!`,
    );
    expect(own.stdout.trim()).toBe('connected');
    const host = hostAddressOf(closed.daemonUrl);
    for (const [address, port] of [
      [host, hostPort],
      [host, 4000],
    ] as const) {
      const { stdout } = await closed.commands.run(probe(address, port));
      expect({ address, result: stdout.trim() }).not.toEqual({ address, result: 'connected' });
    }
  });

  it('with open egress still cannot reach host services on the veth', async () => {
    const open = await sandboxes.launch({ allowInternetAccess: true });
    const { stdout } = await open.commands.run(probe(hostAddressOf(open.daemonUrl), hostPort));
    expect(stdout.trim()).not.toBe('connected');
  });

  it('with open egress reaches other networks through the host, but never another sandbox; closed egress does not', async () => {
    const outside = createTestNetwork(20);
    const server = spawn(
      'ip',
      [
        'netns',
        'exec',
        outside.ns,
        process.execPath,
        '-e',
        `require('net').createServer((s) => s.on('error', () => {}).end('outside')).listen(8080, '${outside.nsAddress}', () => console.log('ready'))`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await once(server.stdout, 'data');
      const open = await sandboxes.launch({ allowInternetAccess: true });
      expect((await open.commands.run(probe(outside.nsAddress, 8080))).stdout.trim()).toBe('connected');
      expect((await closed.commands.run(probe(outside.nsAddress, 8080))).stdout.trim()).not.toBe('connected');
      const neighbour = new URL(closed.daemonUrl);
      expect(
        (await open.commands.run(probe(neighbour.hostname, Number(neighbour.port)))).stdout.trim(),
      ).not.toBe('connected');
    } finally {
      if (server.exitCode === null) {
        server.kill();
        await once(server, 'exit');
      }
      outside.destroy();
    }
  });

  it('keeps memory across pause and resume, also over 20 rapid cycles', async () => {
    await closed.commands.run('head -c 4194304 /dev/urandom > /tmp/blob');
    const counter = await closed.commands.run(
      'i=0; while :; do i=$((i+1)); echo $i > /tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.01; done',
      { background: true },
    );
    const before = await closed.commands.run('sha256sum /tmp/blob');
    await sandboxes.driver.pause(closed.id);
    const frozenCount = sh('cat', [`/proc/${String(await pidOf(closed, counter.pid))}/status`]);
    expect(frozenCount).toMatch(/State:\s+[DS]/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sandboxes.driver.resume(closed.id);
    for (let i = 0; i < 20; i++) {
      await sandboxes.driver.pause(closed.id);
      await sandboxes.driver.resume(closed.id);
    }
    const after = await closed.commands.run('sha256sum /tmp/blob; cat /tmp/count');
    expect(after.stdout.startsWith(before.stdout)).toBe(true);
    const first = Number((await closed.commands.run('cat /tmp/count')).stdout);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(Number((await closed.commands.run('cat /tmp/count')).stdout)).toBeGreaterThan(first);
    await counter.kill();
  });

  it('enforces the memory and pids limits', async () => {
    const small = await sandboxes.launch({ memoryBytes: 128 * 2 ** 20, maxPids: 64 });
    const hog = await small.commands.run(`node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))"`);
    // The kernel's OOM killer ends node with SIGKILL; the shell reports it as 128 + 9.
    expect(hog.signal === 'SIGKILL' || hog.exitCode === 137).toBe(true);
    const fork = await small.commands.run('for i in $(seq 1 100); do sleep 5 & done; wait', {
      timeoutMs: 10_000,
    });
    expect(fork.stderr).toMatch(/fork|Resource temporarily unavailable/i);
  });

  it("places sandboxd beside the sandbox: its own uid, namespaces but the network's, no capability, its own filter", async () => {
    const daemon = sandboxdPid(sandboxes.driver.instance, closed.id);
    const range = claimsOf(sandboxes.driver.instance).get(closed.id);
    expect(range).toBeDefined();
    const id = String(sandboxdId(range ?? { slot: 0, hostBase: 0 }));
    const status = readFileSync(`/proc/${daemon}/status`, 'utf8');
    const field = (name: string): string => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(status)?.[1] ?? '';
    expect({
      uid: field('Uid').split(/\s+/),
      gid: field('Gid').split(/\s+/),
      capEff: field('CapEff'),
      capPrm: field('CapPrm'),
      capBnd: field('CapBnd'),
      seccomp: field('Seccomp'),
    }).toEqual({
      uid: [id, id, id, id],
      gid: [id, id, id, id],
      capEff: '0000000000000000',
      capPrm: '0000000000000000',
      capBnd: '0000000000000000',
      seccomp: '2',
    });
    // The sandbox's pid 1, as the host sees it: pid 1 of a pid namespace two levels down (sandboxd's
    // own pid 1 is one level down).
    const sandboxInit = readdirSync('/proc').find(
      (pid) =>
        /^\d+$/.test(pid) &&
        cgroupOf(pid).includes(closed.id) &&
        /^NSpid:\s+\d+\s+\d+\s+1$/m.test(sh('cat', [`/proc/${pid}/status`])),
    );
    if (sandboxInit === undefined) throw new Error("no process is the sandbox's pid 1");
    const ns = (pid: number | string, kind: string): string =>
      readlinkSync(`/proc/${String(pid)}/ns/${kind}`);
    expect(ns(daemon, 'net')).toBe(ns(sandboxInit, 'net'));
    for (const kind of ['mnt', 'pid', 'ipc', 'uts', 'user', 'cgroup']) {
      expect({ kind, same: ns(daemon, kind) === ns(sandboxInit, kind) }).toEqual({ kind, same: false });
    }
    // sandboxd's root is the template's image, not the sandbox's view: a file root writes into the
    // sandbox's /etc is not in sandboxd's.
    await closed.commands.run('echo planted > /etc/planted-by-root', { user: 'root' });
    expect(existsSync(`/proc/${daemon}/root/etc/planted-by-root`)).toBe(false);
    expect(existsSync(`/proc/${sandboxInit}/root/etc/planted-by-root`)).toBe(true);
  });

  it("keeps its template's image, whose sudo is setuid root, out of every host account's reach but root's", () => {
    const mounts = readFileSync(
      `/proc/${sandboxdPid(sandboxes.driver.instance, closed.id)}/mountinfo`,
      'utf8',
    );
    const image = /\/sdk\/images\/(template-[0-9a-f]+)\//.exec(mounts)?.[1];
    expect(image).toBeDefined();
    const sudo = `/run/sdk/images/${image ?? ''}/usr/bin/sudo`;
    expect(statSync(sudo).mode & 0o4000).toBe(0o4000);
    const asHostUser = spawnSync(
      'setpriv',
      [
        '--reuid=1000',
        '--regid=1000',
        '--clear-groups',
        'sh',
        '-c',
        `[ -e ${sudo} ] && echo reached; echo end`,
      ],
      { encoding: 'utf8' },
    );
    expect(asHostUser.stdout).toBe('end\n');
  });

  it("starts sandboxd from one bundled file with the code cache its image's build wrote, which V8 takes", async () => {
    expect((await closed.commands.run('ls /opt/sdk')).stdout).toBe(
      'box-resolv.conf\ngvisor-exec\nsandboxd.cjs\nsandboxd.code-cache\nsdk-exec\nsdk-pty\nstart.cjs\n',
    );
    // Found by its exact command line (`sandboxdPid`), from the host: the sandbox does not see it.
    expect(sandboxdPid(sandboxes.driver.instance, closed.id)).toMatch(/^\d+$/);
    // A second sandboxd started the same way, as sandbox code: its ready line, and no line saying V8
    // refused the cache (written by another Node, or under other flags, than this one).
    const { stdout } = await closed.commands.run(
      `printf '%s' '{"token":"code-cache-test-token-0123","port":0}' | /usr/local/bin/node ${SANDBOXD_NODE_FLAGS.join(' ')} /opt/sdk/start.cjs > /tmp/ready 2> /tmp/stderr &
      i=0; while [ ! -s /tmp/ready ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
      kill $!; cat /tmp/ready /tmp/stderr`,
    );
    expect(stdout).toMatch(/^\{"port":\d+\}\n$/);
  });

  it('collects read-only images no sandbox binds an hour after their last use, never one in use', async () => {
    const images = '/run/sdk/images';
    const stale = join(images, `sdk-${'f'.repeat(32)}`);
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, '.complete'), '');
    const bound = (
      await closed.commands.run('grep -o "sdk/images/[^/ ,]*" /proc/self/mountinfo | sort -u')
    ).stdout
      .trim()
      .split('\n')
      .map((line) => line.slice('sdk/images/'.length));
    expect(bound.length).toBeGreaterThan(0);
    // The stale image and the ones this sandbox binds look unused for two hours (others are left alone:
    // test files running beside this one use them).
    const past = new Date(Date.now() - 2 * 3_600_000);
    for (const entry of [stale, ...bound.map((name) => join(images, name))]) utimesSync(entry, past, past);
    const other = new TestSandboxes(); // a new driver on the host collects
    try {
      expect(existsSync(stale)).toBe(false);
      for (const name of bound) expect(existsSync(join(images, name))).toBe(true);
      expect((await closed.commands.run('echo still bound')).stdout).toBe('still bound\n');
      const sbx = await other.launch();
      expect((await sbx.commands.run('echo launched')).stdout).toBe('launched\n');
    } finally {
      await other.destroyAll();
      // Used again now, whatever happened: a driver made by a file running beside this one must not
      // collect them once this file's sandboxes let them go.
      const now = new Date();
      for (const name of bound) utimesSync(join(images, name), now, now);
    }
  });

  it('destroy leaves no process, namespace, veth, nftables table or cgroup', async () => {
    const doomed = await sandboxes.launch();
    await doomed.commands.run('sleep 300 >/dev/null 2>&1 & sleep 300 >/dev/null 2>&1 &');
    const names = networkNames(sandboxes.driver.instance, doomed.id);
    const cgroups = cgroupPaths(sandboxes.driver.instance, doomed.id);
    const members = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && cgroupOf(p).includes(doomed.id));
    expect(members.length).toBeGreaterThan(2);
    await sandboxes.driver.destroy(doomed.id);
    expect(sh('ip', ['netns', 'list'])).not.toContain(names.namespace);
    expect(sh('ip', ['link', 'show'])).not.toContain(names.hostVeth);
    expect(sh('nft', ['list', 'tables'])).not.toContain(names.hostTable);
    for (const path of Object.values(cgroups)) expect(existsSync(path)).toBe(false);
    expect(sh('cat', ['/proc/self/mountinfo'])).not.toContain(names.namespace);
    await expect.poll(() => members.filter(isRunning)).toEqual([]);
    expect(await sandboxes.driver.list()).not.toContain(doomed.id);
  });
});

function cgroupOf(pid: string): string {
  try {
    return sh('cat', [`/proc/${pid}/cgroup`]);
  } catch {
    return '';
  }
}

/** The host pid of a sandbox pid: the host process in the sandbox's cgroup whose NSpid ends with it. */
async function pidOf(sandbox: TestSandbox, inner: number): Promise<number> {
  await Promise.resolve();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || !cgroupOf(entry).includes(sandbox.id)) continue;
    const status = sh('cat', [`/proc/${entry}/status`]);
    const nspid = /NSpid:\s+([\d\s]+)/.exec(status)?.[1]?.trim().split(/\s+/);
    if (nspid?.at(-1) === String(inner)) return Number(entry);
  }
  throw new Error(`no host process for sandbox pid ${String(inner)}`);
}
