import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SandboxError } from '../../../rules/errors.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';
import { MemoryDriver } from '../../support/memory-driver.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let worlds: MemoryPlaneWorld[] = [];
let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
  worlds = [world];
});
afterEach(async () => {
  for (const w of worlds) await w.dispose();
});

describe('recovery after a restart on the same state folder', () => {
  it('adopts created sandboxes, destroys a launch cut short, ends vanished ones, destroys ended ones left behind and freezes suspended ones again', async () => {
    const first = await world.start();
    const running = await first.create(closedEgress);
    const paused = await first.create(closedEgress);
    await first.pause(paused.sandboxId, paused.accessToken);
    const vanished = await first.create(closedEgress);
    const died = await first.create(closedEgress);
    // A crash between journaling the end and destroying: the destroy fails, the resources stay.
    const endedLeft = await first.create(closedEgress);
    world.driver.failNext('destroy', endedLeft.sandboxId);
    await expect(first.kill(endedLeft.sandboxId, endedLeft.accessToken)).rejects.toThrow(
      'injected destroy failure',
    );
    expect(first.get(endedLeft.sandboxId).state).toBe('ended');
    expect(world.driver.sandbox(endedLeft.sandboxId)).toBeDefined();
    // A launch the crash cuts short: journaled as launching, resources made, sandboxd not answering yet.
    const release = world.driver.holdLaunches();
    const cutShort = first.create(closedEgress);
    await vi.waitFor(() => expect(world.driver.idsCalled('launch')).toHaveLength(6));
    const cutId = world.driver.idsCalled('launch')[5] ?? '';
    expect(world.driver.sandbox(cutId)?.ready).toBe(false);

    const crashed = world.driver;
    await world.crash(first);
    // While no control plane runs: resources vanish, a sandboxd dies unseen, the boxes' freezing drifts.
    crashed.vanish(vanished.sandboxId);
    crashed.exit(died.sandboxId);
    const drift = (id: string, frozen: boolean): void => {
      const sandbox = crashed.sandbox(id);
      if (sandbox !== undefined) sandbox.frozen = frozen;
    };
    drift(running.sandboxId, true);
    drift(paused.sandboxId, false);

    const second = await world.start();
    release();
    await expect(cutShort).rejects.toBeInstanceOf(SandboxError);

    expect(second.get(running.sandboxId)).toMatchObject({ state: 'running', endReason: null });
    expect(world.driver.sandbox(running.sandboxId)?.frozen).toBe(false);
    expect(world.driver.watching(running.sandboxId)).toBe(true);
    expect(second.get(paused.sandboxId)).toMatchObject({ state: 'suspended', suspendReason: 'paused' });
    expect(world.driver.sandbox(paused.sandboxId)?.frozen).toBe(true);
    expect(world.driver.watching(paused.sandboxId)).toBe(true);
    expect(second.get(vanished.sandboxId)).toMatchObject({ state: 'ended', endReason: 'killed' });
    expect(second.get(endedLeft.sandboxId)).toMatchObject({ state: 'ended', endReason: 'killed' });
    expect(world.driver.sandbox(endedLeft.sandboxId)).toBeUndefined();
    // The adopted sandbox whose sandboxd died meanwhile is reported by the watch at once and fails.
    await vi.waitFor(() =>
      expect(second.get(died.sandboxId)).toMatchObject({ state: 'ended', endReason: 'failed' }),
    );
    expect(world.driver.sandbox(died.sandboxId)).toBeUndefined();
    // The launch cut short was never created: its resources are gone and nobody knows its id.
    expect(world.driver.sandbox(cutId)).toBeUndefined();
    expect(() => second.get(cutId)).toThrow(expect.objectContaining({ code: 'sandbox_not_found' }));
    expect(
      world
        .journal()
        .filter((r) => r.id === cutId)
        .map((r) => r.kind),
    ).toEqual(['launching']);
    expect(world.driver.host.ids()).toEqual([running.sandboxId, paused.sandboxId].sort());

    // The adopted sandboxes answer their tokens as before.
    await second.pause(running.sandboxId, running.accessToken);
    expect(world.driver.sandbox(running.sandboxId)?.frozen).toBe(true);
    await second.connect(paused.sandboxId, paused.accessToken);
    expect(world.driver.sandbox(paused.sandboxId)?.frozen).toBe(false);
  });

  it('replays to the same state on any clock: time lives in the journal', async () => {
    const first = await world.start();
    const sbx = await first.create({ ...closedEgress, idlePolicy: { maxIdleSeconds: 60 } });
    world.now += 60_000;
    await first.tick();
    expect(first.get(sbx.sandboxId)).toMatchObject({ state: 'suspended', suspendReason: 'idle' });
    const { deadlineAt } = first.get(sbx.sandboxId);

    world.now = 0;
    const second = await world.restart(first);
    expect(second.get(sbx.sandboxId)).toMatchObject({
      state: 'suspended',
      suspendReason: 'idle',
      deadlineAt,
    });
  });

  it('a stop during a launch leaves the sandbox to the next start, which destroys it', async () => {
    const first = await world.start();
    const release = world.driver.holdLaunches();
    const creating = first.create(closedEgress);
    await vi.waitFor(() => expect(world.driver.idsCalled('launch')).toHaveLength(1));
    const id = world.driver.idsCalled('launch')[0] ?? '';
    const crashed = world.driver;
    await world.crash(first);
    release(); // sandboxd answers after the stop: the launch has nobody to hand it to
    await expect(creating).rejects.toBeInstanceOf(SandboxError);
    expect(crashed.sandbox(id)?.ready).toBe(true);
    expect(world.journal().map((r) => r.kind)).toEqual(['launching']);

    const second = await world.start();
    await expect(world.driver.list()).resolves.toEqual([]);
    expect(second.list()).toEqual([]);
  });
});

