import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(() => world.dispose());

describe('the warm pool', () => {
  it('hands over a launched sandbox at create and refills, and a restart destroys the ones never handed over', async () => {
    const plane = await world.start({ warmPool: 1 });
    await vi.waitFor(() => expect(plane.warmReady).toBe(2)); // one per base template
    const pooled = await world.driver.list();
    expect(pooled.map((id) => world.driver.sandbox(id)?.request.template).sort()).toEqual([
      'sdk-base',
      'sdk-base-caps',
    ]);

    const sbx = await plane.create(closedEgress);
    expect(pooled).toContain(sbx.sandboxId);
    expect(world.driver.sandbox(sbx.sandboxId)?.request).toMatchObject({
      template: 'sdk-base-caps',
      allowInternetAccess: false,
      memoryBytes: 512 * 2 ** 20,
    });
    await vi.waitFor(() => expect(plane.warmReady).toBe(2)); // refilled
    expect(world.driver.idsCalled('launch')).toHaveLength(3);

    // A create the pool does not serve launches its own sandbox.
    const big = await plane.create({ ...closedEgress, memoryMb: 1024 });
    expect(pooled).not.toContain(big.sandboxId);
    expect(world.driver.sandbox(big.sandboxId)?.request.memoryBytes).toBe(1024 * 2 ** 20);

    const restarted = await world.restart(plane);
    expect(await world.driver.list()).toEqual([sbx.sandboxId, big.sandboxId].sort());
    expect(restarted.get(sbx.sandboxId).state).toBe('running');
    expect(restarted.warmReady).toBe(0);
    expect(
      restarted
        .list()
        .map((info) => info.sandboxId)
        .sort(),
    ).toEqual([sbx.sandboxId, big.sandboxId].sort());
  });

  it('drops and destroys a pooled sandbox whose sandboxd dies before it is handed over', async () => {
    const plane = await world.start({ warmPool: 1 });
    await vi.waitFor(() => expect(plane.warmReady).toBe(2));
    const [dying] = await world.driver.list();
    world.driver.exit(dying ?? '');
    expect(plane.warmReady).toBe(1);
    await vi.waitFor(() => expect(world.driver.sandbox(dying ?? '')).toBeUndefined());
    // Journaled as a failed launch, so no compaction carries it and no restart looks for it.
    await vi.waitFor(() =>
      expect(
        world
          .journal()
          .filter((r) => r.id === dying)
          .map((r) => r.kind),
      ).toEqual(['launching', 'launch_failed']),
    );
    // The next create of that kind is served by the sandbox left, or launched: never by the dead one.
    const sbx = await plane.create(closedEgress);
    expect(sbx.sandboxId).not.toBe(dying);
    expect(world.driver.sandbox(sbx.sandboxId)?.daemonAlive).toBe(true);
  });

  it('keeps no failed warm launch and retries at the next take', async () => {
    world.driver.failNext('launch');
    const plane = await world.start({ warmPool: 1 });
    await vi.waitFor(() => expect(world.driver.idsCalled('launch')).toHaveLength(2));
    await vi.waitFor(() => expect(plane.warmReady).toBe(1));
    await plane.create({ template: 'sdk-base', allowInternetAccess: true });
    await plane.create(closedEgress);
    await vi.waitFor(() => expect(plane.warmReady).toBe(2));
  });
});
