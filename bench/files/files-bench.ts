/**
 * `npm run bench:files` (root): the cost of `sbx.files` calls in one sandbox (embedded control plane,
 * namespace driver), each beside a command round trip (`commands.run('true')`), which spawns a process
 * as the user just as every files call spawns its helper. Over BENCH_CALLS calls (default 50): getInfo,
 * exists, a 1 KiB write and read (with their p50 as a ratio to the command's, issue 30's target ≤ 2×),
 * a list, a watch set up and stopped; then 256 MiB written and read back streamed (MiB/s). Prints
 * medians and p95s.
 */
import { Readable } from 'node:stream';
import { Sandbox } from '../../sdk/sandbox.js';
import { startControlPlane } from '../../test/integration/support/control-plane.js';
import { ms } from '../support/report.js';

const CALLS = Number(process.env.BENCH_CALLS ?? '50');
const HOME = '/home/user';

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** The anchor's p50 (a command round trip), once measured: the small-file targets are ratios to it. */
let anchorP50: number | undefined;

/**
 * Times `call` CALLS times and prints its p50 and p95; with `target`, its p50 as a ratio to the anchor
 * and whether it meets the target (issue 30: a 1 KiB read or write at most 2× a command round trip).
 */
async function timedCalls(label: string, call: () => Promise<unknown>, target?: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await call();
    samples.push(performance.now() - started);
  }
  const p50 = percentile(samples, 0.5);
  const ratio =
    target === undefined || anchorP50 === undefined
      ? ''
      : `   ${(p50 / anchorP50).toFixed(2)}x the command round trip; target <= ${String(target)}x ${p50 / anchorP50 <= target ? 'PASS' : 'MISS'}`;
  console.log(
    `${label.padEnd(28)} p50 ${ms(p50).padStart(9)}   p95 ${ms(percentile(samples, 0.95)).padStart(9)}${ratio}`,
  );
  return p50;
}

async function throughput(sbx: Sandbox, bytes: number): Promise<void> {
  const chunk = Buffer.alloc(2 ** 20, 7);
  const source = Readable.from(
    (function* () {
      for (let i = 0; i < bytes / chunk.length; i++) yield chunk;
    })(),
  );
  let started = performance.now();
  await sbx.files.write(`${HOME}/big.bin`, source);
  const write = performance.now() - started;
  started = performance.now();
  let read = 0;
  for await (const part of await sbx.files.read(`${HOME}/big.bin`, { format: 'stream' })) {
    read += (part as Buffer).length;
  }
  const readMs = performance.now() - started;
  const rate = (ms: number): string => `${(bytes / 2 ** 20 / (ms / 1000)).toFixed(0)} MiB/s`;
  console.log(
    `${String(bytes / 2 ** 20)} MiB write ${rate(write)}, read ${rate(readMs)} (${String(read)} bytes)`,
  );
}

async function main(): Promise<void> {
  const cp = await startControlPlane();
  try {
    const sbx = await cp.createSandbox({ memoryMb: 1024 });
    try {
      await sbx.files.write(`${HOME}/small.txt`, 'x'.repeat(1024));
      anchorP50 = await timedCalls('commands.run("true")', () => sbx.commands.run('true'));
      await timedCalls('files.getInfo', () => sbx.files.getInfo(`${HOME}/small.txt`));
      await timedCalls('files.exists (absent)', () => sbx.files.exists(`${HOME}/absent`));
      await timedCalls('files.write 1 KiB', () => sbx.files.write(`${HOME}/small.txt`, 'y'.repeat(1024)), 2);
      await timedCalls('files.read 1 KiB', () => sbx.files.read(`${HOME}/small.txt`), 2);
      await timedCalls('files.list', () => sbx.files.list(HOME));
      await timedCalls('files.watchDir + stop', async () => {
        const watch = await sbx.files.watchDir(HOME, () => undefined);
        await watch.stop();
      });
      await throughput(sbx, 256 * 2 ** 20);
    } finally {
      await sbx.kill();
    }
  } finally {
    await cp.stop();
  }
}

await main();
