/**
 * `npm run bench:egress` (root): the credential broker (issue 27) beside a direct connection and beside a
 * gateway route, in one run, from one namespace sandbox to the same HTTPS upstream (the broker world's
 * `api.private.test` in a test namespace, `test/integration/support/broker-world.ts`). A Node client in
 * the sandbox (`client.mjs`, fetch with keep-alive) measures, for each path: latency of `GET /whoami`
 * one at a time, one every 20 ms (`BENCH_REQUESTS`, default 400: a route admits at most 6000 a minute,
 * SPEC), and throughput as response bytes per second of 4 MiB responses at concurrency 4 for
 * `BENCH_SECONDS` (default 10); then server-sent event streams direct, through the route and through the
 * broker, at once, with a second direct stream as the control, for `BENCH_SSE_SECONDS` (default 180,
 * events every 500 ms): time to the first byte, each event's lateness (received − sent, one clock), and
 * what each event through the broker took more than the same event direct. Targets (ratios in this
 * run): the broker's added p50 ≤ 2× the route's added p50, its throughput ≥ 0.5× the route's, and no
 * event later through the broker than the broker's added p50 beyond what two direct streams of the
 * same run differ by (their worst event: this VM's scheduling, which no proxy can remove).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SecretCache } from '../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../sdk/secret-store/secret-store.js';
import { SecretGateway } from '../../sdk/secret-gateway.js';
import type { Sandbox } from '../../sdk/sandbox.js';
import { API_HOST, startBrokerWorld } from '../../test/integration/support/broker-world.js';
import { startControlPlane } from '../../test/integration/support/control-plane.js';
import { median, ms, verdict } from '../support/report.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? '400');
const SECONDS = Number(process.env.BENCH_SECONDS ?? '10');
const SSE_SECONDS = Number(process.env.BENCH_SSE_SECONDS ?? '180');
const SSE_EVERY_MS = 500;
const CONCURRENCY = 4;
const SPACING_MS = 20;
const RESPONSE_BYTES = 4 * 2 ** 20;
/** The client, from the source tree (the bench build compiles TypeScript only). */
const CLIENT = join(dirname(fileURLToPath(import.meta.url)), '../../../bench/egress/client.mjs');

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** One way to the upstream: a URL, the variables that pick the path, the header the client sends. */
interface Path {
  readonly name: string;
  readonly origin: string;
  readonly envs: Readonly<Record<string, string>>;
  readonly authorization?: string;
}

async function client(sbx: Sandbox, path: Path, args: readonly string[]): Promise<unknown> {
  const auth = path.authorization === undefined ? '' : ` '${path.authorization}'`;
  const result = await sbx.commands.run(
    `node /tmp/client.mjs ${args.map((arg) => `'${arg}'`).join(' ')}${auth}`,
    {
      envs: path.envs,
      timeoutMs: (SSE_SECONDS + 120) * 1000,
    },
  );
  if (result.exitCode !== 0) throw new Error(`${path.name}: ${result.stderr.slice(0, 500)}`);
  return JSON.parse(result.stdout) as unknown;
}

