import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../rules/errors.js';
import { LIMITS } from '../../../rules/limits.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const HOUR = 3_600_000;
const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(() => world.dispose());

describe('idle suspend', () => {
  it('suspends a sandbox idle for maxIdleSeconds (frozen), an SDK call before that pushes it out, and an SDK call resumes it with autoResume', async () => {
    const plane = await world.start();
    const sbx = await plane.create({ ...closedEgress, idlePolicy: { maxIdleSeconds: 60, autoResume: true } });
    const frozen = (): boolean | undefined => world.driver.sandbox(sbx.sandboxId)?.frozen;

    world.now += 59_999;
    await plane.tick();
    expect(plane.get(sbx.sandboxId).state).toBe('running');
    await plane.activity(sbx.sandboxId, sbx.accessToken); // a command, say: activity
    world.now += 59_999;
    await plane.tick();
    expect(plane.get(sbx.sandboxId).state).toBe('running');
    expect(frozen()).toBe(false);
    world.now += 1;
    await plane.tick();
    expect(plane.get(sbx.sandboxId)).toMatchObject({ state: 'suspended', suspendReason: 'idle' });
    expect(frozen()).toBe(true);
  });

  it('auto-resumes on the next SDK call, and without autoResume only connect resumes', async () => {
    const plane = await world.start();
    const auto = await plane.create({
      ...closedEgress,
      idlePolicy: { maxIdleSeconds: 60, autoResume: true },
    });
    const manual = await plane.create({
      ...closedEgress,
      idlePolicy: { maxIdleSeconds: 60, autoResume: false },
    });
    world.now += 60_000;
    await plane.tick();
    for (const sbx of [auto, manual]) expect(world.driver.sandbox(sbx.sandboxId)?.frozen).toBe(true);

    expect(await plane.activity(auto.sandboxId, auto.accessToken)).toMatchObject({
      state: 'running',
      suspendReason: null,
    });
    expect(world.driver.sandbox(auto.sandboxId)?.frozen).toBe(false);

    expect(await plane.activity(manual.sandboxId, manual.accessToken)).toMatchObject({
      state: 'suspended',
      suspendReason: 'idle',
    });
    expect(world.driver.sandbox(manual.sandboxId)?.frozen).toBe(true);
    expect(await plane.connect(manual.sandboxId, manual.accessToken)).toMatchObject({ state: 'running' });
    expect(world.driver.sandbox(manual.sandboxId)?.frozen).toBe(false);
    // The resumed sandbox is idle again from the resume on, not from its creation.
    world.now += 59_999;
    await plane.tick();
    expect(plane.get(manual.sandboxId).state).toBe('running');
  });

  it('does not resume a sandbox for a caller without its token', async () => {
    const plane = await world.start();
    const sbx = await plane.create({ ...closedEgress, idlePolicy: { maxIdleSeconds: 60 } });
    world.now += 60_000;
    await plane.tick();
    // SPEC Authentication 1: connect with a wrong token does not fail, and resumes nothing.
    expect(await plane.connect(sbx.sandboxId, 'not-the-token')).toMatchObject({ state: 'suspended' });
    expect(world.driver.sandbox(sbx.sandboxId)?.frozen).toBe(true);
  });
});

describe('the 8 h cap', () => {
  it('ends a sandbox when running plus suspended time reaches the timeout, and a restart on a clock in the past replays to the same end', async () => {
    const plane = await world.start();
    const start = world.now;
    const sbx = await plane.create({
      ...closedEgress,
      timeoutMs: LIMITS.sandboxMaxTimeoutMs,
      idlePolicy: { maxIdleSeconds: 24 * 3600 },
    });
    expect(sbx.deadlineAt).toBe(start + 8 * HOUR);
    world.now += 3 * HOUR;
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    world.now += 2 * HOUR; // suspended time counts
    await plane.connect(sbx.sandboxId, sbx.accessToken);
    world.now += 3 * HOUR - 1;
    await plane.tick();
    expect(plane.get(sbx.sandboxId).state).toBe('running');
    world.now += 1;
    await plane.tick();
    expect(plane.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
    expect(world.driver.sandbox(sbx.sandboxId)).toBeUndefined();

    world.now = 0;
    const replayed = await world.restart(plane);
    expect(replayed.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
  });

  it('ends a suspended sandbox at the tick of its deadline, and one whose deadline passed between ticks at the next call', async () => {
    const plane = await world.start();
    const ticked = await plane.create({ ...closedEgress, timeoutMs: HOUR });
    const called = await plane.create({ ...closedEgress, timeoutMs: 2 * HOUR });
    await plane.pause(ticked.sandboxId, ticked.accessToken);
    world.now += HOUR;
    await plane.tick();
    expect(plane.get(ticked.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
    expect(plane.get(called.sandboxId).state).toBe('suspended'); // idle for an hour
    world.now += HOUR;
    await expect(plane.activity(called.sandboxId, called.accessToken)).rejects.toMatchObject({
      code: 'sandbox_ended',
    });
    expect(plane.get(called.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
    expect(world.driver.host.ids()).toEqual([]);
  });

  it('refuses a timeout above 8 h before any launch', async () => {
    const plane = await world.start();
    await expect(
      plane.create({ ...closedEgress, timeoutMs: LIMITS.sandboxMaxTimeoutMs + 1 }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(world.driver.idsCalled('launch')).toEqual([]);
  });
});
