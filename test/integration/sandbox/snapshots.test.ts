/**
 * Issue 26: snapshots and fork, through the SDK and a real control plane, for both isolations: a gVisor
 * sandbox's snapshot holds its processes, memory and files; a namespace sandbox's its files. A copy is a
 * sandbox of its own (id, token, network, id range) with no gateways until given; the original goes on
 * with its routes on the same ports; no snapshot holds a gateway's value (searched for in every byte).
 */
import { readdirSync, readFileSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { SecretGateway } from '../../../sdk/secret-gateway.js';
import { SecretCache } from '../../../sdk/secret-store/secret-cache.js';
import { SecretStore } from '../../../sdk/secret-store/secret-store.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { Snapshot } from '../../../sdk/snapshot.js';
import type { Isolation } from '../../../sandbox-drivers/sandbox-driver.js';
import {
  BOX_STUB_OOM_SCORE_ADJ,
  boxPaths,
  readBoxState,
  stubsOf,
} from '../../../sandbox-drivers/gvisor/runsc-box.js';
import { ControlPlane } from '../../../control-plane/control-plane.js';
import {
  startControlPlane,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';
import { oomScoreAdj } from '../support/box-stubs.js';
import { useGatewayWorld } from '../support/gateway-world.js';

const world = useGatewayWorld(7);
const VALUE = 'sk-snapshot-planted-secret-5f1d2c3b4a596877';
let cp: InProcessControlPlane;

/** The `oom_score_adj` of each stub (a host child) of a gVisor sandbox's box kernel. */
async function stubAdjustments(sandboxId: string): Promise<string[]> {
  const kernel = (await readBoxState(boxPaths(cp.driver.instance, sandboxId), sandboxId))?.pid ?? 0;
  return (await stubsOf(kernel)).map(oomScoreAdj);
}
let secretsDir: string;
let cache: SecretCache;

beforeAll(async () => {
  cp = await startControlPlane({ gatewayCa: world.pki.caPem });
  secretsDir = mkdtempSync(join(tmpdir(), 'sdk-secrets-'));
  const store = new SecretStore({ file: join(secretsDir, 'secrets.json') });
  await store.create('llm-key', VALUE);
  cache = new SecretCache({ store });
});

afterAll(async () => {
  await cp.stop();
  rmSync(secretsDir, { recursive: true, force: true });
});

const gateways = () => ({
  llm: new SecretGateway({
    upstream: world.upstream.origin,
    headers: { 'x-api-key': 'llm-key' },
    allow: [['GET', '/*']],
  }),
});

/** Every file of a snapshot's folder, read whole. */
function snapshotBytes(snapshotId: string): Buffer[] {
  const files: Buffer[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.push(readFileSync(path));
    }
  };
  walk(join(cp.stateDir, 'snapshots', snapshotId));
  return files;
}

const fetchThrough = (url: string) =>
  `node -e "fetch('${url}').then((r) => r.text()).then(console.log, (e) => console.log('failed', e.cause?.code ?? e.message))"`;

describe.each<Isolation>(['namespace', 'gvisor'])('%s sandboxes', (isolation) => {
  it('snapshot, then start a sandbox of its own from it: files (and with gVisor processes) kept, no gateway', async () => {
    const original = await cp.createSandbox({ isolation, gateways: gateways(), secretCache: cache });
    const route = original.gateways.get('llm');
    await original.commands.run('echo kept > /home/user/notes; mkdir -p /home/user/work');
    await original.commands.run('echo changed >> /etc/motd', { user: 'root' });
    await original.commands.run(
      // Written aside and renamed: a reader never sees the file between its truncation and its write.
      '(i=0; while true; do i=$((i+1)); echo $i > /home/user/tick.new; mv /home/user/tick.new /home/user/tick; sleep 0.2; done) >/dev/null 2>&1 &',
    );
    const snapshot = await original.snapshot();
    expect(snapshot).toMatchObject({
      sandboxId: original.sandboxId,
      kind: isolation === 'gvisor' ? 'memory' : 'filesystem',
      isolation,
    });
    expect(snapshot.id).toMatch(/^snap_[0-9a-f]{16}$/);
    // No byte of it is the gateway's value, and its folder is host root's alone.
    for (const bytes of snapshotBytes(snapshot.id)) expect(bytes.includes(VALUE)).toBe(false);
    expect(statSync(join(cp.stateDir, 'snapshots', snapshot.id)).mode & 0o077).toBe(0);

    const copy = await Sandbox.create({ snapshot, controlPlaneUrl: cp.url });
    expect(copy.sandboxId).not.toBe(original.sandboxId);
    expect(copy.accessToken).not.toBe(original.accessToken);
    expect(await copy.getInfo()).toMatchObject({ isolation, template: 'sdk-base-caps', state: 'running' });
    const inCopy = await copy.commands.run(
      'cat /home/user/notes; tail -1 /etc/motd; cat /home/user/tick; sleep 1; cat /home/user/tick',
    );
    const [notes, motd, before, after] = inCopy.stdout.trim().split('\n');
    expect([notes, motd]).toEqual(['kept', 'changed']);
    if (isolation === 'gvisor') {
      expect(Number(after)).toBeGreaterThan(Number(before)); // still ticking
      // A restored box's stubs are the OOM killer's first choice too (gvisor-attacks.test.ts).
      expect(new Set(await stubAdjustments(copy.sandboxId))).toEqual(new Set([BOX_STUB_OOM_SCORE_ADJ]));
    } else expect(after).toBe(before); // files only: nothing runs

    // The copy has no gateway; the original's route answers on its port as before.
    expect(copy.gateways.get('llm')).toBeUndefined();
    expect((await copy.commands.run(fetchThrough(route?.url ?? ''))).stdout).toMatch(/^failed/);
    expect((await original.commands.run(fetchThrough(`${route?.url ?? ''}/echo`))).stdout).toContain(VALUE);
    expect(original.gateways.get('llm')?.port).toBe(route?.port);

    // Listed with the control plane's snapshots; deleted, it starts nothing more.
    expect((await Snapshot.list({ controlPlaneUrl: cp.url })).map((s) => s.id)).toContain(snapshot.id);
    await Snapshot.delete(snapshot.id, { controlPlaneUrl: cp.url });
    expect((await Snapshot.list({ controlPlaneUrl: cp.url })).map((s) => s.id)).not.toContain(snapshot.id);
    await expect(Sandbox.create({ snapshot: snapshot.id, controlPlaneUrl: cp.url })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    for (const sbx of [original, copy]) await sbx.kill();
  });

  if (isolation === 'gvisor') {
    it("takes a box with a background command running: the copy runs it on, the original's output goes on", async () => {
      const original = await cp.createSandbox({ isolation });
      const lines: string[] = [];
      const handle = await original.commands.run('for i in $(seq 1 3000); do echo line $i; sleep 0.1; done', {
        background: true,
        onStdout: (data) => lines.push(data),
      });
      await expect.poll(() => lines.length).toBeGreaterThan(2);
      const copy = await Sandbox.create({ snapshot: await original.snapshot(), controlPlaneUrl: cp.url });
      const seen = lines.length;
      await expect.poll(() => lines.length).toBeGreaterThan(seen + 2);
      expect((await copy.commands.run('ps -eo args')).stdout).toContain('seq 1 3000');
      await handle.kill();
      for (const sbx of [copy, original]) await sbx.kill();
    });
  }

  it('forks: count sandboxes at once from one snapshot, each of its own', async () => {
    const original = await cp.createSandbox({ isolation });
    await original.commands.run('echo forked > /home/user/mark');
    const copies = await original.fork({ count: 3 });
    expect(copies).toHaveLength(3);
    expect(new Set([original, ...copies].map((sbx) => sbx.sandboxId)).size).toBe(4);
    for (const copy of copies) {
      expect((await copy.commands.run('cat /home/user/mark')).stdout).toBe('forked\n');
      await copy.kill();
    }
    await original.kill();
  });
});

it('refuses bad snapshot options before any call', async () => {
  const sbx = await cp.createSandbox();
  await expect(sbx.fork({ count: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(sbx.fork({ count: 101 })).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(
    Sandbox.create({ snapshot: 'not-a-snapshot', controlPlaneUrl: cp.url }),
  ).rejects.toBeInstanceOf(InvalidArgumentError);
  await expect(Snapshot.delete('snap_nope')).rejects.toBeInstanceOf(InvalidArgumentError);
  await sbx.kill();
});

it('keeps snapshots across a restart of the control plane', async () => {
  const first = await startControlPlane();
  try {
    const sbx = await first.createSandbox();
    const snapshot = await sbx.snapshot();
    await first.plane.close();
    const again = await ControlPlane.start({
      stateDir: first.stateDir,
      driver: first.driver,
      operatorKey: TEST_OPERATOR_KEY,
    });
    expect(again.snapshots(TEST_OPERATOR_KEY).map((s) => s.snapshotId)).toEqual([snapshot.id]);
    await again.close();
  } finally {
    await first.stop();
  }
});

it("refuses a snapshot past the control plane's cap, keeping nothing of it", async () => {
  const small = await startControlPlane({ snapshotBytes: 1 });
  try {
    const sbx = await small.createSandbox();
    const error = await sbx.snapshot().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).code).toBe('no_space');
    expect(readdirSync(join(small.stateDir, 'snapshots'))).toEqual([]);
    await sbx.kill();
  } finally {
    await small.stop();
  }
});
