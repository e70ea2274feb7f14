/**
 * Issue 10: the journal is compacted once it has grown (snapshots of live actors, facts of ended ones,
 * launches in flight), and a control plane restarted on a compacted journal is where the old one was.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(async () => {
  await world.dispose();
});

describe('journal compaction', () => {
  it('rewrites a grown journal as one record per sandbox, and a restart on it continues where it was', async () => {
    const plane = await world.start({ compactAfter: 20 });
    const live = await plane.create(closedEgress);
    const paused = await plane.create(closedEgress);
    const killed = await plane.create(closedEgress);
    for (let i = 0; i < 6; i++) {
      world.now += 1_000;
      await plane.pause(live.sandboxId, live.accessToken);
      await plane.connect(live.sandboxId, live.accessToken);
    }
    await plane.pause(paused.sandboxId, paused.accessToken);
    await plane.kill(killed.sandboxId, killed.accessToken);
    const before = world.journal().length;
    expect(before).toBeGreaterThan(20);
    // The facts but the event feed's position (a process's own count).
    const facts = (info: { seq: number }) => ({ ...info, seq: undefined });
    const states = [live, paused, killed].map((s) => facts(plane.get(s.sandboxId)));

    await plane.tick(); // the timer's turn: compaction is due
    expect(world.journal().map((r) => [r.kind, r.id])).toEqual([
      ['ended', killed.sandboxId],
      ['snapshot', live.sandboxId],
      ['snapshot', paused.sandboxId],
    ]);

    const restarted = await world.restart(plane);
    expect([live, paused, killed].map((s) => facts(restarted.get(s.sandboxId)))).toEqual(states);
    // The actors go on from their snapshots: tokens, deadlines and effects as before.
    await restarted.connect(paused.sandboxId, paused.accessToken);
    expect(restarted.get(paused.sandboxId).state).toBe('running');
    expect(world.driver.sandbox(paused.sandboxId)?.frozen).toBe(false);
    await expect(restarted.pause(killed.sandboxId, killed.accessToken)).rejects.toMatchObject({
      code: 'sandbox_ended',
    });
    world.now += 3_600_000;
    await restarted.tick();
    expect(restarted.get(live.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
  });
});
