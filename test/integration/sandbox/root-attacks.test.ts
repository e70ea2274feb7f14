/**
 * Issue 25, items 3 and 4, tried as an attacker works from ROOT inside a sandbox (and from `user` where
 * it differs): sandbox code may now be the root of its sandbox's user namespace (moby's capabilities,
 * the seccomp filter, no no_new_privs), while sandboxd lives beside the sandbox as a host uid the
 * sandbox does not map, in namespaces of its own but the network one, holding the gateway keys and the
 * tokens in its memory.
 *
 *   - Closed egress holds: raw sockets, TCP and UDP to other networks, `nft`, `ip`, `sysctl`, `unshare`
 *     and `setns` all fail, and afterwards egress is still closed, sandboxd's API port still refused and
 *     the sandbox's network (table, addresses, routes) unchanged as the host sees it.
 *   - The keys stay unreadable: with a gateway route open on a planted key, root reads what it can of
 *     every visible process (`cmdline`, `environ`, `mem`, `ptrace`, `process_vm_readv`, its root), dumps
 *     core, tries the kernel's memory devices and keyrings, mounts `/proc` again, scans sandboxd's
 *     listeners and sockets, and searches every file it can read: the key, the sandbox's access token,
 *     the control plane's token and keys are found nowhere, where a canary planted in a process and a
 *     file of sandbox code is found (the search works).
 *   - No descriptor of the host reaches sandbox code: one left open in the control plane's process by
 *     whatever started it (a supervisor's pipe or socket) must not pass down the launch chain.
 *   - Root's writes stay in its own copy-on-write view: not the image, not another sandbox; devices
 *     cannot be made and file capabilities give no more than moby's set.
 *
 * No secret value reaches a command line, a sandbox's file or the test's output: the search patterns
 * travel base64-encoded, results name only which pattern was found where.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EGRESS_PORTS } from '../../../protocol/egress-wire.js';
import { controlTokenFor, operatorKeyFile } from '../../../control-plane/operator-key.js';
import { networkNames } from '../../../sandbox-drivers/namespace/sandbox-network.js';
import { viewPaths } from '../../../sandbox-drivers/namespace/root-view.js';
import { FIRST_HOST_ID, MAPPED_IDS } from '../../../sandbox-drivers/namespace/uid-ranges.js';
import type { CommandRunOptions } from '../../../sdk/commands.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { SecretGateway } from '../../../sdk/secret-gateway.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import {
  startControlPlane,
  stateFolder,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';
import { freePort } from '../../support/loopback.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { sandboxdPid } from '../support/namespace-sandbox.js';
import { sh } from '../support/test-network.js';

const world = useGatewayWorld(0);
/** The gateway key: distinctive, random, never printed. */
const KEY = `sk-root-attack-${randomBytes(16).toString('hex')}`;
/** Planted by the test in sandbox code's own process and file: the search must find it. */
const CANARY = `canary-${randomBytes(12).toString('hex')}`;
/** moby's 14 default capabilities (`sdk-exec.c`, MOBY_CAPS), as /proc/<pid>/status shows them. */
const MOBY_CAPS = '00000000a80425fb';
/** Where the driver keeps template images (`runtime-image.ts`). */
const IMAGES = '/run/sdk/images';
/** Where the attack scripts are written in each sandbox. */
const ATTACK_DIR = '/tmp/attack';
/** The UDP port of the datagram counter in the test namespace. */
const UDP_PORT = 9999;

const AS_ROOT = { user: 'root' } as const;

let cp: InProcessControlPlane;
let dir: string;
/** Closed egress, a gateway route on KEY: the attacker's sandbox. */
let box: Sandbox;
/** Closed egress: another sandbox of the same template. */
let other: Sandbox;
/** Open egress: shows the targets refused to `box` are reachable when egress is open. */
let open: Sandbox;
let routeUrl: string;
/** The secrets and what they are called in the test's output; index 0 is the canary. */
let patterns: { readonly name: string; readonly value: string }[];

beforeAll(async () => {
  cp = await startControlPlane({ gatewayCa: world.pki.caPem });
  dir = mkdtempSync(join(tmpdir(), 'sdk-root-attacks-'));
  const store = new SecretStore({ file: join(dir, 'secrets.json') });
  await store.create('attack-key', KEY);
  const gateways = {
    llm: new SecretGateway({
      upstream: world.upstream.origin,
      headers: { 'x-api-key': 'attack-key' },
      allow: [['GET', '/*']],
    }),
  };
  [box, other, open] = await Promise.all([
    cp.createSandbox({ gateways, secretCache: new SecretCache({ store }) }),
    cp.createSandbox(),
    cp.createSandbox({ template: 'sdk-base', allowInternetAccess: true }),
  ]);
  routeUrl = box.gateways.get('llm')?.url ?? '';
  const controlKey = readFileSync(join(cp.stateDir, 'control-key'), 'utf8').trim();
  patterns = [
    { name: 'canary', value: CANARY },
    { name: 'gateway key', value: KEY },
    { name: 'access token', value: box.accessToken },
    { name: 'control token', value: controlTokenFor(controlKey, box.sandboxId) },
    { name: 'operator key', value: TEST_OPERATOR_KEY },
    { name: 'control key', value: controlKey },
  ];
  for (const sbx of [box, other, open]) {
    for (const [name, code] of Object.entries(SCRIPTS)) {
      await sbx.files.write(`${ATTACK_DIR}/${name}`, code, AS_ROOT);
    }
    await sbx.commands.run(`chmod -R a+rX ${ATTACK_DIR}`, AS_ROOT);
  }
});

