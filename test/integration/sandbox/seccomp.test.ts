/**
 * The sandbox seccomp filter on this machine's kernel, tried as an attacker would: raw syscalls from
 * python's ctypes for every refused family, clone with each namespace flag, a 32-bit `int 0x80`; and
 * the programs sandbox code runs (node, python3, sh and coreutils, git, gcc) still working under it.
 * Sandbox code runs in a real sandbox of the namespace driver; one run in a bare bubblewrap sandbox
 * without the filter shows the refusals are the filter's, not the kernel's.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:os';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_FAMILIES } from '../../../sandbox-drivers/namespace/seccomp/seccomp-policy.js';
import { X86_64_SYSCALLS } from '../../../sandbox-drivers/namespace/seccomp/x86-64-syscalls.js';
import { TestSandboxes, type TestSandbox } from '../support/namespace-sandbox.js';

const { EPERM, ENOSYS } = constants.errno;

/** What a command run in a sandbox left behind. */
interface Ran {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `sh -c script` in a throwaway bubblewrap sandbox, with `program` on fd 3 for `--seccomp`. */
async function bubblewrap(script: string, program: Buffer | undefined): Promise<Ran> {
  const seccomp = program === undefined ? [] : ['--seccomp', '3'];
  const child = spawn(
    'bwrap',
    [
      '--unshare-all',
      '--die-with-parent',
      '--new-session',
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      '--chdir', '/tmp',
      ...seccomp,
      '--', 'sh', '-c', script,
    ], // prettier-ignore
    { stdio: ['ignore', 'pipe', 'pipe', program === undefined ? 'ignore' : 'pipe'], timeout: 20_000 },
  );
  // bwrap reads the program from fd 3 until EOF.
  if (program !== undefined) (child.stdio[3] as Writable).end(program);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [exitCode] = (await once(child, 'close')) as [number | null];
  return { exitCode, stdout, stderr };
}

const sandboxes = new TestSandboxes();
let sandbox: TestSandbox | undefined;

/** Runs `sh -c script` as sandbox code in a real sandbox of the namespace driver, which installs the filter. */
async function runUnderFilter(script: string): Promise<Ran> {
  sandbox ??= await sandboxes.launch();
  const { exitCode, stdout, stderr } = await sandbox.commands.run(script, { timeoutMs: 30_000 });
  return { exitCode, stdout, stderr };
}

afterAll(async () => {
  await sandboxes.destroyAll();
});

const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

// Each probe runs in a forked child (a call that succeeds without the filter stays contained) and
// reports its errno, 0 on success; a clone child that got through exits silently.
const PROBE_PY = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = {}
for label, nr, args in json.loads(sys.argv[1]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        me = os.getpid()
        ctypes.set_errno(0)
        ret = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
        if os.getpid() == me:
            os.write(w, str(ctypes.get_errno() if ret == -1 else 0).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 16)
    os.close(r)
    os.waitpid(pid, 0)
    results[label] = int(out) if out else None
print(json.dumps(results))
`;

interface Probe {
  readonly label: string;
  readonly nr: number;
  readonly args: readonly number[];
}

const call = (
  name: keyof typeof X86_64_SYSCALLS,
  args: readonly number[] = [0, 0, 0, 0, 0, 0],
  label: string = name,
): Probe => ({
  label,
  nr: X86_64_SYSCALLS[name],
  args,
});

const SIGCHLD = 17;
const CLONE_FLAGS = {
  CLONE_NEWNS: 0x00020000,
  CLONE_NEWCGROUP: 0x02000000,
  CLONE_NEWUTS: 0x04000000,
  CLONE_NEWIPC: 0x08000000,
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
};

/** The calls issue 9 names, listed here and not read from the policy, so an edit cannot drop one unseen. */
const REQUIRED_REFUSALS = [
  'add_key',
  'keyctl',
  'request_key',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'init_module',
  'finit_module',
  'delete_module',
  'clock_settime',
  'clock_adjtime',
  'settimeofday',
  'reboot',
  'kexec_load',
  'kexec_file_load',
  'bpf',
  'perf_event_open',
  'mount',
  'umount2',
  'pivot_root',
  'move_mount',
  'open_tree',
  'fsopen',
  'fsmount',
  'unshare',
  'setns',
] as const;

/** Every syscall of every refused family, with null or zero arguments (harmless even unfiltered). */
const FAMILY_PROBES: readonly Probe[] = [
  ...new Set([...REQUIRED_REFUSALS, ...REFUSED_FAMILIES.flatMap((family) => family.syscalls)]),
].map((name) => call(name));

/** Calls refused by an argument, with the errno the filter gives. */
const ARGUMENT_PROBES: readonly (Probe & { readonly errno: number })[] = [
  ...Object.entries(CLONE_FLAGS).map(([flag, value]) => ({
    ...call('clone', [value | SIGCHLD, 0, 0, 0, 0], `clone(${flag})`),
    errno: EPERM,
  })),
  { ...call('unshare', [CLONE_FLAGS.CLONE_NEWUSER], 'unshare(CLONE_NEWUSER)'), errno: EPERM },
  { ...call('socket', [40, 1, 0], 'socket(AF_VSOCK)'), errno: EPERM },
  { ...call('socket', [38, 5, 0], 'socket(AF_ALG)'), errno: EPERM },
  { ...call('socket', [17, 2, 0], 'socket(AF_PACKET)'), errno: EPERM },
  { ...call('personality', [0x0040000], 'personality(ADDR_NO_RANDOMIZE)'), errno: EPERM },
  { ...call('ioctl', [0, 0x5412, 0], 'ioctl(TIOCSTI)'), errno: EPERM },
  { label: 'x32 getpid', nr: 0x40000000 | X86_64_SYSCALLS.getpid, args: [], errno: EPERM },
  { label: 'cachestat (451, newer than the table)', nr: 451, args: [-1, 0, 0, 0], errno: ENOSYS },
];

/** Calls the same rules allow. */
const ALLOWED_PROBES: readonly Probe[] = [
  call('clone', [SIGCHLD, 0, 0, 0, 0], 'clone(SIGCHLD)'),
  call('socket', [2, 1, 0], 'socket(AF_INET)'),
  call('socket', [1, 1, 0], 'socket(AF_UNIX)'),
  call('personality', [0xffffffff], 'personality(query)'),
  call('getpid', []),
];

// Without the filter the kernel answers these otherwise (bad arguments, or success), so the
// refusals above are the filter's. Others (init_module, acct, syslog, …) the kernel refuses by itself.
const KERNEL_ANSWERS_OTHERWISE = [
  'add_key',
  'keyctl',
  'request_key',
  'io_uring_setup',
  'clock_settime',
  'clock_adjtime',
  'perf_event_open',
  'mount',
  'fsopen',
  'setns',
  'clone3',
  'unshare(CLONE_NEWUSER)',
  'clone(CLONE_NEWUSER)',
  'clone(CLONE_NEWNS)',
  'socket(AF_VSOCK)',
  'ioctl(TIOCSTI)',
  'cachestat (451, newer than the table)',
];

const probeScript = (probes: readonly Probe[]): string =>
  `/usr/bin/python3 -c ${quote(PROBE_PY)} ${quote(JSON.stringify(probes.map((p) => [p.label, p.nr, p.args])))}`;

const ALL_PROBES = [...FAMILY_PROBES, ...ARGUMENT_PROBES, ...ALLOWED_PROBES];
let filtered: Record<string, number | null>;
let unfiltered: Record<string, number | null>;

beforeAll(async () => {
  const [under, without] = await Promise.all([
    runUnderFilter(probeScript(ALL_PROBES)),
    bubblewrap(probeScript(ALL_PROBES), undefined),
  ]);
  expect(under.stderr).toBe('');
  filtered = JSON.parse(under.stdout) as Record<string, number | null>;
  unfiltered = JSON.parse(without.stdout) as Record<string, number | null>;
});

describe('the seccomp filter on real syscalls', () => {
  it.each(REQUIRED_REFUSALS)('refuses %s with EPERM', (name) => expect(filtered[name]).toBe(EPERM));

  describe.each(REFUSED_FAMILIES)('refuses the $family family', ({ syscalls, errno }) => {
    it.each(syscalls)(`%s fails with errno ${String(errno)}`, (name) => expect(filtered[name]).toBe(errno));
  });

  it.each(ARGUMENT_PROBES)('refuses $label with errno $errno', ({ label, errno }) => {
    expect(filtered[label]).toBe(errno);
  });

  it('allows the same calls with harmless arguments', () => {
    expect(Object.fromEntries(ALLOWED_PROBES.map(({ label }) => [label, filtered[label]]))).toEqual(
      Object.fromEntries(ALLOWED_PROBES.map(({ label }) => [label, 0])),
    );
  });

  it('is what refuses them: without it the kernel answers otherwise', () => {
    for (const label of KERNEL_ANSWERS_OTHERWISE) {
      expect({ label, errno: unfiltered[label] }).not.toEqual({ label, errno: filtered[label] });
    }
  });

  it('kills a process entering through the 32-bit int 0x80 gate', async () => {
    const source = `int main(void) { long r; __asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory"); return 3; }`;
    const { stdout } = await runUnderFilter(
      `printf '%s' ${quote(source)} > int80.c && gcc -o int80 int80.c && ./int80; echo "status=$?"`,
    );
    expect(stdout.trim()).toBe(`status=${String(128 + constants.signals.SIGSYS)}`);
  });

