/**
 * `npm run bench:sandbox` (root): sandboxes through the SDK and the embedded control plane, both
 * isolations side by side in one run (machines of this kind differ 3× in speed: each gVisor figure is
 * read as a ratio to the namespace driver's of the same run). Per isolation, over BENCH_SANDBOXES
 * sandboxes (default 20): create → first command exit (cold, and from the warm pool), pause and resume
 * through the SDK, command round trip, the memory of an idle sandbox (its cgroup's usage), a snapshot of
 * an idle sandbox, a sandbox started from it → first command, and a fork of 10. Prints each figure and
 * the targets as ratios.
 */
import { freemem } from 'node:os';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlPlane } from '../../control-plane/control-plane.js';
import { createControlPlaneServer } from '../../control-plane/http-api.js';
import { loadOrCreateOperatorKey } from '../../control-plane/operator-key.js';
import type { Isolation } from '../../protocol/control-plane-api.js';
import { ensureHostPackages } from '../../sandbox-drivers/namespace/host-requirements.js';
import { NamespaceDriver } from '../../sandbox-drivers/namespace/namespace-driver.js';
import { cgroupPaths } from '../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { Sandbox } from '../../sdk/sandbox.js';

const COUNT = Number(process.env.BENCH_SANDBOXES ?? '20');
const FORK = 10;

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(0.5 * sorted.length)] ?? NaN;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** One isolation's figures, p50 in ms (memory in MiB). */
interface Figures {
  cold: number;
  pooled: number;
  pause: number;
  resume: number;
  roundTrip: number;
  memoryMb: number;
  snapshot: number;
  restore: number;
  fork: number;
}