afterAll(async () => {
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The patterns as the scripts take them: base64, comma-separated, never the values themselves. */
const encodedPatterns = (): string => patterns.map((p) => Buffer.from(p.value).toString('base64')).join(',');

/** Names of the patterns a script reported by index. */
const named = (found: readonly [string, string, number][]): string[] =>
  found.map(([where, what, index]) => `${patterns[index]?.name ?? String(index)} in ${where} ${what}`);

// Python scripts written into each sandbox (raw syscalls through ctypes). `procs.py` reads whatever it
// can of every visible process but its own (it holds the decoded patterns); `net.py` tries sockets and
// namespace calls; `listeners.py` lists the network namespace's listening and unix sockets; `keys.py`
// the kernel's keyrings; `fds.py` lists (and writes to one of) its open descriptors.
const PROCS_PY = `
import base64, ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
libc.process_vm_readv.restype = ctypes.c_ssize_t
libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.POINTER(iovec), ctypes.c_ulong, ctypes.POINTER(iovec), ctypes.c_ulong, ctypes.c_ulong]
patterns = [base64.b64decode(p) for p in os.environ["PATTERNS"].split(",")]
me = os.getpid()
found = []
def name(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if isinstance(e, OSError) and e.errno else type(e).__name__
def search(pid, what, data):
    for i, p in enumerate(patterns):
        if p in data:
            found.append([str(pid), what, i])
def read(path):
    with open(path, "rb") as f:
        return f.read()
def memory(pid):
    maps = read("/proc/%d/maps" % pid).decode()
    seen = set()
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        for line in maps.splitlines():
            fields = line.split()
            if not fields[1].startswith("r") or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]", "[vvar_vclock]")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            end = min(end, start + (256 << 20))
            at = start
            while at < end:
                size = min(1 << 20, end - at)
                try:
                    mem.seek(at)
                    chunk = mem.read(size + 256)
                except OSError:
                    break
                for i, p in enumerate(patterns):
                    if p in chunk and i not in seen:
                        seen.add(i)
                        found.append([str(pid), "mem", i])
                at += size
    return [l.split()[0].split("-")[0] for l in maps.splitlines()][:1]
own_root = os.stat("/")
procs = {}
for entry in os.listdir("/proc"):
    if not entry.isdigit() or int(entry) == me:
        continue
    pid = int(entry)
    p = {}
    try:
        status = read("/proc/%d/status" % pid).decode()
    except OSError:
        continue
    p["comm"] = status.split("\\n")[0].split("\\t")[1]
    p["uid"] = int([l for l in status.splitlines() if l.startswith("Uid:")][0].split()[1])
    try:
        cmdline = read("/proc/%d/cmdline" % pid)
        search(pid, "cmdline", cmdline)
        p["cmdline"] = "read"
        p["sandboxd"] = b"start.cjs" in cmdline or b"sandboxd" in cmdline
    except OSError as e:
        p["cmdline"] = name(e)
    try:
        search(pid, "environ", read("/proc/%d/environ" % pid))
        p["environ"] = "read"
    except OSError as e:
        p["environ"] = name(e)
    address = None
    try:
        first = memory(pid)
        address = int(first[0], 16) if first else None
        p["mem"] = "read"
    except OSError as e:
        p["mem"] = name(e)
    ctypes.set_errno(0)
    if libc.ptrace(16, pid, None, None) == 0:
        os.waitpid(pid, 0x40000000)
        libc.ptrace(17, pid, None, None)
        p["ptrace"] = "attached"
    else:
        p["ptrace"] = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    buf = ctypes.create_string_buffer(4096)
    local = iovec(ctypes.cast(buf, ctypes.c_void_p), 4096)
    remote = iovec(address if address is not None else 0x10000, 4096)
    ctypes.set_errno(0)
    n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if n >= 0:
        search(pid, "process_vm_readv", buf.raw[:n])
        p["process_vm_readv"] = "read"
    else:
        p["process_vm_readv"] = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    try:
        st = os.stat("/proc/%d/root/" % pid)
        p["root"] = "own" if (st.st_dev, st.st_ino) == (own_root.st_dev, own_root.st_ino) else "other"
    except OSError as e:
        p["root"] = name(e)
    procs[str(pid)] = p
print(json.dumps({"procs": procs, "found": found}))
`;

const NET_PY = `
import ctypes, errno, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
targets = json.loads(os.environ["TARGETS"])
out = {}
def name(e):
    if isinstance(e, TimeoutError) or isinstance(e, socket.timeout):
        return "timeout"
    return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__
def attempt(label, fn):
    try:
        out[label] = fn() or "ok"
    except OSError as e:
        out[label] = name(e)
def raw(family, kind, proto):
    def make():
        socket.socket(family, kind, proto).close()
    return make
attempt("AF_PACKET SOCK_RAW", raw(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)))
attempt("AF_PACKET SOCK_DGRAM", raw(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(3)))
attempt("AF_INET SOCK_RAW icmp", raw(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("AF_INET SOCK_RAW tcp", raw(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP))
attempt("AF_INET SOCK_RAW raw", raw(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW))
attempt("AF_INET6 SOCK_RAW icmpv6", raw(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6))
attempt("AF_INET ping socket", raw(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP))
def tcp(host, port, request):
    def connect():
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect((host, port) if family == socket.AF_INET else (host, port, 0, 0) if "%" not in host else socket.getaddrinfo(host, port, family)[0][4])
            if request:
                s.sendall(request.encode())
                return "answered " + s.recv(64).decode(errors="replace").split("\\r\\n")[0]
            return "connected"
        finally:
            s.close()
    return connect
def udp(host, port):
    def send():
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(family, socket.SOCK_DGRAM)
        try:
            address = socket.getaddrinfo(host, port, family)[0][4]
            for i in range(3):
                s.sendto(b"datagram from the sandbox", address)
            return "sent"
        finally:
            s.close()
    return send
token = os.environ.get("TOKEN")
for label, kind, host, port in targets:
    if kind == "tcp":
        attempt(label, tcp(host, port, None))
    elif kind == "http":
        headers = "GET /v1/processes HTTP/1.1\\r\\nhost: sandboxd\\r\\n" + ("authorization: Bearer " + token + "\\r\\n" if token else "") + "\\r\\n"
        attempt(label, tcp(host, port, headers))
    else:
        attempt(label, udp(host, port))
def errno_of(ret):
    return "ok" if ret == 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
for path, flag in (("/proc/1/ns/net", 0x40000000), ("/proc/self/ns/net", 0x40000000), ("/proc/1/ns/user", 0x10000000), ("/proc/1/ns/mnt", 0x20000)):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        out["setns " + path] = "open " + name(e)
        continue
    out["setns " + path] = errno_of(libc.setns(fd, flag))
    os.close(fd)
for label, flag in (("CLONE_NEWUSER", 0x10000000), ("CLONE_NEWNET", 0x40000000), ("CLONE_NEWNS", 0x20000)):
    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc.unshare(flag) == 0 else min(ctypes.get_errno(), 255))
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out["unshare(" + label + ")"] = "ok" if code == 0 else errno.errorcode.get(code, str(code))
print(json.dumps(out))
`;

const LISTENERS_PY = `
import json, socket
def hexaddr(text, v6):
    raw = bytes.fromhex(text)
    if not v6:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    return socket.inet_ntop(socket.AF_INET6, b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4)))
listeners = []
for path, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
    for line in open(path).read().splitlines()[1:]:
        f = line.split()
        if f[3] != "0A":
            continue
        address, port = f[1].split(":")
        listeners.append({"address": hexaddr(address, v6), "port": int(port, 16), "uid": int(f[7])})
unix = []
for line in open("/proc/net/unix").read().splitlines()[1:]:
    f = line.split()
    if len(f) > 7:
        unix.append(f[7])
print(json.dumps({"listeners": listeners, "unix": unix}))
`;

const KEYS_PY = `
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    ret = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "ok" if ret >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
kind = ctypes.c_char_p(b"user")
desc = ctypes.c_char_p(b"probe")
print(json.dumps({
    "add_key": call(248, ctypes.cast(kind, ctypes.c_void_p).value, ctypes.cast(desc, ctypes.c_void_p).value, 0, 0, -3),
    "request_key": call(249, ctypes.cast(kind, ctypes.c_void_p).value, ctypes.cast(desc, ctypes.c_void_p).value, 0, -3),
    "keyctl(GET_KEYRING_ID, session)": call(250, 0, -3, 0),
    "keyctl(GET_KEYRING_ID, user)": call(250, 0, -4, 0),
    "keyctl(JOIN_SESSION_KEYRING)": call(250, 1, 0),
}))
`;

const FDS_PY = `
import errno, json, os
fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
out = {}
for fd in fds:
    try:
        out[str(fd)] = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        pass  # the listing's own descriptor, closed by now
write = os.environ.get("WRITE_FD")
if write is not None and write in out:
    try:
        os.write(int(write), b"written by sandbox code\\n")
        out["written"] = "yes"
    except OSError as e:
        out["written"] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps(out))
`;

const SCRIPTS: Readonly<Record<string, string>> = {
  'procs.py': PROCS_PY,
  'net.py': NET_PY,
  'listeners.py': LISTENERS_PY,
  'keys.py': KEYS_PY,
  'fds.py': FDS_PY,
};

/** Runs `cmd` in `sbx`, expecting exit 0 (its stderr shown when not), and gives its stdout. */
async function succeed(
  sbx: Sandbox,
  cmd: string,
  options: CommandRunOptions & { background?: false } = {},
): Promise<string> {
  const { exitCode, stdout, stderr } = await sbx.commands.run(cmd, { timeoutMs: 110_000, ...options });
  expect(exitCode, `${cmd}: ${stderr}`).toBe(0);
  return stdout;
}

/** What one shell attempt ended with: its exit code and the first line it printed. */
interface Attempt {
  readonly code: number;
  readonly message: string;
}

/**
 * Runs each command of `attempts` (label → shell command) in `sbx` as `user`, each on its own, and
 * gives each one's exit code and first line of output.
 */
async function tryEach(
  sbx: Sandbox,
  attempts: Readonly<Record<string, string>>,
  user: 'root' | 'user' = 'root',
): Promise<Record<string, Attempt>> {
  const script = Object.entries(attempts)
    .map(
      ([, cmd], i) =>
        `out=$( { ${cmd} ; } 2>&1 </dev/null ); code=$?; printf '%s\\t%s\\t%s\\n' ${String(i)} "$code" "$(printf %s "$out" | head -n 1)"`,
    )
    .join('\n');
  const stdout = await succeed(sbx, script, { user });
  const labels = Object.keys(attempts);
  const results: Record<string, Attempt> = {};
  for (const line of stdout.split('\n').filter(Boolean)) {
    const [index, code, message] = line.split('\t');
    results[labels[Number(index)] ?? '?'] = { code: Number(code), message: message ?? '' };
  }
  return results;
}

/** Runs `script` (one of SCRIPTS) in `sbx` as `user` with `env`, parsing its JSON output. */
async function python<T>(
  sbx: Sandbox,
  script: string,
  user: 'root' | 'user',
  env: Record<string, string> = {},
): Promise<T> {
  return JSON.parse(await succeed(sbx, `python3 ${ATTACK_DIR}/${script}`, { user, envs: env })) as T;
}

/** The host side of a sandbox's network: names and addresses. */
function hostSide(sbx: Sandbox): {
  sandboxVeth: string;
  hostAddress: string;
  hostLinkLocal: string;
  sandboxAddress: string;
} {
  const names = networkNames(cp.driver.instance, sbx.sandboxId);
  const v4 = sh('ip', ['-4', '-o', 'addr', 'show', 'dev', names.hostVeth]);
  const v6 = sh('ip', ['-6', '-o', 'addr', 'show', 'dev', names.hostVeth, 'scope', 'link']);
  return {
    sandboxVeth: names.sandboxVeth,
    hostAddress: /inet (\S+)\//.exec(v4)?.[1] ?? '',
    hostLinkLocal: /inet6 (\S+)\//.exec(v6)?.[1] ?? '',
    sandboxAddress:
      sh('ip', ['-n', names.namespace, '-4', '-o', 'addr', 'show', 'dev', names.sandboxVeth])
        .split(/\s+/)
        .find((word) => /^\d+\.\d+\.\d+\.\d+\/\d+$/.test(word))
        ?.split('/')[0] ?? '',
  };
}

/** The sandbox's network as the host sees it: its nftables ruleset, links, addresses and routes. */
function networkState(sbx: Sandbox): string {
  const { namespace } = networkNames(cp.driver.instance, sbx.sandboxId);
  return [
    sh('ip', ['netns', 'exec', namespace, 'nft', 'list', 'ruleset']),
    sh('ip', ['-n', namespace, '-o', 'link', 'show']).replace(/ +link\/\S+ [0-9a-f:]+.*$/gm, ''),
    sh('ip', ['-n', namespace, '-o', 'addr', 'show']).replace(/valid_lft.*$/gm, ''),
    sh('ip', ['-n', namespace, 'route', 'show']),
    sh('ip', ['-n', namespace, '-6', 'route', 'show']),
  ].join('\n');
}

/** A UDP server in the test namespace that counts the datagrams it gets. */
interface DatagramCounter {
  count(): number;
  stop(): Promise<void>;
}

async function countDatagrams(namespace: string, address: string, port: number): Promise<DatagramCounter> {
  const child: ChildProcessByStdio<null, Readable, null> = spawn(
    'ip',
    [
      'netns',
      'exec',
      namespace,
      process.execPath,
      '-e',
      `const s = require('dgram').createSocket('udp4'); let n = 0;
       s.on('message', () => console.log(++n)); s.bind(${String(port)}, '${address}', () => console.log('ready'));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let count = 0;
  const lines = createInterface({ input: child.stdout });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the datagram counter exited with ${String(code)}`)));
    lines.on('line', (line) => {
      if (line === 'ready') resolve();
      else count = Number(line);
    });
  });
  return {
    count: () => count,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** The capability, no_new_privs and seccomp lines of `/proc/self/status`. */
function privileges(status: string): Record<string, string> {
  return Object.fromEntries(
    status
      .split('\n')
      .filter((line) => /^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):/.test(line))
      .map((line) => line.split(/:\s+/) as [string, string]),
  );
}

