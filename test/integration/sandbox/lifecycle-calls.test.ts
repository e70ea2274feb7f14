/**
 * The lifecycle calls every sandbox SDK has (issue 28 item 3), through the SDK and the control plane's
 * HTTP API against a real sandbox: metadata at create, `Sandbox.getInfo` and `Sandbox.list` filtering
 * on it and on the state, `sbx.setTimeout` both ways and refused past 8 h, and `sbx.getMetrics` seeing
 * what sandbox code does (CPU, memory, disk, network).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Isolation } from '../../../protocol/control-plane-api.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import {
  startControlPlane,
  TEST_OPERATOR_KEY,
  type InProcessControlPlane,
} from '../support/control-plane.js';

describe('lifecycle calls', { timeout: 60_000 }, () => {
  let cp: InProcessControlPlane;
  let sbx: Sandbox;
  const tag = `run-${String(process.pid)}`;

  beforeAll(async () => {
    cp = await startControlPlane({ metricsIntervalMs: 200 });
    sbx = await cp.createSandbox({ metadata: { suite: tag, role: 'web' } });
  });

  afterAll(async () => {
    await sbx.kill().catch(() => undefined);
    await cp.stop();
  });

  it('shows metadata in getInfo and finds the sandbox by it and by its state', async () => {
    const info = await Sandbox.getInfo(sbx.sandboxId, {
      controlPlaneUrl: cp.url,
      accessToken: sbx.accessToken,
    });
    expect(info.metadata).toEqual({ suite: tag, role: 'web' });
    expect(info.startedAt).toBeLessThanOrEqual(Date.now());
    const found = await Sandbox.list({
      controlPlaneUrl: cp.url,
      metadata: { suite: tag },
      state: ['running'],
    });
    expect(found.map((s) => s.sandboxId)).toEqual([sbx.sandboxId]);
    expect(await Sandbox.list({ controlPlaneUrl: cp.url, metadata: { suite: tag, role: 'db' } })).toEqual([]);
    expect(
      await Sandbox.list({ controlPlaneUrl: cp.url, metadata: { suite: tag }, state: ['ended'] }),
    ).toEqual([]);
    await expect(Sandbox.list({ controlPlaneUrl: cp.url, state: ['paused' as never] })).rejects.toMatchObject(
      {
        name: 'InvalidArgumentError',
      },
    );
    await expect(
      Sandbox.create({ controlPlaneUrl: cp.url, metadata: { k: 'a\u0000b' } }),
    ).rejects.toMatchObject({ name: 'InvalidArgumentError' });
  });

  it('moves the lifetime both ways and refuses it past 8 h from creation', async () => {
    // The new end is the control plane's time of the call plus the timeout: bracketed by readings of the
    // same clock around the call, whatever the call took.
    let called = Date.now();
    const longer = await sbx.setTimeout(2 * 3_600_000);
    expect(longer.deadlineAt).toBeGreaterThanOrEqual(called + 2 * 3_600_000);
    expect(longer.deadlineAt).toBeLessThanOrEqual(Date.now() + 2 * 3_600_000);
    called = Date.now();
    const shorter = await sbx.setTimeout(600_000);
    expect(shorter.deadlineAt).toBeGreaterThanOrEqual(called + 600_000);
    expect(shorter.deadlineAt).toBeLessThanOrEqual(Date.now() + 600_000);
    await expect(sbx.setTimeout(8 * 3_600_000)).rejects.toMatchObject({
      name: 'InvalidArgumentError',
      message: expect.stringContaining('8 h') as unknown,
    });
    await expect(sbx.setTimeout(0)).rejects.toMatchObject({ name: 'InvalidArgumentError' });
    expect((await sbx.getInfo()).deadlineAt).toBe(shorter.deadlineAt);
  });

  it.each<Isolation>(['namespace', 'gvisor'])(
    'samples the CPU, memory, disk and network sandbox code uses (%s)',
    async (isolation) => {
      // The suite's sandbox is a namespace one; a gVisor one is made for its turn.
      const box = isolation === 'namespace' ? sbx : await cp.createSandbox({ isolation });
      try {
        // The first sample is read as the sandbox is created, not before create answers.
        await expect
          .poll(async () => (await box.getMetrics()).length, { timeout: 30_000 })
          .toBeGreaterThan(0);
        const [before] = (await box.getMetrics()).slice(-1);
        if (before === undefined) throw new Error('no sample');
        expect(before.cpuCount).toBe(1);
        expect(before.memTotalBytes).toBe(512 * 2 ** 20);
        const burner = await box.commands.run('while :; do :; done', { background: true });
        await box.commands.run(
          'head -c 48M /dev/zero > /tmp/memory && head -c 40M /dev/urandom > /home/user/disk',
        );
        await box.files.write('/home/user/upload', new Uint8Array(2 * 2 ** 20));
        const since = Date.now();
        // Samples taken after all of it: the burner has had a whole sample's time to itself.
        await expect
          .poll(async () => (await box.getMetrics({ start: since })).at(-1), { timeout: 30_000 })
          .toMatchObject({
            // Well above idle, even on a loaded machine; never above the sandbox's one CPU.
            cpuUsedPct: expect.toSatisfy((pct: number) => pct > 25 && pct <= 100) as unknown,
            memUsedBytes: expect.toSatisfy(
              (bytes: number) => bytes >= before.memUsedBytes + 48 * 2 ** 20,
            ) as unknown,
            diskUsedBytes: expect.toSatisfy(
              (bytes: number) => bytes >= before.diskUsedBytes + 42 * 2 ** 20,
            ) as unknown,
            netRxBytes: expect.toSatisfy(
              (bytes: number) => bytes >= before.netRxBytes + 2 * 2 ** 20,
            ) as unknown,
          });
        await burner.kill();
        const all = await Sandbox.getMetrics(box.sandboxId, {
          controlPlaneUrl: cp.url,
          accessToken: TEST_OPERATOR_KEY,
          end: new Date(since),
        });
        expect(all.length).toBeGreaterThan(0);
        expect(all.every((sample) => sample.timestamp <= since)).toBe(true);
        await expect(box.getMetrics({ start: 10, end: 5 })).rejects.toMatchObject({
          name: 'InvalidArgumentError',
        });
      } finally {
        if (box !== sbx) await box.kill();
      }
    },
  );
});