  it('covers every process of the sandbox, its pid 1 included', async () => {
    const { stdout } = await runUnderFilter(
      `sleep 5 & grep -h '^Seccomp:' /proc/[0-9]*/status 2>/dev/null | sort | uniq -c; kill $!`,
    );
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1); // one mode for all
    const [count, , mode] = (lines[0] ?? '').trim().split(/\s+/);
    expect(mode).toBe('2'); // SECCOMP_MODE_FILTER
    expect(Number(count)).toBeGreaterThanOrEqual(3); // pid 1, sh, sleep at least
  });
});

describe('sandbox programs under the filter', () => {
  it('node: spawns a child, reads files, serves HTTP on loopback, runs a worker', async () => {
    const script = `
      const { execFileSync } = require('node:child_process');
      const { readFile } = require('node:fs/promises');
      const http = require('node:http');
      const { Worker } = require('node:worker_threads');
      (async () => {
        const child = execFileSync('/bin/sh', ['-c', 'echo from-child']).toString().trim();
        const status = (await readFile('/proc/self/status', 'utf8')).match(/^Seccomp:\\s+(\\d)/m)[1];
        const server = http.createServer((_, res) => res.end('pong')).listen(0, '127.0.0.1');
        await new Promise((resolve) => server.once('listening', resolve));
        const body = await (await fetch('http://127.0.0.1:' + server.address().port + '/')).text();
        server.close();
        const worker = new Worker('require("node:worker_threads").parentPort.postMessage(6 * 7)', { eval: true });
        const answer = await new Promise((resolve) => worker.once('message', resolve));
        console.log(JSON.stringify({ child, status, body, answer }));
      })();`;
    const { stdout, exitCode } = await runUnderFilter(`/usr/local/bin/node -e ${quote(script)}`);
    expect(exitCode).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ child: 'from-child', status: '2', body: 'pong', answer: 42 });
  });

  it('python3: threads, a subprocess, fork', async () => {
    const script = [
      'import os, subprocess, threading',
      'squares = []',
      'threads = [threading.Thread(target=lambda i=i: squares.append(i * i)) for i in range(4)]',
      '[t.start() for t in threads]; [t.join() for t in threads]',
      'sub = subprocess.run(["/bin/echo", "sub"], capture_output=True, text=True).stdout.strip()',
      'pid = os.fork()',
      'pid or os._exit(7)',
      'print(sorted(squares), sub, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))',
    ].join('\n');
    const { stdout, exitCode } = await runUnderFilter(`/usr/bin/python3 -c ${quote(script)}`);
    expect(exitCode).toBe(0);
    expect(stdout.trim()).toBe('[0, 1, 4, 9] sub 7');
  });

  it('sh, coreutils, git and gcc', async () => {
    const { stdout, stderr, exitCode } = await runUnderFilter(
      [
        'printf "a\\nc\\nb\\n" | sort | head -2 | paste -sd " "',
        'printf "int main(void) { return 7; }" > ok.c && gcc -O2 -o ok ok.c; ./ok; echo "gcc=$?"',
        'git init -q repo && cd repo && echo x > f && git add f',
        'git -c user.name=u -c user.email=u@example.invalid commit -qm first && git log --oneline | wc -l',
      ].join('\n'),
    );
    expect({ exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
    expect(stdout.trim().split('\n')).toEqual(['a b', 'gcc=7', '1']);
  });
});