const NO_CAPS = '0000000000000000';

/** The host uid of the sandbox's root: the owner of its view's own layer. */
const hostRootOf = (sbx: Sandbox): number =>
  statSync(join(viewPaths(cp.driver.instance, sbx.sandboxId).dir, 'layer')).uid;

describe('what root is', () => {
  it("holds moby's 14 capabilities under the seccomp filter, without no_new_privs; the user none; sudo no more than root", async () => {
    const asRoot = await succeed(box, 'cat /proc/self/status; cat /proc/self/uid_map', AS_ROOT);
    expect(privileges(asRoot)).toEqual({
      CapInh: NO_CAPS,
      CapPrm: MOBY_CAPS,
      CapEff: MOBY_CAPS,
      CapBnd: MOBY_CAPS,
      CapAmb: NO_CAPS,
      NoNewPrivs: '0',
      Seccomp: '2',
    });
    expect(privileges(await succeed(box, 'cat /proc/self/status'))).toEqual({
      CapInh: NO_CAPS,
      CapPrm: NO_CAPS,
      CapEff: NO_CAPS,
      CapBnd: MOBY_CAPS,
      CapAmb: NO_CAPS,
      NoNewPrivs: '0',
      Seccomp: '2',
    });
    expect(privileges(await succeed(box, 'sudo -n cat /proc/self/status'))).toMatchObject({
      CapPrm: MOBY_CAPS,
      CapEff: MOBY_CAPS,
      Seccomp: '2',
    });
    // Root is the sandbox's: ids 0..65534 map to its range; sandboxd's host uid, one above, maps to none.
    const hostRoot = hostRootOf(box);
    expect(hostRoot).toBeGreaterThanOrEqual(FIRST_HOST_ID);
    expect(asRoot).toMatch(new RegExp(`^\\s+0\\s+${String(hostRoot)}\\s+${String(MAPPED_IDS)}$`, 'm'));
    const daemon = sandboxdPid(cp.driver.instance, box.sandboxId);
    expect(readFileSync(`/proc/${daemon}/status`, 'utf8')).toMatch(
      new RegExp(`^Uid:\\s+${String(hostRoot + MAPPED_IDS)}\\s`, 'm'),
    );
  });
});