/** A control plane on `stateDir` serving on loopback, its default isolation `isolation`. */
async function servedPlane(
  stateDir: string,
  driver: NamespaceDriver,
  operatorKey: string,
  isolation: Isolation,
  warmPool = 0,
): Promise<{ url: string; plane: ControlPlane; close: () => Promise<void> }> {
  const plane = await ControlPlane.start({
    stateDir,
    driver,
    operatorKey,
    warmPool,
    defaultIsolation: isolation,
  });
  const server = createControlPlaneServer(plane);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${String((server.address() as { port: number }).port)}`;
  return {
    url,
    plane,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await plane.close();
    },
  };
}

async function measure(
  isolation: Isolation,
  driver: NamespaceDriver,
  stateDir: string,
  operatorKey: string,
): Promise<Figures> {
  const options = { template: 'sdk-base-caps', allowInternetAccess: false } as const;
  let served = await servedPlane(stateDir, driver, operatorKey, isolation);
  const sandboxes: Sandbox[] = [];
  try {
    const cold: number[] = [];
    for (let i = 0; i < COUNT; i++) {
      cold.push(
        await timed(async () => {
          const sbx = await Sandbox.create({ ...options, isolation, controlPlaneUrl: served.url });
          await sbx.commands.run('true');
          sandboxes.push(sbx);
        }),
      );
    }
    // A second control plane with a warm pool adopts them (as after a restart) and serves warm creates.
    await served.close();
    served = await servedPlane(stateDir, driver, operatorKey, isolation, 2);
    const url = served.url;
    const adopted = await Promise.all(
      sandboxes.map((sbx) =>
        Sandbox.connect(sbx.sandboxId, { accessToken: sbx.accessToken, controlPlaneUrl: url }),
      ),
    );
    sandboxes.splice(0, sandboxes.length, ...adopted);
    const pooled: number[] = [];
    for (let i = 0; i < COUNT; i++) {
      while (served.plane.warmReady < 4) await new Promise((resolve) => setTimeout(resolve, 10));
      const started = performance.now();
      const sbx = await Sandbox.create({ ...options, isolation, controlPlaneUrl: url });
      await sbx.commands.run('true');
      pooled.push(performance.now() - started);
      await sbx.kill();
    }
    const [probe] = sandboxes;
    if (probe === undefined) throw new Error('no sandbox');
    const roundTrip: number[] = [];
    for (let i = 0; i < 100; i++) roundTrip.push(await timed(() => probe.commands.run('true')));
    const pause: number[] = [];
    const resume: number[] = [];
    for (const sbx of sandboxes) {
      pause.push(await timed(() => sbx.pause()));
      resume.push(await timed(() => sbx.connect()));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)); // every sandboxd settles idle
    const memory = sandboxes.map(
      (sbx) =>
        Number(
          readFileSync(
            join(cgroupPaths(driver.instance, sbx.sandboxId).memory, 'memory.usage_in_bytes'),
            'utf8',
          ),
        ) /
        2 ** 20,
    );
    // Snapshots of idle sandboxes, a sandbox started from each, then one fork of FORK.
    const snapshot: number[] = [];
    const restore: number[] = [];
    for (const sbx of sandboxes.slice(0, Math.min(COUNT, 10))) {
      let taken: Awaited<ReturnType<Sandbox['snapshot']>> | undefined;
      snapshot.push(await timed(async () => (taken = await sbx.snapshot())));
      if (taken === undefined) throw new Error('no snapshot');
      const from = taken;
      restore.push(
        await timed(async () => {
          const copy = await Sandbox.create({ snapshot: from, controlPlaneUrl: url });
          await copy.commands.run('true');
          sandboxes.push(copy);
        }),
      );
    }
    const fork = await timed(async () => sandboxes.push(...(await probe.fork({ count: FORK }))));
    return {
      cold: p50(cold),
      pooled: p50(pooled),
      pause: p50(pause),
      resume: p50(resume),
      roundTrip: p50(roundTrip),
      memoryMb: memory.reduce((a, b) => a + b, 0) / memory.length,
      snapshot: p50(snapshot),
      restore: p50(restore),
      fork,
    };
  } finally {
    for (const sbx of sandboxes) await sbx.kill().catch(() => undefined);
    await served.close();
  }
}

async function main(): Promise<void> {
  ensureHostPackages();
  const stateDir = mkdtempSync(join(tmpdir(), 'sdk-bench-sbx-'));
  const driver = new NamespaceDriver({ stateDir, isolations: ['namespace', 'gvisor'] });
  await driver.prepareGvisor();
  // The SDK presents the operator key from SDK_API_KEY, as a caller's process does.
  const operatorKey = loadOrCreateOperatorKey(stateDir).key;
  process.env.SDK_API_KEY = operatorKey;
  try {
    const ns = await measure('namespace', driver, stateDir, operatorKey);
    const gv = await measure('gvisor', driver, stateDir, operatorKey);
    const row = (label: string, a: number, b: number, unit = 'ms'): string =>
      `${label.padEnd(38)} ${a.toFixed(1).padStart(9)} ${unit}  ${b.toFixed(1).padStart(9)} ${unit}`;
    console.log(
      `sandbox benchmark: ${String(COUNT)} sandboxes per isolation, Node ${process.version}, p50\n`,
    );
    console.log(`${''.padEnd(38)} ${'namespace'.padStart(12)}  ${'gvisor'.padStart(12)}`);
    console.log(row('create -> first command, cold', ns.cold, gv.cold));
    console.log(row('create -> first command, warm pool', ns.pooled, gv.pooled));
    console.log(row('command round trip (true)', ns.roundTrip, gv.roundTrip));
    console.log(row('pause (SDK)', ns.pause, gv.pause));
    console.log(row('resume (SDK connect)', ns.resume, gv.resume));
    console.log(row('idle sandbox memory (cgroup usage)', ns.memoryMb, gv.memoryMb, 'MiB'));
    console.log(row('snapshot of an idle sandbox', ns.snapshot, gv.snapshot));
    console.log(row('start from a snapshot -> first command', ns.restore, gv.restore));
    console.log(row(`fork of ${String(FORK)}`, ns.fork, gv.fork));
    const target = (label: string, ratio: number, limit: number): string =>
      `${label.padEnd(60)} ${ratio.toFixed(2)} (target <= ${limit.toFixed(2)}: ${ratio <= limit ? 'met' : 'MISSED'})`;
    console.log('\ntargets (issue 26), as ratios within this run:');
    console.log(target('gvisor cold / namespace cold', gv.cold / ns.cold, 2));
    console.log(target('gvisor pooled / namespace pooled', gv.pooled / ns.pooled, 1.1));
    console.log(target('gvisor round trip / namespace round trip', gv.roundTrip / ns.roundTrip, 2));
    console.log(target('gvisor start from snapshot / gvisor cold', gv.restore / gv.cold, 0.75));
    console.log(target('gvisor snapshot / (gvisor pause + resume)', gv.snapshot / (gv.pause + gv.resume), 2));
    console.log(
      target(`gvisor fork of ${String(FORK)} / one gvisor start from snapshot`, gv.fork / gv.restore, 10),
    );
    const fit = Math.floor(freemem() / 2 ** 20 / gv.memoryMb);
    console.log(
      `\nwith ${(freemem() / 2 ** 30).toFixed(1)} GiB free, about ${String(fit)} more idle gVisor sandboxes fit`,
    );
  } finally {
    for (const id of await driver.list()) await driver.destroy(id);
    rmSync(stateDir, { recursive: true, force: true });
  }
}

await main();