describe('reconciliation', () => {
  it('never touches sandboxes the driver does not list: another instance on the same host keeps its own', async () => {
    // Another driver instance on this host (another state folder, or a test suite) with its own sandboxes.
    const other = new MemoryDriver({ host: world.driver.host });
    const launch = (id: string) =>
      other.launch({
        id,
        isolation: 'namespace',
        template: 'sdk-base',
        allowInternetAccess: true,
        memoryBytes: 2 ** 29,
        maxPids: 64,
        cpus: 1,
        accessToken: 't',
      });
    await launch('f00000000001');
    await launch('f00000000002');
    await launch('f00000000003');
    await other.pause('f00000000002');
    world.driver.host.exit('f00000000003'); // dead but not yet destroyed by its owner
    const foreign = ['f00000000001', 'f00000000002', 'f00000000003'];
    const snapshot = () => foreign.map((id) => ({ ...world.driver.host.sandbox(id) }));
    const before = snapshot();

    const first = await world.start();
    const kept = await first.create(closedEgress);
    const gone = await first.create(closedEgress);
    const crashed = world.driver;
    await world.crash(first);
    crashed.vanish(gone.sandboxId);
    const listedBefore = await crashed.list();
    const second = await world.start();

    // A second control plane on its own folder starting on the same host also leaves everyone else's alone.
    const neighbour = new MemoryPlaneWorld({ host: world.driver.host });
    worlds.push(neighbour);
    const third = await neighbour.start();
    expect(third.list()).toEqual([]);

    const journaled = [kept.sandboxId, gone.sandboxId];
    for (const operation of ['pause', 'resume', 'watch'] as const) {
      for (const id of world.driver.idsCalled(operation)) expect(listedBefore).toContain(id);
    }
    for (const id of world.driver.idsCalled('destroy')) expect([...listedBefore, ...journaled]).toContain(id);
    for (const driver of [world.driver, neighbour.driver]) {
      for (const call of driver.calls) expect(foreign).not.toContain(call.id);
    }
    expect(world.driver.host.trespasses).toEqual([]);
    expect(snapshot()).toEqual(before);
    expect(second.get(kept.sandboxId).state).toBe('running');
    expect(second.get(gone.sandboxId)).toMatchObject({ state: 'ended', endReason: 'killed' });
    expect(world.driver.host.ids()).toEqual([kept.sandboxId, ...foreign].sort());
  });
});