describe('closed egress, tried from root', () => {
  let counter: DatagramCounter;
  beforeAll(async () => {
    counter = await countDatagrams(world.network.ns, world.network.nsAddress, UDP_PORT);
    // IPv6 link-local addresses are usable once duplicate address detection is done (a second or two).
    const names = networkNames(cp.driver.instance, box.sandboxId);
    const tentative = (): boolean =>
      /tentative/.test(
        sh('ip', ['-n', names.namespace, '-6', 'addr', 'show', 'dev', names.sandboxVeth]) +
          sh('ip', ['-6', 'addr', 'show', 'dev', names.hostVeth]),
      );
    for (let waited = 0; tentative(); waited += 100) {
      if (waited > 10_000) throw new Error('the link-local addresses stayed tentative');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    await counter.stop();
  });

  /** [label, kind, host, port] of every connection tried from `sbx`. */
  const targets = (sbx: Sandbox): [string, string, string, number][] => {
    const side = hostSide(sbx);
    return [
      ['tcp upstream', 'tcp', world.network.nsAddress, world.upstream.port],
      ['udp upstream', 'udp', world.network.nsAddress, UDP_PORT],
      ['tcp host veth', 'tcp', side.hostAddress, 22],
      // Not 53: every DNS question, to any address, is the sandbox's resolver's (sandboxd's).
      ['udp host veth', 'udp', side.hostAddress, 123],
      ['tcp host veth ipv6', 'tcp', `${side.hostLinkLocal}%${side.sandboxVeth}`, 22],
      ['api', 'tcp', side.sandboxAddress, 4000],
    ];
  };

  /** What closed egress answers each attempt of `net.py`, for `root` or `user`. */
  const refused = (user: 'root' | 'user'): Record<string, unknown> => ({
    'AF_PACKET SOCK_RAW': 'EPERM',
    'AF_PACKET SOCK_DGRAM': 'EPERM',
    'AF_INET SOCK_RAW icmp': 'EPERM',
    'AF_INET SOCK_RAW tcp': 'EPERM',
    'AF_INET SOCK_RAW raw': 'EPERM',
    'AF_INET6 SOCK_RAW icmpv6': 'EPERM',
    'AF_INET ping socket': 'EACCES',
    // The rule's reject: an ICMP "administratively prohibited" for TCP, the send refused for UDP.
    'tcp upstream': 'EHOSTUNREACH',
    'udp upstream': 'EPERM',
    'tcp host veth': 'EHOSTUNREACH',
    'udp host veth': 'EPERM',
    // ICMPv6's "prohibited" is a soft error to TCP: the connect times out instead.
    'tcp host veth ipv6': expect.stringMatching(/^(timeout|EHOSTUNREACH|EACCES|EPERM)$/) as unknown,
    api: 'ECONNREFUSED',
    'setns /proc/1/ns/net': user === 'root' ? 'EPERM' : 'open EACCES',
    'setns /proc/self/ns/net': 'EPERM',
    'setns /proc/1/ns/user': user === 'root' ? 'EPERM' : 'open EACCES',
    'setns /proc/1/ns/mnt': user === 'root' ? 'EPERM' : 'open EACCES',
    'unshare(CLONE_NEWUSER)': 'EPERM',
    'unshare(CLONE_NEWNET)': 'EPERM',
    'unshare(CLONE_NEWNS)': 'EPERM',
  });

  it('has real targets: a sandbox with open egress reaches them over TCP and UDP', async () => {
    const before = counter.count();
    const result = await python<Record<string, string>>(open, 'net.py', 'user', {
      TARGETS: JSON.stringify(targets(open).slice(0, 2)),
    });
    expect(result).toMatchObject({ 'tcp upstream': 'connected', 'udp upstream': 'sent' });
    await expect.poll(() => counter.count()).toBeGreaterThan(before);
  });

  it('refuses raw sockets, TCP and UDP to other networks, setns and unshare to root and to the user', async () => {
    expect(hostSide(box).hostLinkLocal).not.toBe('');
    const before = counter.count();
    for (const user of ['root', 'user'] as const) {
      const result = await python<Record<string, string>>(box, 'net.py', user, {
        TARGETS: JSON.stringify(targets(box)),
      });
      expect(result, user).toEqual(refused(user));
    }
    expect(counter.count()).toBe(before);
  });

  it("refuses root nft, ip, sysctl, unshare and nsenter; the sandbox's network is as it was and egress still closed", async () => {
    const before = networkState(box);
    const side = hostSide(box);
    // The image has no nft: root brings the host's own (both are Debian bookworm) and its libraries.
    const nft = sh('sh', ['-c', 'command -v nft']).trim();
    const libraries = [...sh('ldd', [nft]).matchAll(/=> (\/\S+)/g)]
      .map((match) => match[1] ?? '')
      .filter((path) => !/\/(libc\.so|ld-linux)/.test(path));
    await box.files.write(`${ATTACK_DIR}/nft/nft`, readFileSync(nft), AS_ROOT);
    for (const library of libraries) {
      await box.files.write(`${ATTACK_DIR}/nft/lib/${basename(library)}`, readFileSync(library), AS_ROOT);
    }
    await succeed(box, `chmod 755 ${ATTACK_DIR}/nft/nft`, AS_ROOT);
    const NFT = `LD_LIBRARY_PATH=${ATTACK_DIR}/nft/lib ${ATTACK_DIR}/nft/nft`;
    // The brought nft runs: it prints its version.
    expect(await succeed(box, `${NFT} --version`, AS_ROOT)).toMatch(/^nftables v/);
    const results = await tryEach(box, {
      'nft list ruleset': `${NFT} list ruleset`,
      'nft flush ruleset': `${NFT} flush ruleset`,
      'nft add table': `${NFT} add table inet sdk_attack`,
      'nft insert accept': `${NFT} insert rule inet sdk_sandbox output accept`,
      'nft delete table': `${NFT} delete table inet sdk_sandbox`,
      'ip link set lo down': 'ip link set lo down',
      'ip link set veth down': `ip link set ${side.sandboxVeth} down`,
      'ip addr add': 'ip addr add 198.51.100.7/32 dev lo',
      'ip route add': `ip route add 203.0.113.0/24 via ${side.hostAddress}`,
      'ip route del default': 'ip route del default',
      'ip link add': 'ip link add sdkattack type dummy',
      'ip netns add': 'ip netns add sdkattack',
      'sysctl ip_unprivileged_port_start': 'sysctl -w net.ipv4.ip_unprivileged_port_start=0',
      'sysctl ping_group_range': "sysctl -w net.ipv4.ping_group_range='0 2147483647'",
      'sysctl forwarding': 'sysctl -w net.ipv4.conf.all.forwarding=0',
      'sysctl disable_ipv6': 'sysctl -w net.ipv6.conf.all.disable_ipv6=1',
      'unshare -n': 'unshare -n true',
      'unshare -U': 'unshare -U true',
      'unshare -Ur': 'unshare -Ur true',
      'unshare -m': 'unshare -m true',
      'nsenter -t 1 -n': 'nsenter -t 1 -n true',
    });
    for (const [label, { code, message }] of Object.entries(results)) {
      expect(code, label).not.toBe(0);
      expect(message, label).toMatch(/Operation not permitted|Permission denied|permission denied/);
    }
    expect(Object.keys(results)).toHaveLength(21);
    expect(networkState(box)).toBe(before);
    expect(
      await python<Record<string, string>>(box, 'net.py', 'root', { TARGETS: JSON.stringify(targets(box)) }),
    ).toEqual(refused('root'));
  });
});

/** A shell function decoding base64 patterns (comma-separated in `$1`) to one per line. */
const DECODE = `decode() { printf '%s\\n' "$1" | tr ',' '\\n' | while read -r b; do printf '%s' "$b" | base64 -d; echo; done; }`;

/** The secrets alone (no canary), base64 and comma-separated, and the canary's base64. */
const secretEnvs = (): Record<string, string> => ({
  SECRETS: patterns
    .slice(1)
    .map((p) => Buffer.from(p.value).toString('base64'))
    .join(','),
  CANARY_PATTERN: Buffer.from(CANARY).toString('base64'),
});

/** Report of `procs.py`. */
interface ProcessReport {
  readonly procs: Record<
    string,
    {
      readonly comm: string;
      readonly uid: number;
      readonly cmdline: string;
      readonly sandboxd?: boolean;
      readonly environ: string;
      readonly mem: string;
      readonly ptrace: string;
      readonly process_vm_readv: string;
      readonly root: string;
    }
  >;
  readonly found: [string, string, number][];
}

describe('the keys and tokens, tried from root', () => {
  beforeAll(async () => {
    // The route is in use: sandboxd has read the key, injected it and sent it upstream over TLS.
    const status = await succeed(
      box,
      `python3 -c 'import urllib.request; print(urllib.request.urlopen("${routeUrl}/bytes?n=16").status)'`,
    );
    expect(status).toBe('200\n');
    expect(await world.upstream.requests()).toContain('GET /bytes?n=16');
  });

  it('shows root no process of sandboxd; what root can read of every visible process holds no secret', async () => {
    // Sandbox code of both accounts, each with the canary in its environment (and so its memory).
    const asRoot = await box.commands.run('exec sleep 300', {
      ...AS_ROOT,
      background: true,
      envs: { CANARY },
    });
    const asUser = await box.commands.run('exec sleep 300', { background: true, envs: { CANARY } });
    try {
      const report = await python<ProcessReport>(box, 'procs.py', 'root', { PATTERNS: encodedPatterns() });
      const found = named(report.found);
      expect(found.filter((line) => !line.startsWith('canary '))).toEqual([]);
      // The search works: root reads its own sleeper's environment and memory and finds the canary.
      expect(found).toContain(`canary in ${String(asRoot.pid)} environ`);
      expect(found).toContain(`canary in ${String(asRoot.pid)} mem`);
      expect(report.procs[String(asRoot.pid)]).toMatchObject({
        comm: 'sleep',
        uid: 0,
        environ: 'read',
        mem: 'read',
        ptrace: 'attached',
        process_vm_readv: 'read',
        root: 'own',
      });
      // Not the user's: root has no CAP_SYS_PTRACE.
      expect(report.procs[String(asUser.pid)]).toMatchObject({
        comm: 'sleep',
        uid: 1000,
        environ: 'EACCES',
        mem: 'EACCES',
        ptrace: 'EPERM',
        process_vm_readv: 'EPERM',
        root: 'EACCES',
      });
      // Every process root sees is sandbox code: the sandbox's pid 1, the command's shell, the sleepers
      // (and the files helper, Node, idling after the fixture's write: `node`, or `MainThread` as Node
      // names its main thread).
      expect(report.procs['1']).toMatchObject({ comm: 'sdk-exec', uid: 0 });
      for (const [pid, proc] of Object.entries(report.procs)) {
        expect(proc.sandboxd, pid).toBe(false);
        expect(['sdk-exec', 'sh', 'sleep', 'node', 'MainThread'], pid).toContain(proc.comm);
        expect([0, 1000], pid).toContain(proc.uid); // no process of an id the sandbox does not map
        expect(['own', 'EACCES'], pid).toContain(proc.root);
      }
      // sandboxd runs all along, on the host, in a pid namespace above the sandbox's.
      expect(sandboxdPid(cp.driver.instance, box.sandboxId)).toMatch(/^\d+$/);

      // The user sees less still, and no secret either.
      const asUserReport = await python<ProcessReport>(box, 'procs.py', 'user', {
        PATTERNS: encodedPatterns(),
      });
      expect(named(asUserReport.found).filter((line) => !line.startsWith('canary '))).toEqual([]);
      expect(named(asUserReport.found)).toContain(`canary in ${String(asUser.pid)} environ`);
      expect(asUserReport.procs[String(asRoot.pid)]).toMatchObject({ environ: 'EACCES', ptrace: 'EPERM' });
      expect(asUserReport.procs['1']).toMatchObject({ environ: 'EACCES', mem: 'EACCES', ptrace: 'EPERM' });
    } finally {
      await asRoot.kill();
      await asUser.kill();
    }
  });

  it('dumps core only of sandbox code, and no core holds a secret', async () => {
    const stdout = await succeed(
      box,
      `${DECODE}
       ulimit -c unlimited
       mkdir -p /tmp/cores/python /tmp/cores/sleep
       (cd /tmp/cores/python && python3 -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)')
       (cd /tmp/cores/sleep && { sleep 60 & p=$!; sleep 0.2; kill -SEGV $p; wait $p; })
       kill -SEGV 1; kill -ABRT 1; sleep 0.2; kill -0 1 && echo "pid 1 lives"
       echo "cores $(find /tmp/cores -type f | wc -l)"
       echo secrets; decode "$SECRETS" | grep -r -l -s -a -F -f - /tmp/cores
       echo canary; decode "$CANARY_PATTERN" | grep -r -l -s -a -F -f - /tmp/cores | sort
       echo end`,
      { ...AS_ROOT, envs: { ...secretEnvs(), CANARY } },
    );
    const [cores, secrets, canary] = stdout.split(/^(?:secrets|canary|end)$/m);
    // pid 1 ignores the signals; both processes of its own dumped, and their cores hold the canary
    // (it was in their environment) and none of the secrets.
    expect(cores).toBe('pid 1 lives\ncores 2\n');
    expect(secrets).toBe('\n');
    expect(canary?.trim().split('\n')).toEqual([
      expect.stringMatching(/^\/tmp\/cores\/python\//),
      expect.stringMatching(/^\/tmp\/cores\/sleep\//),
    ]);
  });

  it('finds no kernel memory, no keyring, no second /proc and no kernel setting to change', async () => {
    const results = await tryEach(box, {
      '/dev/mem': 'head -c 1 /dev/mem',
      '/dev/kmem': 'head -c 1 /dev/kmem',
      '/dev/port': 'head -c 1 /dev/port',
      '/proc/kcore': 'head -c 1 /proc/kcore',
      '/proc/kmsg': 'head -c 1 /proc/kmsg',
      dmesg: 'dmesg',
      'mount -t proc': 'mount -t proc proc /mnt',
      'mount -t tmpfs': 'mount -t tmpfs none /mnt',
      'mount --bind': 'mount --bind / /mnt',
      'remount /opt/sdk rw': 'mount -o remount,rw /opt/sdk',
      'umount /proc': 'umount -l /proc',
      core_pattern: "echo '|/tmp/handler' > /proc/sys/kernel/core_pattern",
      sysrq: 'echo h > /proc/sysrq-trigger',
      '/sys': 'ls /sys/kernel',
      'cgroup release_agent': 'ls /sys/fs/cgroup/memory/release_agent',
    });
    for (const [label, { code, message }] of Object.entries(results)) {
      expect(code, label).not.toBe(0);
      expect(message, label).toMatch(
        /No such file or directory|Directory nonexistent|Permission denied|permission denied|Operation not permitted|must be superuser/,
      );
    }
    expect(await python(box, 'keys.py', 'root')).toEqual({
      add_key: 'EPERM',
      request_key: 'EPERM',
      'keyctl(GET_KEYRING_ID, session)': 'EPERM',
      'keyctl(GET_KEYRING_ID, user)': 'EPERM',
      'keyctl(JOIN_SESSION_KEYRING)': 'EPERM',
    });
  });

  it("reaches none of sandboxd's listeners but its gateway route, with a token or without, and no socket of sandboxd", async () => {
    const side = hostSide(box);
    const routePort = Number(new URL(routeUrl).port);
    const { listeners, unix } = await python<{
      listeners: { address: string; port: number; uid: number }[];
      unix: string[];
    }>(box, 'listeners.py', 'root');
    // What root learns from /proc/net: sandboxd's API, its route and its egress filter listen (owned by
    // an unmapped id); the filter's ports take only what the table redirects there.
    const egressPorts = Object.values(EGRESS_PORTS).map((port) => `:::${String(port)} 65534`);
    expect(listeners.map((l) => `${l.address}:${String(l.port)} ${String(l.uid)}`).sort()).toEqual(
      [`${side.sandboxAddress}:4000 65534`, `127.0.0.1:${String(routePort)} 65534`, ...egressPorts].sort(),
    );
    // No socket with a name or an abstract address in the network namespace sandboxd shares.
    expect(unix).toEqual([]);
    const tries = (sbx: Sandbox, token?: string) =>
      python<Record<string, string>>(sbx, 'net.py', 'root', {
        TARGETS: JSON.stringify(
          listeners
            .map((l) => [`${l.address}:${String(l.port)}`, 'http', l.address, l.port])
            .concat([
              ['api v4-mapped', 'http', `::ffff:${hostSide(sbx).sandboxAddress}`, 4000],
              ['api on loopback', 'http', '127.0.0.1', 4000],
            ]),
        ),
        ...(token === undefined ? {} : { TOKEN: token }),
      });
    expect(await tries(box)).toMatchObject({
      ...Object.fromEntries(
        Object.values(EGRESS_PORTS).map((port) => [`:::${String(port)}`, 'ECONNREFUSED']),
      ),
      [`${side.sandboxAddress}:4000`]: 'ECONNREFUSED',
      [`127.0.0.1:${String(routePort)}`]: expect.stringMatching(/^answered HTTP\/1\.1 /) as unknown,
      'api v4-mapped': 'ECONNREFUSED',
      'api on loopback': 'ECONNREFUSED',
    });
    // With the sandbox's own token (in the other sandbox, as if it had leaked): refused before a byte.
    const otherSide = hostSide(other);
    const withToken = await python<Record<string, string>>(other, 'net.py', 'root', {
      TARGETS: JSON.stringify([
        ['api', 'http', otherSide.sandboxAddress, 4000],
        ['api v4-mapped', 'http', `::ffff:${otherSide.sandboxAddress}`, 4000],
      ]),
      TOKEN: other.accessToken,
    });
    expect(withToken).toMatchObject({ api: 'ECONNREFUSED', 'api v4-mapped': 'ECONNREFUSED' });
    // No socket file anywhere root looks.
    expect(
      await succeed(box, 'find / \\( -path /proc -o -path /sys \\) -prune -o -type s -print', AS_ROOT),
    ).toBe('');
  });

  it('finds no secret in any file root can read, where it finds a canary planted in one', async () => {
    const stdout = await succeed(
      box,
      `${DECODE}
       decode "$CANARY_PATTERN" > /root/planted.txt
       decode "$SECRETS" | grep -r -l -s -D skip --binary-files=text -F -f - / --exclude-dir=proc --exclude-dir=sys
       echo canary
       decode "$CANARY_PATTERN" | grep -r -l -s -D skip --binary-files=text -F -f - / --exclude-dir=proc --exclude-dir=sys
       rm /root/planted.txt; echo end`,
      { ...AS_ROOT, envs: secretEnvs(), timeoutMs: 110_000 },
    );
    const [secrets, canary] = stdout.split(/^(?:canary|end)$/m);
    expect(secrets).toBe('');
    expect(canary?.trim().split('\n')).toContain('/root/planted.txt');
  });
});

/** The package's CLI (`npm run build`), as `sdk serve` runs it. */
const CLI = fileURLToPath(new URL('../../../dist/cli/sdk.js', import.meta.url));

/**
 * The descriptor a launcher of the control plane leaves open in it, as a supervisor or a shell can (high:
 * Node makes its own low ones close on exec).
 */
const LAUNCHER_FD = 40;

describe('descriptors of the host', () => {
  it('are none in sandbox code: a command holds its stdio alone, root and user alike', async () => {
    for (const user of ['root', 'user'] as const) {
      const fds = await python<Record<string, string>>(box, 'fds.py', user);
      expect(Object.keys(fds), user).toEqual(['0', '1', '2']);
    }
  });

  it("are none in sandbox code when the control plane's launcher left one open: nothing reaches it", async () => {
    const state = stateFolder();
    const port = await freePort();
    writeFileSync(operatorKeyFile(state.stateDir), `${TEST_OPERATOR_KEY}\n`, { mode: 0o600 });
    // `sdk serve` started with a pipe open on LAUNCHER_FD, which this test reads.
    const stdio: ('ignore' | 'pipe' | 'inherit')[] = ['ignore', 'pipe', 'inherit'];
    while (stdio.length < LAUNCHER_FD) stdio.push('ignore');
    stdio.push('pipe');
    const server = spawn(
      process.execPath,
      [CLI, 'serve', '--port', String(port), '--state-dir', state.stateDir],
      {
        stdio,
      },
    );
    let received = '';
    (server.stdio as unknown as Readable[])[LAUNCHER_FD]?.on(
      'data',
      (data: Buffer) => (received += data.toString()),
    );
    let sbx: Sandbox | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: server.stdout as Readable }).on('line', (line) => {
          if (line.startsWith('control plane on ')) resolve();
        });
        server.once('exit', (code) => reject(new Error(`sdk serve exited (${String(code)})`)));
      });
      sbx = await Sandbox.create({
        template: 'sdk-base-caps',
        allowInternetAccess: false,
        controlPlaneUrl: `http://127.0.0.1:${String(port)}`,
      });
      await sbx.files.write(`${ATTACK_DIR}/fds.py`, FDS_PY, AS_ROOT);
      // Each account lists its descriptors and writes to the launcher's when it has it.
      const held: Record<string, string[]> = {};
      for (const user of ['root', 'user'] as const) {
        const fds = JSON.parse(
          await succeed(sbx, `python3 ${ATTACK_DIR}/fds.py`, {
            user,
            envs: { WRITE_FD: String(LAUNCHER_FD) },
          }),
        ) as Record<string, string>;
        held[user] = Object.keys(fds);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect({ ...held, received }).toEqual({ root: ['0', '1', '2'], user: ['0', '1', '2'], received: '' });
    } finally {
      await sbx?.kill().catch(() => undefined);
      server.kill('SIGTERM');
      if (server.exitCode === null && server.signalCode === null) await once(server, 'exit');
      for (const id of await state.driver.list()) await state.driver.destroy(id);
      state.driver.close();
      state.remove();
    }
  });
});

