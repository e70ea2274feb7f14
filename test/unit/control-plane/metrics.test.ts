/**
 * `sbx.getMetrics()` on the control plane (control-plane/metrics-sampler.ts) with the memory driver and
 * the world's clock: a running sandbox is sampled at once and at every tick, its CPU share measured
 * between two samples against its CPU limit, a suspended one is not sampled, an ended one keeps its
 * samples, a range selects samples, and only the sandbox's token or the operator key reads them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';
import { cpuShare } from '../../../control-plane/metrics-sampler.js';

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(async () => {
  await world.dispose();
});

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

describe('metrics sampling', () => {
  it('samples a running sandbox, with its CPU share against its limit', async () => {
    const plane = await world.start();
    const sbx = await plane.create({ ...closedEgress, cpus: 2, memoryMb: 256 });
    const box = world.driver.sandbox(sbx.sandboxId);
    if (box === undefined) throw new Error('no box');
    await plane.tick(); // the first sample (taken at once) has settled
    box.usage = { cpuUsec: 0, diskUsedBytes: 4096, netRxBytes: 10, netTxBytes: 20 };
    world.now += 5_000;
    await plane.tick();
    // 5 s of 2 CPUs is 10 s of CPU time: 2.5 s of it is a quarter.
    box.usage = { ...box.usage, cpuUsec: 2_500_000, memoryUsedBytes: 64 * 2 ** 20 };
    world.now += 5_000;
    await plane.tick();
    const { metrics } = plane.metrics(sbx.sandboxId, {}, sbx.accessToken);
    const last = metrics.at(-1);
    expect(last).toEqual({
      timestamp: world.now,
      cpuCount: 2,
      cpuUsedPct: 25,
      memUsedBytes: 64 * 2 ** 20,
      memTotalBytes: 256 * 2 ** 20,
      diskUsedBytes: 4096,
      diskTotalBytes: 2 ** 30,
      netRxBytes: 10,
      netTxBytes: 20,
    });
    expect(metrics.map((sample) => sample.timestamp)).toEqual(
      [...metrics.map((sample) => sample.timestamp)].sort((a, b) => a - b),
    );
    expect(plane.metrics(sbx.sandboxId, { start: String(world.now) }, sbx.accessToken).metrics).toEqual([
      last,
    ]);
    expect(
      plane.metrics(sbx.sandboxId, { end: String(world.now - 1) }, sbx.accessToken).metrics,
    ).not.toContainEqual(last);
  });

  it('takes no sample while suspended, and keeps the samples once ended', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    await plane.tick();
    const before = plane.metrics(sbx.sandboxId, {}, sbx.accessToken).metrics.length;
    expect(before).toBeGreaterThan(0);
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    world.now += 5_000;
    await plane.tick();
    expect(plane.metrics(sbx.sandboxId, {}, sbx.accessToken).metrics).toHaveLength(before);
    await plane.activity(sbx.sandboxId, sbx.accessToken); // resumes (autoResume)
    world.now += 5_000;
    await plane.tick();
    const kept = plane.metrics(sbx.sandboxId, {}, sbx.accessToken).metrics;
    expect(kept).toHaveLength(before + 1);
    await plane.kill(sbx.sandboxId, sbx.accessToken);
    world.now += 5_000;
    await plane.tick();
    expect(plane.metrics(sbx.sandboxId, {}, sbx.accessToken).metrics).toEqual(kept);
  });

  it('refuses a bad range before anything, and a caller without the token', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    for (const query of [{ start: 'yesterday' }, { start: '20', end: '10' }, { step: '5' }, { end: '-1' }]) {
      expect(() => plane.metrics(sbx.sandboxId, query, sbx.accessToken)).toThrow(
        expect.objectContaining({ name: 'InvalidArgumentError' }),
      );
    }
    expect(() => plane.metrics(sbx.sandboxId, {}, 'not-the-token')).toThrow(
      expect.objectContaining({ name: 'AuthenticationError' }),
    );
    expect(() => plane.metrics('ffffffffffff', {}, sbx.accessToken)).toThrow(
      expect.objectContaining({ code: 'sandbox_not_found' }),
    );
  });
});

describe('cpuShare', () => {
  it('is CPU time over wall time and the CPU limit, in percent, at most 100, and 0 over no time', () => {
    expect(cpuShare(1_000_000, 1_000, 1)).toBe(100);
    expect(cpuShare(500_000, 1_000, 0.5)).toBe(100);
    expect(cpuShare(250_000, 1_000, 2)).toBe(12.5);
    expect(cpuShare(1_000, 0, 1)).toBe(0);
    expect(cpuShare(-5, 1_000, 1)).toBe(0);
    expect(cpuShare(3_000_000, 1_000, 1)).toBe(100);
  });
});
