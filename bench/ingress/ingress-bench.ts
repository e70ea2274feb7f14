/**
 * `npm run bench:ingress` (root): preview URLs (issue 28) beside a direct connection to the sandbox and
 * beside nginx as a reverse proxy, in one run. The control plane runs as `sdk serve` in its own process
 * (so the load generators here do not share its event loop); one namespace sandbox runs a Node server
 * on `0.0.0.0:8000` (so the host can also reach it directly at the sandbox's address); nginx
 * (`nginx-light`) proxies `127.0.0.1:<port>` to that address with a keep-alive upstream and no
 * buffering. Measured for each path: open-loop latency of `GET /small` at 50 requests a second for
 * `BENCH_SECONDS` (default 20, after 2 s of warm-up), and throughput of 1 MiB responses with wrk at
 * concurrency 4 for `BENCH_SECONDS`. Targets (ratios in this run): the preview's added p50 ≤ 3× nginx's
 * added p50, its throughput ≥ 0.5× nginx's. Then a terminal's keystroke → echo round trip beside a
 * command's round trip on the same sandbox (`terminal-echo.ts`; target: p50 ≤ 2× the command's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Sandbox } from '../../sdk/sandbox.js';
import { startNginx } from '../gateway/nginx.js';
import { ensureBenchPackages } from '../support/host-packages.js';
import { openLoopLatency } from '../support/latency.js';
import { ms, verdict } from '../support/report.js';
import { wrkThroughput } from '../support/throughput.js';
import { terminalAndCommandRoundTrips } from './terminal-echo.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? '20');
const APP_PORT = 8000;
const BYTES = 2 ** 20;
/** Keystrokes (and commands) timed. */
const KEYSTROKES = 200;
/** The built CLI (`npm run build`, which the npm script runs first). */
const CLI = join(import.meta.dirname, '../../../dist/cli/sdk.js');

/** The app: `/small` answers "ok", `/bytes` 1 MiB, keep-alive. */
const APP = `
const body = Buffer.alloc(${String(BYTES)}, 120);
require('node:http').createServer((req, res) => {
  if (req.url.startsWith('/bytes')) { res.writeHead(200, { 'content-length': body.length }); res.end(body); }
  else res.end('ok');
}).listen(${String(APP_PORT)}, '0.0.0.0', () => console.log('listening'));
`;

/** `sdk serve` in its own process: its URL and the operator key it printed. */
async function serve(stateDir: string): Promise<{ url: string; key: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let url = '';
  for await (const line of createInterface({ input: child.stdout })) {
    url ||= /^control plane on (\S+)/.exec(line)?.[1] ?? '';
    const key = /operator key .*: (\S+)$/.exec(line)?.[1];
    if (key !== undefined && url !== '') return { url, key, child };
  }
  throw new Error('sdk serve ended before it printed its URL and key');
}