/** The files root changes in `box`'s view, as every template image on the host has them. */
const TOUCHED = [
  'etc/marker',
  'etc/debian_version',
  'etc/issue',
  'usr/bin/pinky',
  'usr/bin/ptx',
  'usr/bin/tac',
  'usr/local/bin/rootbash',
];

/** Each template image's TOUCHED files: mode, owner, size, mtime and content hash (or absent). */
function imageFingerprints(): Map<string, string> {
  const images = readdirSync(IMAGES).filter((name) => name.startsWith('template-'));
  return new Map(
    images.map((image) => [
      image,
      TOUCHED.map((file) => {
        const path = join(IMAGES, image, file);
        if (!existsSync(path)) return `${file} absent`;
        const st = lstatSync(path);
        const hash = createHash('sha256').update(readFileSync(path)).digest('hex');
        return `${file} ${st.mode.toString(8)} ${String(st.uid)} ${String(st.size)} ${String(st.mtimeMs)} ${hash}`;
      }).join('\n'),
    ]),
  );
}

describe("root's writes, devices and file capabilities", () => {
  it("change its own view only: not the template's image on the host, not another sandbox of the template", async () => {
    const before = imageFingerprints();
    const original = await succeed(
      other,
      'cat /etc/debian_version; stat -c "%a %u %s" /usr/bin/tac /usr/bin/ptx /etc/issue',
    );
    await succeed(
      box,
      `echo marker > /etc/marker
       echo appended >> /etc/debian_version
       : > /usr/bin/ptx
       rm /usr/bin/pinky
       chmod 4777 /usr/bin/tac
       chown 1000:1000 /etc/issue && touch -d 2001-01-01 /etc/issue
       cp /bin/bash /usr/local/bin/rootbash && chown 0:0 /usr/local/bin/rootbash && chmod 4755 /usr/local/bin/rootbash`,
      AS_ROOT,
    );
    // Root's sandbox has its changes.
    expect(
      await succeed(
        box,
        'cat /etc/marker; tail -1 /etc/debian_version; stat -c "%a %u %s" /usr/bin/tac /usr/bin/ptx /etc/issue; ls /usr/bin/pinky 2>&1 | grep -c "No such"',
      ),
    ).toMatch(/^marker\nappended\n4777 0 \d+\n755 0 0\n644 1000 \d+\n1\n$/);
    // The other sandbox of the same template, and the images on the host, do not.
    expect(
      await succeed(
        other,
        'cat /etc/debian_version; stat -c "%a %u %s" /usr/bin/tac /usr/bin/ptx /etc/issue',
      ),
    ).toBe(original);
    expect(
      (await other.commands.run('cat /etc/marker; ls /usr/bin/pinky /usr/local/bin/rootbash')).stdout,
    ).toBe('/usr/bin/pinky\n');
    const after = imageFingerprints();
    for (const [image, fingerprint] of before) {
      if (after.has(image)) expect(after.get(image), image).toBe(fingerprint);
    }
    // On the host, what root made is the sandbox root's host uid's, never host root's: its setuid bash
    // gives no one on the host anything.
    const layer = join(viewPaths(cp.driver.instance, box.sandboxId).dir, 'layer');
    const hostRoot = hostRootOf(box);
    for (const file of ['etc/marker', 'usr/local/bin/rootbash']) {
      expect(statSync(join(layer, file)).uid, file).toBe(hostRoot);
    }
    expect(statSync(join(layer, 'usr/local/bin/rootbash')).mode & 0o7777).toBe(0o4755);
  });

  it('cannot make a device anywhere, and /dev holds no block device nor memory device', async () => {
    const results = await tryEach(box, {
      'block /tmp': 'mknod /tmp/sda b 8 0',
      'block /dev': 'mknod /dev/sda b 8 0',
      'block /root': 'mknod /root/sda b 8 0',
      'block /etc': 'mknod /etc/sda b 8 0',
      'char /dev/mem': 'mknod /dev/mem c 1 1',
      'char /home': 'mknod /home/user/kmem c 1 2',
      'char /dev/shm': 'mknod /dev/shm/port c 1 4',
      'fifo /tmp': 'mknod /tmp/fifo p',
    });
    for (const [label, { code, message }] of Object.entries(results)) {
      if (label === 'fifo /tmp')
        expect(code, label).toBe(0); // the call itself is allowed
      else expect(`${String(code)} ${message}`, label).toMatch(/^1 .*Operation not permitted/);
    }
    expect(await succeed(box, 'find /dev -type b; ls /dev', AS_ROOT)).toBe(
      [
        'fd',
        'full',
        'null',
        'ptmx',
        'pts',
        'random',
        'shm',
        'stderr',
        'stdin',
        'stdout',
        'tty',
        'urandom',
        'zero',
        '',
      ].join('\n'),
    );
  });

  it("gets no capability beyond moby's from file capabilities or a setuid file it made", async () => {
    await succeed(
      box,
      'cp /usr/bin/python3.11 /usr/local/bin/capspy && setcap cap_net_admin,cap_sys_admin,cap_sys_ptrace,cap_dac_read_search+ep /usr/local/bin/capspy',
      AS_ROOT,
    );
    // Capabilities beyond the bounding set: the kernel refuses to run the file at all, for root too.
    const refusedRun = {
      exitCode: 126,
      stderr: expect.stringMatching(/capspy: Operation not permitted/) as unknown,
    };
    for (const options of [AS_ROOT, {}]) {
      expect(await box.commands.run('/usr/local/bin/capspy -c 1', options)).toMatchObject(refusedRun);
    }
    // One of moby's: the user gets that one, and it opens no raw socket (the network namespace is the host's).
    await succeed(
      box,
      'cp /usr/bin/python3.11 /usr/local/bin/rawpy && setcap cap_net_raw+ep /usr/local/bin/rawpy',
      AS_ROOT,
    );
    const raw = await succeed(
      box,
      `/usr/local/bin/rawpy -c 'import socket
print(open("/proc/self/status").read())
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    print("raw socket")
except OSError as e:
    print("raw", e.errno)'`,
    );
    expect(privileges(raw)).toMatchObject({ CapEff: '0000000000002000', CapBnd: MOBY_CAPS });
    expect(raw).toMatch(/^raw 1$/m);
    // The user's setuid root bash (made by root above) is the sandbox's root, no more.
    expect(
      privileges(await succeed(box, '/usr/local/bin/rootbash -p -c "cat /proc/self/status"')),
    ).toMatchObject({ CapEff: MOBY_CAPS, CapBnd: MOBY_CAPS });
  });
});
