/**
 * `npm run bench:gateway`: the gateway beside nginx `proxy_pass`, both in front of the same TLS
 * upstream (nginx inside a network namespace the benchmark creates), measured in one run:
 *   - added latency over a direct request at a fixed 50 req/s (open loop; p50, p99)
 *   - throughput at concurrency 10 (wrk)
 *   - a 1 GiB streamed response (MB/s, and peak RSS growth of the proxy process)
 * and printed as ratios against nginx and against direct. Durations: BENCH_SECONDS (default 20).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { makeTestPki } from '../../test/integration/support/test-ca.js';
import { ensureBenchPackages } from '../support/host-packages.js';
import { freePort } from '../../test/support/loopback.js';
import { createTestNetwork } from '../../test/integration/support/test-network.js';
import { openLoopLatency, type LatencySummary } from '../support/latency.js';
import { streamThrough, type StreamResult } from '../support/streaming.js';
import { wrkThroughput } from '../support/throughput.js';
import { proxyConfig, startNginx, upstreamConfig } from './nginx.js';

/** Command → Debian package: nginx is the TLS upstream and the anchor, wrk measures throughput. */
const PACKAGES = { nginx: 'nginx-light', wrk: 'wrk' };
const SECONDS = Number(process.env.BENCH_SECONDS ?? '20');
const GiB = 1024 ** 3;
const UPSTREAM_PORT = 8443;
const SERVER_NAME = 'upstream.test';
const HEADER_VALUE = 'bench-not-a-secret-0123456789';