async function main(): Promise<void> {
  const missing = ensureBenchPackages({ nginx: 'nginx-light', wrk: 'wrk' });
  if (missing !== undefined) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), 'sdk-bench-ingress-'));
  const plane = await serve(join(dir, 'state'));
  process.env.SDK_API_KEY = plane.key;
  let sbx: Sandbox | undefined;
  let stopNginx: (() => Promise<void>) | undefined;
  try {
    sbx = await Sandbox.create({
      controlPlaneUrl: plane.url,
      template: 'sdk-base-caps',
      allowInternetAccess: false,
    });
    await sbx.files.write('/tmp/app.cjs', APP);
    const running = sbx;
    await new Promise<void>((resolve, reject) => {
      running.commands
        .run('node /tmp/app.cjs', { background: true, onStdout: (d) => d.includes('listening') && resolve() })
        .catch(reject);
    });
    const connected = await fetch(`${plane.url}/v1/sandboxes/${sbx.sandboxId}/connect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sbx.accessToken}` },
    });
    const { daemonUrl } = (await connected.json()) as { daemonUrl: string };
    const address = new URL(daemonUrl).hostname;
    const nginxPort = 20_000 + (process.pid % 20_000);
    const nginx = await startNginx(
      join(dir, 'nginx'),
      'proxy',
      `user root;
worker_processes 1;
daemon off;
pid ${dir}/nginx/proxy.pid;
error_log stderr error;
events { worker_connections 4096; }
http {
  access_log off;
${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/nginx/${kind};`).join('\n')}
  upstream app { server ${address}:${String(APP_PORT)}; keepalive 32; }
  server {
    listen 127.0.0.1:${String(nginxPort)};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`,
    );
    stopNginx = nginx.stop;
    const token = sbx.ports.token(APP_PORT);
    const previewBase = `/v1/sandboxes/${sbx.sandboxId}/ports/${String(APP_PORT)}`;
    const paths = [
      { name: 'direct', origin: `http://${address}:${String(APP_PORT)}`, prefix: '', query: '' },
      { name: 'nginx', origin: `http://127.0.0.1:${String(nginxPort)}`, prefix: '', query: '' },
      { name: 'preview URL', origin: plane.url, prefix: previewBase, query: `?sdk_preview_token=${token}` },
    ];
    const results = [];
    for (const path of paths) {
      const latency = await openLoopLatency(path.origin, `${path.prefix}/small${path.query}`, {
        ratePerSecond: 50,
        seconds: SECONDS,
        warmupSeconds: 2,
      });
      const url = `${path.origin}${path.prefix}/bytes${path.query}`;
      let rate: number;
      try {
        rate = wrkThroughput(url, 4, SECONDS);
      } catch (error) {
        // What one request answers now says why.
        const res = await fetch(url);
        const text = (await res.text()).slice(0, 300);
        throw new Error(`${path.name}: ${String(error)}; now ${String(res.status)} ${text}`);
      }
      results.push({ name: path.name, latency, mibPerSecond: (rate * BYTES) / 2 ** 20 });
    }
    console.log(
      `GET /small at 50/s for ${String(SECONDS)} s; 1 MiB responses at concurrency 4 for ${String(SECONDS)} s`,
    );
    for (const r of results) {
      console.log(
        `  ${r.name.padEnd(12)} p50 ${ms(r.latency.p50).padStart(8)}  p99 ${ms(r.latency.p99).padStart(8)}  errors ${String(r.latency.errors)}  ${r.mibPerSecond.toFixed(0).padStart(6)} MiB/s`,
      );
    }
    const [direct, viaNginx, viaPreview] = results;
    if (direct === undefined || viaNginx === undefined || viaPreview === undefined)
      throw new Error('no result');
    const previewAdded = viaPreview.latency.p50 - direct.latency.p50;
    const nginxAdded = viaNginx.latency.p50 - direct.latency.p50;
    const latencyRatio = previewAdded / nginxAdded;
    const rateRatio = viaPreview.mibPerSecond / viaNginx.mibPerSecond;
    console.log(
      `  added p50: preview ${ms(previewAdded)}, nginx ${ms(nginxAdded)}: ${latencyRatio.toFixed(2)}× (target ≤ 3×) ${verdict(latencyRatio <= 3)}`,
    );
    console.log(
      `  throughput: preview ${rateRatio.toFixed(2)}× nginx's (target ≥ 0.5×) ${verdict(rateRatio >= 0.5)}`,
    );
    const { keystrokeP50, commandP50 } = await terminalAndCommandRoundTrips(sbx, KEYSTROKES);
    const echoRatio = keystrokeP50 / commandP50;
    console.log(
      `  terminal keystroke → echo p50 ${ms(keystrokeP50)}, command round trip p50 ${ms(commandP50)}: ${echoRatio.toFixed(2)}× (target ≤ 2×) ${verdict(echoRatio <= 2)}`,
    );
  } finally {
    await stopNginx?.();
    await sbx?.kill().catch(() => undefined);
    plane.child.kill('SIGTERM');
    await new Promise((resolve) => plane.child.once('exit', resolve));
    // sdk serve leaves its sandboxes to the next start: none is left here, the one made was killed.
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
