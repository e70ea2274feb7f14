/**
 * Issue 27, the credential broker, as sandbox code meets it: unmodified git, npm, pip, uv, cargo, curl, Python
 * `requests` and httpx and Node reach servers that require a token (real ones, in a test namespace,
 * with a CA of their own) through `HTTPS_PROXY`, sandboxd injecting the token, and sandbox code never
 * reads it: not in its environment, files, `/proc`, the trust store, answers or events. Streams pass
 * as they come (server-sent events one at a time, a WebSocket, a chunked upload, a long response);
 * the proxy and the network refuse what the policy refuses, and bypassing the proxy gains nothing.
 */
import { readFileSync, readdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { execFileSync } from 'node:child_process';
import { firstValueFrom, takeWhile, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonEvent } from '../../../protocol/daemon-events.js';
import { InvalidArgumentError, SecretNotFoundError } from '../../../rules/errors.js';
import type { Isolation } from '../../../sandbox-drivers/sandbox-driver.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { API_HOST, REBIND_HOSTS, startBrokerWorld, type BrokerWorld } from '../support/broker-world.js';
import { egressEvent } from '../support/egress-events.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';
import {
  installSandboxTools,
  removeSandboxToolsBundle,
  type SandboxTools,
} from '../support/sandbox-tools.js';

let world: BrokerWorld;
let cp: InProcessControlPlane;
let dir: string;
let store: SecretStore;
let cache: SecretCache;

beforeAll(async () => {
  world = await startBrokerWorld(0);
  cp = await startControlPlane({ dnsServers: [world.network.nsAddress], gatewayCa: world.pki.caPem });
  dir = mkdtempSync(join(tmpdir(), 'sdk-broker-secrets-'));
  store = new SecretStore({ file: join(dir, 'secrets.json') });
  await store.create('api-authorization', world.apiAuthorization);
  for (const kind of ['git', 'npm', 'pypi'] as const) {
    await store.create(`${kind}-authorization`, world.registries.authorization[kind]);
  }
  cache = new SecretCache({ store });
});

afterAll(async () => {
  await cp.stop();
  world.stop();
  removeSandboxToolsBundle();
  rmSync(dir, { recursive: true, force: true });
});

/** Every secret value of the world: what sandbox code must never read. */
function secretValues(): string[] {
  const { authorization, tokens } = world.registries;
  return [world.apiAuthorization, world.apiAuthorization.slice('Bearer '.length)]
    .concat(Object.values(authorization), Object.values(tokens))
    .concat(Object.values(authorization).map((value) => value.split(' ')[1] ?? value));
}

/** The credentials of every host of the world. */
const RULES = () => [
  { host: API_HOST, headers: { authorization: 'api-authorization' } },
  { host: world.registries.hosts.git, headers: { authorization: 'git-authorization' } },
  { host: world.registries.hosts.npm, headers: { Authorization: 'npm-authorization' } },
  { host: world.registries.hosts.pypi, headers: { authorization: 'pypi-authorization' } },
];

async function create(
  isolation: Isolation,
  egress?: Parameters<typeof cp.createSandbox>[0],
): Promise<Sandbox> {
  return cp.createSandbox({
    isolation,
    template: 'sdk-base',
    allowInternetAccess: true,
    secretCache: cache,
    credentials: RULES(),
    ...egress,
  });
}

/** Runs `cmd` in the sandbox; its output (stdout then stderr) and exit code. */
async function run(sbx: Sandbox, cmd: string, user?: 'root'): Promise<{ out: string; code: number }> {
  const result = await sbx.commands.run(cmd, { timeoutMs: 120_000, ...(user === undefined ? {} : { user }) });
  return { out: `${result.stdout}${result.stderr}`.trim(), code: result.exitCode ?? -1 };
}

/** A Python one-liner's source, quoted for `sh -c`. */
const py = (source: string): string => `python3 -c '${source}'`;

/** Python that leaves `s` a socket connected to the sandbox's proxy (the port its `HTTPS_PROXY` names). */
const TO_PROXY =
  'import os, socket, ssl; p = os.environ["HTTPS_PROXY"].rsplit(":", 1); s = socket.create_connection(("127.0.0.1", int(p[1])));';

/** Sends `request` to the proxy from a raw socket; the first line of its answer. */
const rawProxy = (request: string): string =>
  py(
    `${TO_PROXY} s.sendall(${JSON.stringify(request)}.encode()); print(s.recv(200).decode().splitlines()[0])`,
  );

describe('unmodified tools with a token they cannot read (namespace)', () => {
  let sbx: Sandbox;
  let tools: SandboxTools;

  beforeAll(async () => {
    sbx = await create('namespace');
    tools = await installSandboxTools(sbx);
  });
  afterAll(async () => {
    await sbx.kill();
  });

  it('git clones and pushes over HTTPS with the token injected', async () => {
    const git = world.registries.hosts.git;
    const clone = await run(sbx, `git clone -q https://${git}/repo.git /tmp/repo && cat /tmp/repo/README.md`);
    expect(clone.code).toBe(0);
    const push = await run(
      sbx,
      `cd /tmp/repo && echo pushed > pushed.txt && git add pushed.txt && git -c user.name=u -c user.email=u@x commit -qm 'from the sandbox' && git push -q origin HEAD`,
    );
    expect(push).toMatchObject({ code: 0 });
    const log = execFileSync('git', ['--git-dir', world.registries.gitRepository, 'log', '--format=%s'], {
      encoding: 'utf8',
    });
    expect(log.split('\n')[0]).toBe('from the sandbox');
    // No credential was asked for or stored: git never saw one.
    expect((await run(sbx, 'cat /tmp/repo/.git/config; ls ~/.git-credentials 2>&1')).out).not.toMatch(
      /token/i,
    );
  });

  it('npm installs from a registry that requires a token', async () => {
    const npm = world.registries.hosts.npm;
    const installed = await run(
      sbx,
      `mkdir -p /tmp/npmp && cd /tmp/npmp && ${tools.npm} install --no-audit --no-fund --registry https://${npm}/ private-hello && node -p "require('private-hello')"`,
    );
    expect(installed.code).toBe(0);
    expect(installed.out).toContain('hello from the private registry');
    expect(world.registries.seen('npm').authorized).toBeGreaterThanOrEqual(2); // packument and tarball
  });

  it('pip and uv install from an index that requires a token', async () => {
    const index = `https://${world.registries.hosts.pypi}/simple/`;
    const pip = await run(
      sbx,
      `${tools.pip} install -q --no-cache-dir --index-url ${index} --target /tmp/pipt private-hello && PYTHONPATH=/tmp/pipt ${py('import private_hello; print(private_hello.GREETING)')}`,
    );
    expect(pip).toEqual({ out: 'hello from the private index', code: 0 });
    const uv = await run(
      sbx,
      `${tools.uv} pip install -q --no-cache --python python3 --index-url ${index} --target /tmp/uvt private-hello && PYTHONPATH=/tmp/uvt ${py('import private_hello; print(private_hello.GREETING)')}`,
    );
    expect(uv).toEqual({ out: 'hello from the private index', code: 0 });
  });

  it('cargo resolves from a registry whose git index and crates require a token', async () => {
    const { cargo } = world.registries.packages;
    const project = `/tmp/cargop`;
    const resolved = await run(
      sbx,
      [
        `mkdir -p ${project}/src ${project}/.cargo && cd ${project} && touch src/lib.rs`,
        `printf '[registries.private]\\nindex = "${cargo.index}"\\n' > .cargo/config.toml`,
        `printf '[package]\\nname = "p"\\nversion = "0.1.0"\\nedition = "2021"\\n\\n[dependencies]\\n${cargo.name} = { version = "${cargo.version}", registry = "private" }\\n' > Cargo.toml`,
        `${tools.cargo} generate-lockfile -q && grep -A3 'name = "${cargo.name}"' Cargo.lock`,
      ].join(' && '),
    );
    expect(resolved.code).toBe(0);
    expect(resolved.out).toContain(`checksum = "${cargo.cksum}"`);
  });

  it('curl, Python requests and httpx, and Node use the credential', async () => {
    const url = `https://${API_HOST}/whoami`;
    expect(await run(sbx, `curl -sS ${url}`)).toEqual({ out: 'authorized', code: 0 });
    const requests = `${tools.python} -c 'import requests; print(requests.get("${url}").text.strip())'`;
    expect(await run(sbx, requests)).toEqual({ out: 'authorized', code: 0 });
    const httpx = `${tools.python} -c 'import httpx; print(httpx.get("${url}").text.strip())'`;
    expect(await run(sbx, httpx)).toEqual({ out: 'authorized', code: 0 });
    const fetched = `node -e "fetch('${url}').then((r) => r.text()).then((t) => console.log(t.trim()))"`;
    expect(await run(sbx, fetched)).toEqual({ out: 'authorized', code: 0 });
    const https = `node -e "require('https').get('${url}', (r) => r.pipe(process.stdout))"`;
    expect(await run(sbx, https)).toEqual({ out: 'authorized', code: 0 });
  });

  it('drops a header of the same name the request carried, and a response header that echoes the value', async () => {
    const sent = await run(sbx, `curl -sS -D - -H 'Authorization: Bearer mine' https://${API_HOST}/whoami`);
    expect(sent.out).toContain('authorized');
    expect(world.lastApiHeaders().authorization).toBe(world.apiAuthorization);
    expect(sent.out.toLowerCase()).not.toContain('x-seen-authorization');
  });

  it('leaves the secret nowhere sandbox code can look', async () => {
    const values = secretValues();
    // Searched by a fragment from the middle of each value: a command line is itself recorded.
    const patterns = values.map((value) => `-e '${value.slice(4, 20)}'`).join(' ');
    const places = [
      'env',
      'cat /proc/*/environ /proc/*/cmdline 2>/dev/null | tr "\\0" "\\n"',
      'ps auxww',
      // Every file of the sandbox, its trust store included (which holds the CA certificate, no key).
      `grep -rIlF ${patterns} / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev 2>/dev/null; true`,
    ];
    for (const place of places) {
      for (const user of [undefined, 'root'] as const) {
        const seen = await run(sbx, place, user);
        for (const value of values) expect(seen.out).not.toContain(value);
      }
    }
    expect(
      (
        await run(
          sbx,
          'grep -c "PRIVATE KEY" /etc/ssl/certs/ca-certificates.crt /usr/local/share/ca-certificates/*',
          'root',
        )
      ).out,
    ).not.toMatch(/:[1-9]/);
    // The handle, the events and the control plane's files hold no value either.
    const shown =
      inspect(sbx.credentials, { showHidden: true, depth: 5 }) + JSON.stringify(sbx.credentials.status);
    const events = JSON.stringify(await eventsSoFar(sbx));
    for (const value of values) {
      expect(shown).not.toContain(value);
      expect(events).not.toContain(value);
    }
    for (const file of filesUnder(cp.stateDir)) {
      const text = readFileSync(file, 'latin1');
      for (const value of values) expect(text, file).not.toContain(value);
    }
  });

  it('reveals the credential to an endpoint that echoes headers, as SPEC says of gateways', async () => {
    const echoed = await run(sbx, `curl -sS https://${API_HOST}/echo`);
    expect(JSON.parse(echoed.out)).toMatchObject({ authorization: world.apiAuthorization });
  });

  it('passes server-sent events one at a time, a WebSocket, a chunked upload and a long response', async () => {
    let output = '';
    const waiters: (() => void)[] = [];
    const stream = await sbx.commands.run(`curl -sSN https://${API_HOST}/events`, {
      background: true,
      onStdout: (data) => {
        output += data;
        for (const wake of waiters.splice(0)) wake();
      },
    });
    const seen = (text: string): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => (output.includes(text) ? resolve() : void waiters.push(check));
        check();
      });
    await world.eventStreams(1);
    // Each event is sent only once the one before reached sandbox code: a buffering proxy never ends.
    for (const n of [1, 2, 3]) {
      world.sendEvent(`event ${String(n)}`);
      await seen(`data: event ${String(n)}\n\n`);
    }
    await stream.kill();
    // A WebSocket client as the libraries make one behind a proxy: CONNECT, TLS, an upgrade (Node's
    // own WebSocket ignores HTTPS_PROXY).
    const socket = await run(
      sbx,
      `python3 -c '
import base64, os, socket, ssl
host, port = os.environ["HTTPS_PROXY"].rsplit(":", 1)
raw = socket.create_connection(("127.0.0.1", int(port)))
raw.sendall(b"CONNECT ${API_HOST}:443 HTTP/1.1\\r\\nHost: ${API_HOST}:443\\r\\n\\r\\n")
assert raw.recv(100).startswith(b"HTTP/1.1 200")
s = ssl.create_default_context().wrap_socket(raw, server_hostname="${API_HOST}")
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET /socket HTTP/1.1\\r\\nHost: ${API_HOST}\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Version: 13\\r\\nSec-WebSocket-Key: " + key + "\\r\\n\\r\\n").encode())
head = b""
while b"\\r\\n\\r\\n" not in head:
    head += s.recv(1)
message, mask = b"ping through the broker", os.urandom(4)
s.sendall(bytes([0x81, 0x80 | len(message)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(message)))
frame = s.recv(100)
print(head.split(b" ")[1].decode(), frame[2 : 2 + frame[1]].decode())
'`,
    );
    expect(socket).toEqual({ out: '101 ping through the broker', code: 0 });
    const upload = await run(
      sbx,
      `head -c 5000000 /dev/zero | curl -sS -X POST -T - -H 'Transfer-Encoding: chunked' https://${API_HOST}/upload`,
    );
    expect(upload).toEqual({ out: 'received 5000000', code: 0 });
    const long = await run(sbx, `curl -sS https://${API_HOST}/bytes?n=200000000 | wc -c`);
    expect(long).toEqual({ out: '200000000', code: 0 });
  });

  it('takes a rotated secret on refresh: the next request carries the new value', async () => {
    const rotated = `Bearer rotated-${Date.now().toString(36)}-value`;
    world.acceptAlso(rotated);
    try {
      await store.update('api-authorization', rotated);
      await sbx.credentials.refresh();
      expect(await run(sbx, `curl -sS https://${API_HOST}/whoami`)).toEqual({ out: 'authorized', code: 0 });
      expect(world.lastApiHeaders().authorization).toBe(rotated);
    } finally {
      await store.update('api-authorization', world.apiAuthorization);
      await sbx.credentials.refresh();
      world.acceptAlso(undefined);
    }
  });
});

