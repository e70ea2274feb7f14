/**
 * Issue 24, item 8, tried from sandbox code: connections to a gateway port cannot grow sandboxd past its
 * 128 MiB bound (daemon/README.md, "Bounds"). Before, 12,000 silent connections took sandboxd from 68 to
 * 169 MiB and it kept every one; now a route keeps at most `CONNECTION_LIMITS.perRoute` and the sandbox
 * `perHost` over all routes, closes the rest at once (recorded as `ConnectionLimitError`), and answers
 * 408 to a head not complete within 10 s. Sandbox code opens at most 4096 files per process. One sandbox
 * for the whole file.
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTION_LIMITS } from '../../../gateway/connection-limits.js';
import { COMMAND_OPEN_FILES } from '../../../daemon/sandbox-spawn.js';
import { gatewayStateSchema } from '../../../protocol/gateway-wire.js';
import { useGatewayWorld } from '../support/gateway-world.js';
import { sandboxdPid, TestSandboxes, type TestSandbox } from '../support/namespace-sandbox.js';
import { peakBytes, resetPeak, SANDBOXD_MEMORY_BOUND } from '../support/sandboxd-memory.js';

const world = useGatewayWorld(0);
const sandboxes = new TestSandboxes();
let sbx: TestSandbox;
let daemon: string;
const ports = { a: 0, b: 0 };

/**
 * `node /tmp/conns.js <port> <count> <mode> <holdMs>`: opens `count` connections to a gateway port at
 * once (`sse`: 12 ms apart, under the route's rate) and prints what became of them as JSON. `silent`
 * sends nothing, `partial` half a request head, `sse` a request the upstream answers with an endless
 * stream. It ends `holdMs` after every connection settled or once `/tmp/release` exists, or (`holdMs`
 * -1) once the gateway closed all.
 */
const CONNS = String.raw`
const net = require('net');
const [port, count, holdMs] = [2, 3, 5].map((i) => Number(process.argv[i]));
const mode = process.argv[4];
const first = { silent: '', partial: 'GET /small HTTP/1.1\r\nHost: a\r\n', sse: 'GET /sse HTTP/1.1\r\nHost: a\r\n\r\n' }[mode];
const seen = { connected: 0, refused: 0, closed: 0, answered: 0, got408: 0, closeMs: [] };
let settled = 0;
const report = () => {
  const { closeMs, ...counts } = seen;
  console.log(JSON.stringify({ ...counts, minCloseMs: Math.min(...closeMs), maxCloseMs: Math.max(...closeMs) }));
  process.exit(0);
};
const settle = () => {
  if (++settled < count || holdMs < 0) return;
  setTimeout(report, holdMs);
  setInterval(() => require('fs').existsSync('/tmp/release') && report(), 50);
};
const one = () => {
  const opened = Date.now();
  let data = '';
  let connected = false;
  const c = net.connect(port, '127.0.0.1', () => {
    connected = true;
    seen.connected++;
    if (first) c.write(first);
    settle();
  });
  c.on('data', (chunk) => {
    if (data === '') seen.answered++;
    data += chunk;
  });
  c.on('error', () => undefined);
  c.on('close', () => {
    seen.closed++;
    if (data === '') seen.refused++;
    if (data.startsWith('HTTP/1.1 408 ')) seen.got408++;
    seen.closeMs.push(Date.now() - opened);
    if (!connected) settle();
    if (holdMs < 0 && seen.closed === count) report();
  });
};
for (let i = 0; i < count; i++) {
  if (mode === 'sse') setTimeout(one, i * 12);
  else one();
}
setTimeout(report, 90_000);
`;

interface Seen {
  readonly connected: number;
  readonly refused: number;
  readonly closed: number;
  readonly answered: number;
  readonly got408: number;
  readonly minCloseMs: number;
  readonly maxCloseMs: number;
}

/** Runs `processes` copies of the connection script at once in the sandbox; their reports. */
async function connections(
  port: number,
  count: number,
  mode: 'silent' | 'partial' | 'sse',
  holdMs: number,
  processes = 1,
): Promise<Seen[]> {
  const one = `node /tmp/conns.js ${String(port)} ${String(count)} ${mode} ${String(holdMs)}`;
  const { stdout } = await sbx.commands.run(`for i in $(seq ${String(processes)}); do ${one} & done; wait`, {
    timeoutMs: 120_000,
  });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Seen);
}

/** The status of one ordinary request through `port`, from sandbox code. */
async function ordinaryRequest(port: number): Promise<string> {
  const { stdout } = await sbx.commands.run(
    `node -e "fetch('http://127.0.0.1:${String(port)}/small').then((r) => console.log(r.status), (e) => console.log(e.cause?.code ?? e.message))"`,
  );
  return stdout.trim();
}

/** sandboxd's `route` records of failures so far: route and class. */
async function routeFailures(): Promise<{ route: string | undefined; errorClass: string | undefined }[]> {
  const abort = new AbortController();
  const failures: { route: string | undefined; errorClass: string | undefined }[] = [];
  // The stream stays open for live records: read until it has had nothing more for a second.
  let idle = setTimeout(() => abort.abort(), 1_000);
  try {
    for await (const record of await sbx.client.lines('GET', '/v1/events?after=0', {
      signal: abort.signal,
    })) {
      clearTimeout(idle);
      idle = setTimeout(() => abort.abort(), 1_000);
      const { type, event, route, errorClass } = record as Record<string, string | undefined>;
      if (type === 'route' && event === 'failed') failures.push({ route, errorClass });
    }
  } catch {
    // aborted once idle
  } finally {
    clearTimeout(idle);
  }
  return failures;
}

