/**
 * `setTimeout` and metadata (issue 28) on the memory driver: the lifetime moves both ways, never past 8 h
 * from creation (refused before anything changes), is journaled (a restart keeps it) and ends the
 * sandbox when due; a suspended sandbox stays suspended. Metadata given at create is in the facts,
 * kept after the end, and `list` filters on it and on the state.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../rules/limits.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(async () => {
  await world.dispose();
});

describe('setTimeout', () => {
  it('extends and shortens the lifetime, journaled, and ends the sandbox when it is due', async () => {
    const first = await world.start();
    const sbx = await first.create({ ...closedEgress, timeoutMs: 60_000 });
    expect(first.get(sbx.sandboxId)).toMatchObject({ startedAt: world.now, deadlineAt: world.now + 60_000 });
    world.now += 10_000;
    expect(await first.setTimeout(sbx.sandboxId, { timeoutMs: 3_600_000 }, sbx.accessToken)).toMatchObject({
      deadlineAt: world.now + 3_600_000,
    });
    const second = await world.restart(first);
    expect(second.get(sbx.sandboxId).deadlineAt).toBe(world.now + 3_600_000);
    await second.setTimeout(sbx.sandboxId, { timeoutMs: 5_000 }, sbx.accessToken);
    world.now += 5_000;
    await second.tick();
    expect(second.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
  });

  it('refuses a lifetime past 8 h from creation by name, before anything changes', async () => {
    const plane = await world.start();
    const sbx = await plane.create({ ...closedEgress, timeoutMs: 2 * 3_600_000 });
    world.now += 3_600_000;
    const before = plane.get(sbx.sandboxId).deadlineAt;
    await expect(
      plane.setTimeout(
        sbx.sandboxId,
        { timeoutMs: LIMITS.sandboxMaxTimeoutMs - 3_600_000 + 1 },
        sbx.accessToken,
      ),
    ).rejects.toMatchObject({ name: 'InvalidArgumentError', context: { field: 'timeoutMs' } });
    expect(plane.get(sbx.sandboxId).deadlineAt).toBe(before);
    await plane.setTimeout(
      sbx.sandboxId,
      { timeoutMs: LIMITS.sandboxMaxTimeoutMs - 3_600_000 },
      sbx.accessToken,
    );
    for (const timeoutMs of [0, -1, 1.5, '60000']) {
      await expect(plane.setTimeout(sbx.sandboxId, { timeoutMs }, sbx.accessToken)).rejects.toMatchObject({
        name: 'InvalidArgumentError',
      });
    }
    await expect(plane.setTimeout(sbx.sandboxId, { timeoutMs: 1000 }, 'wrong')).rejects.toMatchObject({
      name: 'AuthenticationError',
    });
  });

  it('leaves a suspended sandbox suspended', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    await plane.setTimeout(sbx.sandboxId, { timeoutMs: 120_000 }, sbx.accessToken);
    expect(plane.get(sbx.sandboxId)).toMatchObject({ state: 'suspended', deadlineAt: world.now + 120_000 });
  });
});

describe('metadata', () => {
  it('is kept in the facts, after the end too, and list filters on it and on the state', async () => {
    const plane = await world.start();
    const ci = await plane.create({ ...closedEgress, metadata: { owner: 'ci', branch: 'main' } });
    const dev = await plane.create({ ...closedEgress, metadata: { owner: 'dev' } });
    const bare = await plane.create(closedEgress);
    expect(plane.get(ci.sandboxId).metadata).toEqual({ owner: 'ci', branch: 'main' });
    expect(plane.get(bare.sandboxId).metadata).toEqual({});
    await plane.kill(dev.sandboxId, dev.accessToken);
    const ids = (filter: Parameters<typeof plane.list>[0]) =>
      plane.list(filter).map((info) => info.sandboxId);
    expect(ids({ metadata: { owner: 'ci' } })).toEqual([ci.sandboxId]);
    expect(ids({ metadata: { owner: 'ci', branch: 'dev' } })).toEqual([]);
    expect(ids({ metadata: { owner: 'dev' } })).toEqual([dev.sandboxId]);
    expect(ids({ states: ['running'] }).sort()).toEqual([ci.sandboxId, bare.sandboxId].sort());
    expect(ids({ states: ['ended'], metadata: { owner: 'dev' } })).toEqual([dev.sandboxId]);
    const restarted = await world.restart(plane);
    expect(restarted.get(dev.sandboxId).metadata).toEqual({ owner: 'dev' });
  });

  it('is refused at create when it is not a small string map', async () => {
    const plane = await world.start();
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${String(i)}`, 'v']));
    for (const metadata of [many, { '': 'v' }, { k: 'a\nb' }, { k: 1 }, ['a']]) {
      await expect(plane.create({ ...closedEgress, metadata } as never)).rejects.toMatchObject({
        name: 'InvalidArgumentError',
      });
    }
    expect(world.driver.idsCalled('launch')).toHaveLength(0);
  });
});
