/**
 * E2B's snapshots through the shim against a real control plane: `createSnapshot`, `Sandbox.create(
 * snapshotId)`, `fork`, `listSnapshots`, `deleteSnapshot`. E2B's snapshot keeps the memory: a namespace
 * sandbox (files only) refuses it and gives its files with `keepMemory: false`; a gVisor sandbox (made
 * through the shim with `SDK_ISOLATION=gvisor`) gives it, and a command running in the background runs
 * on in the copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  NotSupportedError,
  Sandbox,
  type SnapshotInfo,
} from '../../../sdk/compat/e2b/index.js';
import { useShimSandbox } from './shim-world.js';

const { sandbox } = useShimSandbox(() => Sandbox.create({ envs: { GREETING: 'hello from envs' } }));
let sbx: Sandbox;
const taken: string[] = [];

beforeAll(() => {
  sbx = sandbox();
});

afterAll(async () => {
  for (const snapshotId of taken) await Sandbox.deleteSnapshot(snapshotId).catch(() => false);
});

/** Every snapshot the control plane keeps of `sandboxId`. */
async function snapshotsOf(sandboxId: string): Promise<SnapshotInfo[]> {
  const pages = Sandbox.listSnapshots({ sandboxId });
  const all: SnapshotInfo[] = [];
  while (pages.hasNext) all.push(...(await pages.nextItems()));
  return all;
}

/** `endAt` is `lifetimeMs` after a create made between `before` and `after` (ms since the epoch). */
function expectLifetime(endAt: Date, before: number, after: number, lifetimeMs: number): void {
  expect(endAt.getTime()).toBeGreaterThanOrEqual(before + lifetimeMs);
  expect(endAt.getTime()).toBeLessThanOrEqual(after + lifetimeMs);
}