async function startGateway(caFile: string, upstream: string) {
  const script = fileURLToPath(new URL('./gateway-process.js', import.meta.url));
  // BENCH_PROFILE=<dir> writes a V8 CPU profile of the gateway process there.
  const profile =
    process.env.BENCH_PROFILE === undefined
      ? []
      : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`];
  const child = spawn(
    process.execPath,
    [
      ...profile,
      script,
      JSON.stringify({ caFile, upstream, headerValue: HEADER_VALUE, clockSpeedup: 1_000 }),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
  return {
    pid: child.pid ?? 0,
    url: `http://127.0.0.1:${line}`,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

const ms = (value: number): string => `${value.toFixed(3)} ms`;
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}x`;

async function main(): Promise<void> {
  const problem = ensureBenchPackages(PACKAGES);
  if (problem !== undefined) {
    console.error(`bench:gateway: ${problem}`);
    process.exitCode = 1;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'sdk-bench-gw-'));
  const network = createTestNetwork(40);
  const stops: (() => Promise<void>)[] = [];
  try {
    const pki = makeTestPki(dir, 'bench', [network.nsAddress], [SERVER_NAME]);
    const caFile = join(dir, 'ca-only.pem');
    writeFileSync(caFile, pki.caPem);
    const bytesFile = join(dir, 'one-gib.bin');
    writeFileSync(bytesFile, '');
    truncateSync(bytesFile, GiB); // sparse: reads cost no disk
    const upstreamNginx = await startNginx(
      join(dir, 'upstream'),
      'upstream',
      upstreamConfig(
        join(dir, 'upstream'),
        network.nsAddress,
        UPSTREAM_PORT,
        pki.certFile,
        pki.keyFile,
        bytesFile,
      ),
      network.ns,
    );
    stops.push(upstreamNginx.stop);
    const direct = `https://${network.nsAddress}:${String(UPSTREAM_PORT)}`;
    const proxyPort = await freePort();
    const proxy = await startNginx(
      join(dir, 'proxy'),
      'proxy',
      proxyConfig(
        join(dir, 'proxy'),
        proxyPort,
        network.nsAddress,
        UPSTREAM_PORT,
        SERVER_NAME,
        caFile,
        HEADER_VALUE,
      ),
    );
    stops.push(proxy.stop);
    const nginxUrl = `http://127.0.0.1:${String(proxyPort)}`;
    const gateway = await startGateway(caFile, direct);
    stops.push(gateway.stop);

    console.log(`gateway benchmark: ${String(SECONDS)} s per latency run, Node ${process.version}`);
    // Throughput first: it also warms every process up (JIT included) before latency is measured.
    const tSeconds = Math.max(5, Math.round(SECONDS / 2));
    const tDirect = wrkThroughput(`${direct}/small`, 10, tSeconds);
    const tGateway = wrkThroughput(`${gateway.url}/small`, 10, tSeconds);
    const tNginx = wrkThroughput(`${nginxUrl}/small`, 10, tSeconds);

    const latency = async (origin: string, ca?: string): Promise<LatencySummary> =>
      openLoopLatency(origin, '/small', {
        ratePerSecond: 50,
        seconds: SECONDS,
        warmupSeconds: 3,
        ...(ca === undefined ? {} : { ca: pki.caPem }),
      });
    const lDirect = await latency(direct, pki.caPem);
    const lGateway = await latency(gateway.url);
    const lNginx = await latency(nginxUrl);

    // One unmeasured transfer first through each proxy: buffer pools and heap reach their working size
    // before the 1 GiB transfer whose rate and RSS growth are reported.
    for (const url of [gateway.url, nginxUrl]) await streamThrough(`${url}/bytes?warmup`, GiB, undefined);
    const sDirect = await streamThrough(`${direct}/bytes`, GiB, undefined, pki.caPem);
    const sGateway = await streamThrough(`${gateway.url}/bytes`, GiB, gateway.pid);
    const sNginx = await streamThrough(`${nginxUrl}/bytes`, GiB, proxy.workerPid);

    const added = (l: LatencySummary) => ({ p50: l.p50 - lDirect.p50, p99: l.p99 - lDirect.p99 });
    const aGateway = added(lGateway);
    const aNginx = added(lNginx);
    const row = (name: string, l: LatencySummary, t: number, s: StreamResult): string =>
      `${name.padEnd(8)} p50 ${ms(l.p50)}  p99 ${ms(l.p99)}  (${String(l.samples)} samples, ${String(l.errors)} errors)  ` +
      `${t.toFixed(0)} req/s  ${s.megabytesPerSecond.toFixed(0)} MB/s` +
      (s.rssGrowthMb === undefined ? '' : `  RSS +${s.rssGrowthMb.toFixed(1)} MB`);
    console.log('');
    console.log(row('direct', lDirect, tDirect, sDirect));
    console.log(row('gateway', lGateway, tGateway, sGateway));
    console.log(row('nginx', lNginx, tNginx, sNginx));
    console.log('');
    console.log(
      `added latency at 50 req/s   gateway p50 ${ms(aGateway.p50)} p99 ${ms(aGateway.p99)}   nginx p50 ${ms(aNginx.p50)} p99 ${ms(aNginx.p99)}`,
    );
    console.log(
      `throughput, concurrency 10  gateway/nginx ${ratio(tGateway, tNginx)}   gateway/direct ${ratio(tGateway, tDirect)}`,
    );
    console.log(
      `1 GiB stream                gateway/nginx ${ratio(sGateway.megabytesPerSecond, sNginx.megabytesPerSecond)}   gateway/direct ${ratio(sGateway.megabytesPerSecond, sDirect.megabytesPerSecond)}`,
    );
    console.log('');
    const checks: [string, boolean][] = [
      ['added p50 <= 0.2 ms', aGateway.p50 <= 0.2],
      ['added p99 <= 2 ms', aGateway.p99 <= 2],
      ['throughput >= 0.5x nginx', tGateway >= 0.5 * tNginx],
      ['streaming >= 0.8x nginx', sGateway.megabytesPerSecond >= 0.8 * sNginx.megabytesPerSecond],
      ['streaming RSS flat within 20 MB', (sGateway.rssGrowthMb ?? Infinity) <= 20],
    ];
    for (const [name, met] of checks) console.log(`${met ? 'met   ' : 'MISSED'} ${name}`);
  } finally {
    for (const stop of stops.reverse()) await stop();
    network.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