/** Samples sandboxd's open files every 20 ms until `stop`; the most seen. */
function sampleOpenFiles(): { stop: () => number } {
  let most = 0;
  const sample = (): void => {
    most = Math.max(most, readdirSync(`/proc/${daemon}/fd`).length);
  };
  sample();
  const timer = setInterval(sample, 20);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return most;
    },
  };
}

beforeAll(async () => {
  sbx = await sandboxes.launch({ memoryBytes: 512 * 2 ** 20, gatewayCa: world.pki.caPem });
  daemon = sandboxdPid(sandboxes.driver.instance, sbx.id);
  const route = {
    upstream: world.upstream.origin,
    headers: { authorization: 'Bearer sk-caps-planted-0123456789' },
    allow: [['GET', '/*']],
    ratePerMinute: 6000,
  };
  const state = await sbx.client.call('POST', '/v1/gateways', gatewayStateSchema, {
    routes: { a: route, b: route },
  });
  ports.a = state.routes.a?.port ?? 0;
  ports.b = state.routes.b?.port ?? 0;
  await sbx.commands.run(`cat > /tmp/conns.js <<'EOF'\n${CONNS}\nEOF`);
});

afterAll(async () => {
  await world.upstream.endStreams().catch(() => undefined);
  await sandboxes.destroyAll();
});

describe('open files of sandbox code', () => {
  it(`is ${String(COMMAND_OPEN_FILES)}, soft and hard: raising it fails, opening one more is EMFILE`, async () => {
    const { stdout } = await sbx.commands.run(
      `ulimit -n; ulimit -Hn; (ulimit -n 8192) 2>/dev/null && echo raised || echo refused
python3 -c '
import errno
fds = []
try:
    while True: fds.append(open("/dev/null"))
except OSError as e: print(fds[-1].fileno(), errno.errorcode[e.errno])'
node -e "const fs = require('fs'); let last; try { for (;;) last = fs.openSync('/dev/null', 'r') } catch (e) { console.log(last, e.code) }"`,
    );
    const limit = String(COMMAND_OPEN_FILES);
    const highest = String(COMMAND_OPEN_FILES - 1);
    expect(stdout).toBe(`${limit}\n${limit}\nrefused\n${highest} EMFILE\n${highest} EMFILE\n`);
  });
});

describe('connections to a gateway port', () => {
  it('keeps a route to its cap under a flood of silent and half-sent connections, within sandboxd bound', async () => {
    const before = readdirSync(`/proc/${daemon}/fd`).length;
    resetPeak(daemon);
    const openFiles = sampleOpenFiles();
    // 12,000 connections from 4 processes (3,000 each, within their open-files limit), held 2 s.
    const flood = [
      ...(await Promise.all([
        connections(ports.a, 3_000, 'silent', 2_000, 2),
        connections(ports.a, 3_000, 'partial', 2_000, 2),
      ])),
    ].flat();
    const most = openFiles.stop();
    expect(flood).toHaveLength(4);
    // sandboxd never held more than the route's cap (and a few files of its own meanwhile).
    expect(most - before).toBeLessThanOrEqual(CONNECTION_LIMITS.perRoute + 16);
    // Most were closed at once (some were still waiting in the kernel's accept queue at the end).
    expect(flood.reduce((sum, seen) => sum + seen.refused, 0)).toBeGreaterThan(12_000 / 2);
    expect(peakBytes(daemon)).toBeLessThanOrEqual(SANDBOXD_MEMORY_BOUND);
    // The refusals are on record, typed, once per interval.
    expect(await routeFailures()).toContainEqual({ route: 'a', errorClass: 'ConnectionLimitError' });
    // Once the flood is gone the route serves an ordinary request through to the upstream.
    await expect.poll(() => ordinaryRequest(ports.a), { timeout: 20_000 }).toBe('200');
  });

  it(`answers 408 to a head not complete within ${String(CONNECTION_LIMITS.requestHeadTimeoutMs / 1000)} s and closes it`, async () => {
    const [silent, partial] = await Promise.all([
      connections(ports.b, 10, 'silent', -1),
      connections(ports.b, 10, 'partial', -1),
    ]);
    for (const seen of [silent[0], partial[0]]) {
      expect(seen).toMatchObject({ connected: 10, closed: 10, got408: 10 });
      // Never before the time-out; well before Node's default (60 s, checked every 30 s).
      expect(seen?.minCloseMs).toBeGreaterThanOrEqual(CONNECTION_LIMITS.requestHeadTimeoutMs - 50);
      expect(seen?.maxCloseMs).toBeLessThan(30_000);
    }
    expect(await ordinaryRequest(ports.b)).toBe('200');
  });

  it('stays within its bound with every connection of the sandbox streaming an exchange', async () => {
    resetPeak(daemon);
    // Each route's cap, over two routes: the sandbox's cap. One more on either is refused.
    const perRoute = CONNECTION_LIMITS.perHost / 2;
    const held = Promise.all([
      connections(ports.a, perRoute, 'sse', 60_000),
      connections(ports.b, perRoute, 'sse', 60_000),
    ]);
    await expect
      .poll(() => world.upstream.streamCount(), { timeout: 30_000 })
      .toBe(CONNECTION_LIMITS.perHost);
    const refused = await ordinaryRequest(ports.a);
    await sbx.commands.run('touch /tmp/release');
    const seen = (await held).flat();
    expect(refused).toMatch(/^(UND_ERR_SOCKET|ECONNRESET|EPIPE)$/);
    expect(seen.map((s) => s.answered)).toEqual([perRoute, perRoute]);
    expect(peakBytes(daemon)).toBeLessThanOrEqual(SANDBOXD_MEMORY_BOUND);
    await world.upstream.endStreams();
  });
});
