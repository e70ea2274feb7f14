import { firstValueFrom, take, toArray } from 'rxjs';
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

describe('event stream cursors', () => {
  it('resume after a cursor within a process, and after a restart give the current state, never nothing', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    const [created, paused] = await firstValueFrom(
      plane.events({ sandboxId: sbx.sandboxId, after: 0 }).pipe(take(2), toArray()),
    );
    expect([created?.state, paused?.state]).toEqual(['running', 'suspended']);
    const resumed = await firstValueFrom(plane.events({ sandboxId: sbx.sandboxId, after: created?.seq }));
    expect(resumed).toEqual(paused);

    // A subscriber that kept its cursor across a restart of the control plane.
    const restarted = await world.restart(plane);
    const next = await firstValueFrom(restarted.events({ sandboxId: sbx.sandboxId, after: paused?.seq }));
    expect(next.state).toBe('suspended');
    expect(next.seq).toBeGreaterThan(paused?.seq ?? 0);
  });
});
