/**
 * Issue 27, egress by policy, for both isolations, as sandbox code meets it: a real DNS server
 * (dnsmasq) and real HTTP and HTTPS servers in a namespace of the test's. Names are decided on what the
 * connection carries (DNS question, TLS server name, HTTP Host), never on the address dialled; CIDRs by
 * the network; a refusal is a clear failure in the sandbox (NXDOMAIN, a TLS alert, a 403, a rejected
 * connection) and an `egress` event on the sandbox's stream; a policy changes on a running sandbox.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { once } from 'node:events';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../rules/errors.js';
import { MAX_NAME_CHECK_CONNECTIONS } from '../../../daemon/egress/name-checks.js';
import type { Isolation } from '../../../sandbox-drivers/sandbox-driver.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { egressEvent } from '../support/egress-events.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import { makeTestPki } from '../support/test-ca.js';
import { networkNames } from '../../../sandbox-drivers/namespace/sandbox-network.js';
import { createTestNetwork, forwardFromNamespace, sh, type TestNetwork } from '../support/test-network.js';

const METADATA = '169.254.169.254';
const execFileAsync = promisify(execFile);

let network: TestNetwork;
let cp: InProcessControlPlane;
let dir: string;
let httpPort: number;
const children: ChildProcess[] = [];
const servers: Server[] = [];

/** Serves `handler`'s answer (the Host it was asked for) on the host; returns the port. */
async function listen(server: Server, host: string): Promise<number> {
  servers.push(server);
  server.listen(0, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

const answerHost = (req: IncomingMessage, res: ServerResponse): void => {
  res.end(`host=${req.headers.host ?? ''}\n`);
};

beforeAll(async () => {
  network = createTestNetwork(0);
  dir = mkdtempSync(join(tmpdir(), 'sdk-egress-'));
  const ns = network.nsAddress;
  const pki = makeTestPki(dir, 'egress', [ns], ['allowed.test', '*.allowed.test', 'denied.test']);
  const tls = { cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) };
  const https = await listen(createHttpsServer(tls, answerHost), network.hostAddress);
  const http = await listen(createHttpServer(answerHost), network.hostAddress);
  httpPort = http;
  for (const [port, target] of [
    [443, https],
    [80, http],
    [8080, http],
  ] as const) {
    children.push(await forwardFromNamespace(network, port, target));
  }
  // Every test name answers the namespace's address, but for the two that try a forbidden one.
  const dnsmasq = spawn(
    'ip',
    [
      ...['netns', 'exec', network.ns, 'dnsmasq', '--no-daemon', '--no-resolv', '--no-hosts'],
      ...[`--listen-address=${ns}`, '--bind-interfaces', '--port=53', '--log-facility=-'],
      ...[`--address=/allowed.test/${ns}`, `--address=/denied.test/${ns}`],
      ...['--address=/rebind.test/169.254.169.254', '--address=/loop.allowed.test/127.0.0.1'],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(dnsmasq);
  sh('ip', ['-n', network.ns, 'addr', 'add', `${METADATA}/32`, 'dev', 'lo']);
  cp = await startControlPlane({ dnsServers: [ns] });
});

afterAll(async () => {
  await cp.stop();
  for (const child of children) child.kill();
  for (const server of servers) server.close();
  network.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `cmd` in the sandbox; its output and exit code. */
async function run(sbx: Sandbox, cmd: string): Promise<{ out: string; code: number }> {
  const result = await sbx.commands.run(cmd, { timeoutMs: 30_000 }).catch((error: unknown) => {
    const failed = error as { stdout?: string; stderr?: string; exitCode?: number };
    return { stdout: `${failed.stdout ?? ''}${failed.stderr ?? ''}`, exitCode: failed.exitCode ?? -1 };
  });
  return { out: result.stdout.trim(), code: result.exitCode ?? -1 };
}

const CURL = 'curl -sS -k --max-time 10';

describe.each<Isolation>(['namespace', 'gvisor'])('an allowlist (%s)', (isolation) => {
  let sbx: Sandbox;

  beforeAll(async () => {
    sbx = await cp.createSandbox({
      isolation,
      template: 'sdk-base',
      allowInternetAccess: true,
      egress: { mode: 'allowlist', allow: ['Allowed.test.', '*.allowed.test'] },
    });
  });
  afterAll(async () => {
    await sbx.kill();
  });

  it('resolves allowed names only: NXDOMAIN for others and for a name that answers a forbidden address', async () => {
    expect((await run(sbx, 'getent hosts allowed.test')).out).toContain(network.nsAddress);
    expect((await run(sbx, 'getent hosts denied.test')).code).toBe(2);
    expect((await run(sbx, 'getent hosts loop.allowed.test')).code).toBe(2); // 127.0.0.1: rebinding
    // Asked of another server directly: the table sends every question to sandboxd's resolver.
    const direct = await run(sbx, `python3 -c "import socket; print(socket.gethostbyname('denied.test'))"`);
    expect(direct.code).not.toBe(0);
    const refused = egressEvent(sbx, (e) => e.via === 'dns' && e.name === 'denied.test');
    await run(sbx, 'getent hosts denied.test');
    expect(await refused).toMatchObject({ event: 'refused', rule: 'allowlist' });
  });

  it('lets an allowed name through over HTTPS and HTTP, to its own address', async () => {
    expect(await run(sbx, `${CURL} https://allowed.test/`)).toEqual({ out: 'host=allowed.test', code: 0 });
    expect(await run(sbx, `${CURL} http://api.allowed.test/`)).toEqual({
      out: 'host=api.allowed.test',
      code: 0,
    });
    // Dialled at another address (the host's end of the test link), the name still decides: sandboxd
    // connects to the name's own address.
    const fronted = await run(
      sbx,
      `${CURL} --resolve allowed.test:443:${network.hostAddress} https://allowed.test/`,
    );
    expect(fronted).toEqual({ out: 'host=allowed.test', code: 0 });
  });

  it('refuses what the connection really names: a TLS alert, a 403, with events', async () => {
    const tlsRefused = egressEvent(sbx, (e) => e.via === 'tls' && e.name === 'denied.test');
    const denied = await run(
      sbx,
      `${CURL} --resolve denied.test:443:${network.nsAddress} https://denied.test/`,
    );
    expect(denied.code).toBe(35); // curl: TLS handshake failed (the alert)
    expect(await tlsRefused).toMatchObject({ event: 'refused', rule: 'allowlist', port: 443 });
    // An IP literal carries no server name.
    expect((await run(sbx, `${CURL} https://${network.nsAddress}/`)).code).toBe(35);
    // Host says another name than the allowed one dialled: refused by what the request says.
    const forged = await run(sbx, `${CURL} -w ' %{http_code}' -H 'Host: denied.test' http://allowed.test/`);
    expect(forged.out).toBe('egress refused: denied.test (allowlist)\n 403');
    // The request line names the allowed host, Host another: refused, whichever the proxy would use.
    const absolute = await run(
      sbx,
      `python3 -c "import socket; s = socket.create_connection(('allowed.test', 80)); s.sendall(b'GET http://allowed.test/ HTTP/1.1\\r\\nHost: denied.test\\r\\n\\r\\n'); print(s.recv(64))"`,
    );
    expect(absolute.out).toContain('403');
    // A second request on a connection checked for its first never reaches the server.
    const pipelined = await run(
      sbx,
      `python3 -c "
import socket
s = socket.create_connection(('allowed.test', 80))
s.sendall(b'GET / HTTP/1.1\\r\\nHost: allowed.test\\r\\n\\r\\nGET / HTTP/1.1\\r\\nHost: denied.test\\r\\n\\r\\n')
got = b''
while True:
    chunk = s.recv(4096)
    if not chunk: break
    got += chunk
print(got.count(b'host=allowed.test'), got.count(b'host=denied.test'))
"`,
    );
    expect(pipelined.out).toBe('1 0');
  });

  it("holds at most MAX_NAME_CHECK_CONNECTIONS of sandbox code's silent connections", async () => {
    // 400 connections that never say a name: sandboxd keeps the first ones and closes the rest at once.
    const flood = await run(
      sbx,
      `python3 -c "
import socket, time
held = []
for _ in range(400):
    s = socket.socket(); s.settimeout(5); s.connect(('${network.hostAddress}', 443)); held.append(s)
time.sleep(1)
open_ = 0
for s in held:
    s.setblocking(False)
    try:
        open_ += 1 if s.recv(1) else 0
    except BlockingIOError:
        open_ += 1
    except OSError:
        pass
print(open_)
"`,
    );
    expect(Number(flood.out)).toBeLessThanOrEqual(MAX_NAME_CHECK_CONNECTIONS);
    expect(Number(flood.out)).toBeGreaterThan(0);
    // Those gone, a connection that names an allowed host goes through.
    expect(await run(sbx, `${CURL} https://allowed.test/`)).toEqual({ out: 'host=allowed.test', code: 0 });
  });

  it('refuses other ports by the network, and opens them by CIDR on an update', async () => {
    expect((await run(sbx, `${CURL} http://${network.nsAddress}:8080/`)).code).not.toBe(0);
    const updated = await sbx.egress.update({
      mode: 'allowlist',
      allow: ['allowed.test', `${network.nsAddress}/32`],
    });
    expect(updated.allow).toEqual(['allowed.test', `${network.nsAddress}/32`]);
    expect(await sbx.egress.get()).toEqual(updated);
    expect((await run(sbx, `${CURL} http://${network.nsAddress}:8080/`)).out).toBe(
      `host=${network.nsAddress}:8080`,
    );
    // The names follow the new policy too: api.allowed.test is no longer allowed, by any address but
    // one the policy allows by CIDR.
    expect((await run(sbx, 'getent hosts api.allowed.test')).code).toBe(2);
    const byName = `${CURL} -o /dev/null -w '%{http_code}' --resolve api.allowed.test:80:${network.hostAddress} http://api.allowed.test/`;
    expect((await run(sbx, byName)).out).toBe('403');
    await sbx.egress.update({ mode: 'allowlist', allow: ['Allowed.test.', '*.allowed.test'] });
  });
});

describe('policies', () => {
  it('refuses a malformed policy before any call, naming the field, never the value', async () => {
    const bad = [
      { mode: 'allowlist', allow: ['a.*.example'] },
      { mode: 'allowlist', allow: ['https://pypi.org'] },
      { mode: 'open', allow: ['pypi.org'] },
      { mode: 'allowlist', allow: Array.from({ length: 257 }, (_, i) => `h${String(i)}.example`) },
    ] as const;
    for (const egress of bad) {
      const error = await cp.createSandbox({ allowInternetAccess: true, egress }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).not.toContain('pypi');
    }
    const closedButOpen = cp.createSandbox({ allowInternetAccess: false, egress: { mode: 'open' } });
    await expect(closedButOpen).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('closes a running sandbox, allowInternetAccess following the mode', async () => {
    const sbx = await cp.createSandbox({ template: 'sdk-base-caps', allowInternetAccess: true });
    try {
      expect(cp.plane.get(sbx.sandboxId)).toMatchObject({
        allowInternetAccess: true,
        egress: { mode: 'open' },
      });
      await sbx.egress.update({ mode: 'closed' });
      expect(cp.plane.get(sbx.sandboxId)).toMatchObject({
        allowInternetAccess: false,
        egress: { mode: 'closed' },
      });
      expect((await run(sbx, `${CURL} http://${network.nsAddress}:8080/`)).code).not.toBe(0);
    } finally {
      await sbx.kill();
    }
  });

  it('denies listed names in open mode, and answers the rest', async () => {
    const sbx = await cp.createSandbox({
      template: 'sdk-base',
      allowInternetAccess: true,
      egress: { mode: 'open', deny: ['denied.test'] },
    });
    try {
      expect((await run(sbx, 'getent hosts denied.test')).code).toBe(2);
      expect((await run(sbx, `${CURL} https://allowed.test/`)).out).toBe('host=allowed.test');
      const dialled = await run(
        sbx,
        `${CURL} --resolve denied.test:443:${network.nsAddress} https://denied.test/`,
      );
      expect(dialled.code).toBe(35);
      // Open mode: another port by address is open.
      expect((await run(sbx, `${CURL} http://${network.nsAddress}:8080/`)).code).toBe(0);
      expect((await sbx.egress.get()).deny).toEqual(['denied.test']);
    } finally {
      await sbx.kill();
    }
  });
});

describe.each<Isolation>(['namespace', 'gvisor'])('forbidden destinations (%s)', (isolation) => {
  it('are unreachable with open egress: the metadata address, link-local, the host itself', async () => {
    const sbx = await cp.createSandbox({ isolation, template: 'sdk-base', allowInternetAccess: true });
    const table = String(20_000 + (process.pid % 10_000));
    const veth = networkNames(cp.driver.instance, sbx.sandboxId).hostVeth;
    // The metadata address is the test namespace's (see beforeAll), and only this sandbox's traffic is
    // routed there (policy routing by the sandbox's veth): nothing else on the host changes.
    sh('ip', ['rule', 'add', 'iif', veth, 'to', `${METADATA}/32`, 'lookup', table]);
    sh('ip', ['route', 'add', `${METADATA}/32`, 'via', network.nsAddress, 'table', table]);
    const metadata = await forwardFromNamespace({ ...network, nsAddress: METADATA }, 80, httpPort);
    try {
      // The listener answers in its namespace, and the sandbox reaches that namespace otherwise.
      // Asynchronously: the listener forwards to a server of this process.
      const local = await execFileAsync('ip', [
        'netns',
        'exec',
        network.ns,
        'curl',
        '-sS',
        `http://${METADATA}/`,
      ]);
      expect(local.stdout).toBe(`host=${METADATA}\n`);
      expect((await run(sbx, `${CURL} http://${network.nsAddress}:8080/`)).code).toBe(0);
      for (const target of [
        `http://${METADATA}/`,
        `http://169.254.1.1/`,
        `http://${network.hostAddress}:${String(httpPort)}/`,
      ]) {
        expect((await run(sbx, `${CURL} --connect-timeout 5 ${target}`)).code).not.toBe(0);
      }
      const raw = await run(
        sbx,
        `python3 -c "import socket; s = socket.socket(); s.settimeout(5); print(s.connect_ex(('${METADATA}', 80)))"`,
      );
      expect(raw.out).not.toBe('0');
    } finally {
      metadata.kill();
      sh('ip', ['rule', 'del', 'iif', veth, 'to', `${METADATA}/32`, 'lookup', table]);
      sh('ip', ['route', 'flush', 'table', table]);
      await sbx.kill();
    }
  });
});