describe.each<Isolation>(['namespace', 'gvisor'])('what the broker refuses (%s)', (isolation) => {
  let sbx: Sandbox;

  beforeAll(async () => {
    sbx = await create(isolation, { egress: { mode: 'allowlist', allow: ['*.private.test', 'open.test'] } });
  });
  afterAll(async () => {
    await sbx.kill();
  });

  it('brokers under an allowlist and refuses other names at the proxy and in the network', async () => {
    expect(await run(sbx, `curl -sS https://${API_HOST}/whoami`)).toEqual({ out: 'authorized', code: 0 });
    const refs = await run(sbx, `git ls-remote https://${world.registries.hosts.git}/repo.git`);
    expect(refs).toMatchObject({ code: 0, out: expect.stringMatching(/refs\/heads\/main/) as unknown });
    // Allowed without a credential: tunnelled untouched (curl checks the test server's own CA).
    const open = await run(
      sbx,
      `curl -sS --cacert /dev/stdin https://open.test/ <<'EOF'\n${world.pki.caPem}EOF`,
    );
    expect(open).toEqual({ out: 'host=open.test', code: 0 });
    const refused = egressEvent(sbx, (e) => e.via === 'proxy' && e.name === 'denied.test');
    const denied = await run(sbx, `curl -sS https://denied.test/`);
    expect(denied.out).toContain('CONNECT tunnel failed, response 403');
    expect(await refused).toMatchObject({ event: 'refused', rule: 'allowlist' });
    // Around the proxy the network decides the same: a TLS alert for the name it refuses.
    const around = `curl -sS --noproxy '*' -k --resolve denied.test:443:${world.network.nsAddress} https://denied.test/`;
    expect((await run(sbx, around)).code).toBe(35);
    // And a credential host reached around the proxy gets no credential.
    const bypass = await run(
      sbx,
      `curl -sS --noproxy '*' --cacert /dev/stdin https://${API_HOST}/whoami <<'EOF'\n${world.pki.caPem}EOF`,
    );
    expect(bypass).toEqual({ out: 'anonymous', code: 0 });
  });

  it('refuses CONNECT to itself, loopback, link-local, metadata and names that answer them', async () => {
    for (const target of [
      '127.0.0.1:3128',
      'localhost:3128',
      '169.254.169.254:80',
      '169.254.0.1:443',
      `${REBIND_HOSTS.metadata}:443`,
      `${REBIND_HOSTS.loopback}:443`,
      '[::1]:443',
      '0x7f.1:443',
    ]) {
      const answer = await run(sbx, rawProxy(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
      expect(answer.out, target).toMatch(/^HTTP\/1\.1 403/);
    }
    // Absolute-form to the same: refused alike.
    expect(
      (await run(sbx, rawProxy('GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n')))
        .out,
    ).toMatch(/^HTTP\/1\.1 403/);
  });

  it('keeps a credential on its host: another Host on the tunnel is refused, a fronted SNI too', async () => {
    const misdirected = await run(
      sbx,
      `curl -sS -o /dev/null -w '%{http_code}' -H 'Host: open.test' https://${API_HOST}/whoami`,
    );
    expect(misdirected.out).toBe('421');
    // A body coded otherwise than chunked alone is refused, as a gateway route refuses it.
    const coded = await run(
      sbx,
      py(
        `${TO_PROXY} s.sendall(b"CONNECT ${API_HOST}:443 HTTP/1.1\\r\\nHost: ${API_HOST}:443\\r\\n\\r\\n"); s.recv(100); t = ssl.create_default_context().wrap_socket(s, server_hostname="${API_HOST}"); t.sendall(b"POST /upload HTTP/1.1\\r\\nHost: ${API_HOST}\\r\\nTransfer-Encoding: gzip, chunked\\r\\n\\r\\n0\\r\\n\\r\\n"); print(t.recv(100).split(b"\\r\\n")[0].decode())`,
      ),
    );
    expect(coded.out).toBe('HTTP/1.1 400 Bad Request');
    // A tunnel to an allowed name carrying TLS for another name is cut before any byte goes on.
    const fronted = egressEvent(
      sbx,
      (e) => e.via === 'proxy' && e.rule === 'server name differs from CONNECT',
    );
    const sni = await run(
      sbx,
      py(
        `${TO_PROXY} s.sendall(b"CONNECT open.test:443 HTTP/1.1\\r\\nHost: open.test:443\\r\\n\\r\\n"); print(s.recv(100).split(b"\\r\\n")[0].decode()); c = ssl.create_default_context(); c.check_hostname = False; c.verify_mode = ssl.CERT_NONE\ntry:\n  c.wrap_socket(s, server_hostname="denied.test"); print("handshake")\nexcept Exception as e: print("refused", type(e).__name__)`,
      ),
    );
    expect(sni.out).toMatch(/^HTTP\/1\.1 200 Connection established\nrefused/);
    expect(await fronted).toMatchObject({ event: 'refused', name: 'open.test' });
  });
});

describe('a closed sandbox with credentials', () => {
  it('brokers nothing: sandboxd itself may reach out, so the proxy holds to the policy', async () => {
    const sbx = await cp.createSandbox({ secretCache: cache, credentials: RULES() });
    try {
      const refused = egressEvent(sbx, (e) => e.via === 'proxy' && e.name === API_HOST);
      expect((await run(sbx, `curl -sS https://${API_HOST}/whoami`)).out).toContain(
        'CONNECT tunnel failed, response 403',
      );
      expect(await refused).toMatchObject({ event: 'refused', rule: 'closed' });
      expect(
        (await run(sbx, `curl -sS --noproxy '*' --max-time 5 https://${API_HOST}/whoami`)).code,
      ).not.toBe(0);
    } finally {
      await sbx.kill();
    }
  });
});

describe('credentials checked before any call', () => {
  it('refuses a wildcard, an address, a port, a transport header, a repeated host', async () => {
    const bad = [
      [{ host: '*.private.test', headers: { authorization: 'api-authorization' } }],
      [{ host: '10.0.0.1', headers: { authorization: 'api-authorization' } }],
      [{ host: 'api.private.test:443', headers: { authorization: 'api-authorization' } }],
      [{ host: API_HOST, headers: { host: 'api-authorization' } }],
      [{ host: API_HOST, headers: {} }],
      [
        { host: API_HOST, headers: { authorization: 'api-authorization' } },
        { host: 'API.private.test.', headers: { authorization: 'api-authorization' } },
      ],
    ];
    const before = (await cp.driver.list()).length;
    for (const credentials of bad) {
      await expect(create('namespace', { credentials })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect((await cp.driver.list()).length).toBe(before);
  });

  it('fails with SecretNotFoundError for a missing secret and leaves no sandbox', async () => {
    const before = (await cp.driver.list()).length;
    await expect(
      create('namespace', {
        credentials: [{ host: API_HOST, headers: { authorization: 'no-such-secret' } }],
      }),
    ).rejects.toBeInstanceOf(SecretNotFoundError);
    expect((await cp.driver.list()).length).toBe(before);
  });
});

/** The events of `sbx` so far: up to the start of a command run now. */
async function eventsSoFar(sbx: Sandbox): Promise<DaemonEvent[]> {
  const marker = `marker-${String(Date.now())}`;
  const events = firstValueFrom(
    sbx.events$.pipe(
      takeWhile((event) => !JSON.stringify(event).includes(marker), true),
      toArray(),
    ),
  );
  await run(sbx, `true ${marker}`);
  return events;
}

/** Every regular file under `root`. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => {
      try {
        return statSync(path).isFile();
      } catch {
        return false;
      }
    });
}
