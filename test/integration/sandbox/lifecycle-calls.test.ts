/**
 * The lifecycle calls every sandbox SDK has (issue 28 item 3), through the SDK and the control plane's
 * HTTP API against a real sandbox: metadata at create, `Sandbox.getInfo` and `Sandbox.list` filtering
 * on it and on the state, and `sbx.setTimeout` both ways and refused past 8 h.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../../sdk/sandbox.js';
import { startControlPlane, type InProcessControlPlane } from '../support/control-plane.js';

describe('lifecycle calls', { timeout: 60_000 }, () => {
  let cp: InProcessControlPlane;
  let sbx: Sandbox;
  const tag = `run-${String(process.pid)}`;

  beforeAll(async () => {
    cp = await startControlPlane();
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
});