async function main(): Promise<void> {
  const world = await startBrokerWorld(0);
  const dir = mkdtempSync(join(tmpdir(), 'sdk-bench-egress-'));
  const cp = await startControlPlane({ dnsServers: [world.network.nsAddress], gatewayCa: world.pki.caPem });
  try {
    const store = new SecretStore({ file: join(dir, 'secrets.json') });
    await store.create('api-authorization', world.apiAuthorization);
    const secretCache = new SecretCache({ store });
    const sbx = await cp.createSandbox({
      template: 'sdk-base',
      allowInternetAccess: true,
      secretCache,
      memoryMb: 1024,
      credentials: [{ host: API_HOST, headers: { authorization: 'api-authorization' } }],
      gateways: {
        api: new SecretGateway({
          upstream: `https://${API_HOST}`,
          headers: { authorization: 'api-authorization' },
          allow: [['GET', '/*']],
          ratePerMinute: 6000, // the most SPEC allows: the latency run stays under it
        }),
      },
    });
    try {
      await sbx.files.write('/tmp/client.mjs', readFileSync(CLIENT, 'utf8'));
      await sbx.files.write('/tmp/test-ca.pem', world.pki.caPem);
      const route = sbx.gateways.get('api');
      if (route === undefined) throw new Error('no gateway route');
      const paths: Path[] = [
        {
          name: 'direct',
          origin: `https://${API_HOST}`,
          envs: { NO_PROXY: '*', no_proxy: '*', NODE_EXTRA_CA_CERTS: '/tmp/test-ca.pem' },
          authorization: world.apiAuthorization,
        },
        { name: 'gateway route', origin: route.url, envs: {} },
        { name: 'broker', origin: `https://${API_HOST}`, envs: {} },
      ];
      const latency = new Map<string, number[]>();
      const rate = new Map<string, number>();
      for (const path of paths) {
        const { samples } = (await client(sbx, path, [
          'latency',
          String(REQUESTS),
          String(SPACING_MS),
          `${path.origin}/whoami`,
        ])) as {
          samples: number[];
        };
        latency.set(path.name, samples);
        const { bytes, seconds } = (await client(sbx, path, [
          'throughput',
          String(SECONDS),
          String(CONCURRENCY),
          `${path.origin}/bytes?n=${String(RESPONSE_BYTES)}`,
        ])) as { bytes: number; seconds: number };
        rate.set(path.name, bytes / 2 ** 20 / seconds);
      }
      const p50 = (name: string): number => percentile(latency.get(name) ?? [], 0.5);
      const p99 = (name: string): number => percentile(latency.get(name) ?? [], 0.99);
      console.log(
        `GET /whoami, ${String(REQUESTS)} one at a time every ${String(SPACING_MS)} ms; 4 MiB responses at concurrency ${String(CONCURRENCY)} for ${String(SECONDS)} s`,
      );
      for (const path of paths) {
        console.log(
          `  ${path.name.padEnd(14)} p50 ${ms(p50(path.name)).padStart(9)}  p99 ${ms(p99(path.name)).padStart(9)}  ${(rate.get(path.name) ?? 0).toFixed(0).padStart(6)} MiB/s`,
        );
      }
      const brokerAdded = p50('broker') - p50('direct');
      const routeAdded = p50('gateway route') - p50('direct');
      const latencyRatio = brokerAdded / routeAdded;
      const rateRatio = (rate.get('broker') ?? 0) / (rate.get('gateway route') ?? 1);
      console.log(
        `  added p50: broker ${ms(brokerAdded)}, route ${ms(routeAdded)}: ${latencyRatio.toFixed(2)}× (target ≤ 2×) ${verdict(latencyRatio <= 2)}`,
      );
      console.log(
        `  throughput: broker ${rateRatio.toFixed(2)}× the route's (target ≥ 0.5×) ${verdict(rateRatio >= 0.5)}`,
      );

      const events = Math.round((SSE_SECONDS * 1000) / SSE_EVERY_MS);
      const ticks = `/ticks?n=${String(events)}&ms=${String(SSE_EVERY_MS)}`;
      const [viaBroker, direct, viaRoute, control] = (await Promise.all([
        client(sbx, paths[2] as Path, ['sse', `https://${API_HOST}${ticks}`]),
        client(sbx, paths[0] as Path, ['sse', `https://${API_HOST}${ticks}`]),
        client(sbx, paths[1] as Path, ['sse', `${route.url}${ticks}`]),
        client(sbx, paths[0] as Path, ['sse', `https://${API_HOST}${ticks}`]),
      ])) as { firstByteMs: number; lateness: number[] }[];
      if (
        viaBroker === undefined ||
        direct === undefined ||
        viaRoute === undefined ||
        control === undefined
      ) {
        throw new Error('no stream');
      }
      console.log(
        `server-sent events: ${String(events)} over ${String(SSE_SECONDS)} s, one every ${String(SSE_EVERY_MS)} ms`,
      );
      for (const [name, stream] of [
        ['direct', direct],
        ['gateway route', viaRoute],
        ['broker', viaBroker],
        ['direct again', control],
      ] as const) {
        console.log(
          `  ${name.padEnd(14)} first byte ${ms(stream.firstByteMs).padStart(9)}  events ${String(stream.lateness.length)}  lateness p50 ${ms(median(stream.lateness))}  p99 ${ms(percentile(stream.lateness, 0.99))}  max ${ms(Math.max(...stream.lateness))}`,
        );
      }
      const complete = [viaBroker, direct, control].every((stream) => stream.lateness.length === events);
      // Event i of every stream left the server on the same tick and crossed the same network: what one
      // spent more than the same event direct is its path's (and its own process's scheduling, which the
      // second direct stream measures).
      const extraOver = (stream: { lateness: number[] }): number[] =>
        stream.lateness.map((late, i) => late - (direct.lateness[i] ?? NaN));
      const extra = extraOver(viaBroker);
      const noise = extraOver(control);
      for (const [name, values] of [
        ['broker', extra],
        ['direct again', noise],
      ] as const) {
        console.log(
          `  each event ${name} − the same event direct: p50 ${ms(median(values))}  p99 ${ms(percentile(values, 0.99))}  max ${ms(Math.max(...values))}`,
        );
      }
      const worst = Math.max(...extra);
      const allowed = Math.max(...noise) + brokerAdded;
      console.log(
        `  latest event through the broker: ${ms(worst)} after direct vs ${ms(allowed)} (two direct streams' worst + added p50) ${verdict(complete && worst <= allowed)}`,
      );
    } finally {
      await sbx.kill();
    }
  } finally {
    await cp.stop();
    world.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