describe('E2B snapshots of a namespace sandbox (its files)', () => {
  it("refuses E2B's snapshot and fork (memory kept), naming keepMemory and gVisor, taking nothing", async () => {
    expect((await sbx.native.getInfo()).isolation).toBe('namespace');
    const error = await sbx.createSnapshot().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotSupportedError);
    expect(error).toMatchObject({ feature: 'createSnapshot({ keepMemory: true })' });
    expect((error as Error).message).toMatch(/SDK_ISOLATION=gvisor.*keepMemory: false/);
    await expect(sbx.fork({ count: 2 })).rejects.toMatchObject({ feature: 'fork({ keepMemory: true })' });
    await expect(Sandbox.fork(sbx.sandboxId)).rejects.toMatchObject({
      feature: 'Sandbox.fork({ keepMemory: true })',
    });
    expect(await snapshotsOf(sbx.sandboxId)).toEqual([]);
  });

  it("createSnapshot({ mode: 'filesystem' }), then Sandbox.create(snapshotId): the files, its own id", async () => {
    await sbx.files.write('notes.txt', 'kept');
    const snapshot = await sbx.createSnapshot({ mode: 'filesystem' }); // as keepMemory: false
    taken.push(snapshot.snapshotId);
    expect(snapshot.snapshotId).toMatch(/^snap_[0-9a-f]{16}$/);
    expect(snapshot.names).toEqual([]);
    await sbx.files.write('notes.txt', 'changed after');

    const before = Date.now();
    const copy = await Sandbox.create(snapshot.snapshotId, { envs: { OWN: 'mine' } });
    const after = Date.now();
    try {
      expect(copy.sandboxId).not.toBe(sbx.sandboxId);
      expect(await copy.files.read('notes.txt')).toBe('kept');
      // E2B's variables name the copy (its template: the snapshot, as E2B's snapshots are templates);
      // create's envs are its own.
      const { stdout } = await copy.commands.run('echo "$E2B_SANDBOX_ID $E2B_TEMPLATE_ID $OWN"');
      expect(stdout).toBe(`${copy.sandboxId} ${snapshot.snapshotId} mine\n`);
      const info = await copy.getInfo();
      expect(info.templateId).toBe('sdk-base');
      // E2B's lifetime from its create on: the deadline the control plane set then, whatever the speed.
      expectLifetime(info.endAt, before, after, 300_000);
    } finally {
      await copy.kill();
    }

    const listed = await snapshotsOf(sbx.sandboxId);
    expect(listed).toEqual([{ snapshotId: snapshot.snapshotId, names: [] }]);
    expect(await Sandbox.deleteSnapshot(snapshot.snapshotId)).toBe(true);
    expect(await Sandbox.deleteSnapshot(snapshot.snapshotId)).toBe(false);
    expect(await snapshotsOf(sbx.sandboxId)).toEqual([]);
    await expect(Sandbox.create(snapshot.snapshotId)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('fork({ count: 2, keepMemory: false }): two sandboxes of their own with the files and envs, no snapshot left', async () => {
    await sbx.files.write('mark.txt', 'forked');
    const before = Date.now();
    const copies = await sbx.fork({ count: 2, keepMemory: false, timeoutMs: 120_000 });
    const after = Date.now();
    expect(copies).toHaveLength(2);
    const sandboxes = copies.filter((c): c is Sandbox => c instanceof Sandbox);
    try {
      expect(sandboxes).toHaveLength(2);
      expect(new Set([sbx, ...sandboxes].map((s) => s.sandboxId)).size).toBe(3);
      for (const copy of sandboxes) {
        expect(await copy.files.read('mark.txt')).toBe('forked');
        const { stdout } = await copy.commands.run('echo "$E2B_SANDBOX_ID $E2B_TEMPLATE_ID $GREETING"');
        expect(stdout).toBe(`${copy.sandboxId} sdk-base hello from envs\n`);
        expectLifetime((await copy.getInfo()).endAt, before, after, 120_000);
      }
    } finally {
      for (const copy of sandboxes) await copy.kill();
    }
    // E2B's fork leaves no snapshot behind.
    expect(await snapshotsOf(sbx.sandboxId)).toEqual([]);
  });
});

describe('E2B snapshots of a gVisor sandbox (SDK_ISOLATION=gvisor: memory and processes)', () => {
  it('createSnapshot() and fork(): a command running in the background runs on in each copy', async () => {
    const saved = process.env.SDK_ISOLATION;
    process.env.SDK_ISOLATION = 'gvisor';
    let original: Sandbox;
    try {
      original = await Sandbox.create();
    } finally {
      if (saved === undefined) Reflect.deleteProperty(process.env, 'SDK_ISOLATION');
      else process.env.SDK_ISOLATION = saved;
    }
    const made: Sandbox[] = [original];
    try {
      expect((await original.native.getInfo()).isolation).toBe('gvisor');
      // Written aside and renamed: a reader never sees the file between its truncation and its write.
      const tick = 'echo $i > /home/user/tick.new; mv /home/user/tick.new /home/user/tick';
      await original.commands.run(`for i in $(seq 1 3000); do ${tick}; sleep 0.1; done`, {
        background: true,
        timeoutMs: 0,
      });
      await expect.poll(() => original.files.exists('tick')).toBe(true);

      const snapshot = await original.createSnapshot();
      taken.push(snapshot.snapshotId);
      const copy = await Sandbox.create(snapshot.snapshotId);
      made.push(copy);
      const [forked] = await original.fork();
      expect(forked).toBeInstanceOf(Sandbox);
      made.push(forked as Sandbox);
      for (const sandboxOf of [copy, forked as Sandbox]) {
        expect((await sandboxOf.getInfo()).templateId).toBe('sdk-base');
        const { stdout } = await sandboxOf.commands.run('cat tick; sleep 1; cat tick; ps -eo args');
        const [before, after] = stdout.split('\n');
        expect(Number(after)).toBeGreaterThan(Number(before)); // still counting
        expect(stdout).toContain('seq 1 3000');
      }
      // The fork's snapshot is gone (its copy ran on above); createSnapshot's is kept.
      expect((await snapshotsOf(original.sandboxId)).map((s) => s.snapshotId)).toEqual([snapshot.snapshotId]);
    } finally {
      for (const s of made) await s.kill().catch(() => false);
    }
  });
});
