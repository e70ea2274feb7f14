import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ControlPlane } from '../../../control-plane/control-plane.js';
import { LIMITS } from '../../../rules/limits.js';
import { Sandbox } from '../../../sdk/sandbox.js';
import { freePort } from '../../support/loopback.js';
import {
  serveControlPlane,
  startControlPlane,
  stateFolder,
  TEST_OPERATOR_KEY,
} from '../support/control-plane.js';

describe('the 8 h cap', () => {
  it('ends a sandbox when running plus suspended time reaches the timeout, on a simulated clock, and replays to the same end', async () => {
    let now = 1_700_000_000_000;
    const cp = await startControlPlane({ now: () => now, timers: false });
    try {
      const sbx = await Sandbox.create({
        template: 'sdk-base-caps',
        allowInternetAccess: false,
        timeoutMs: LIMITS.sandboxMaxTimeoutMs,
        controlPlaneUrl: cp.url,
      });
      now += 3 * 3_600_000;
      await sbx.pause(); // suspended time counts too
      now += 5 * 3_600_000 - 1;
      await cp.plane.tick();
      expect(cp.plane.get(sbx.sandboxId)).toMatchObject({ state: 'suspended' });
      now += 1;
      await cp.plane.tick();
      expect(cp.plane.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
      expect(await cp.driver.list()).not.toContain(sbx.sandboxId);

      // The journal carries time itself: a replay on a clock set far in the past reaches the same end.
      await cp.plane.close();
      const replayed = await ControlPlane.start({
        stateDir: cp.stateDir,
        driver: cp.driver,
        now: () => 0,
        timers: false,
      });
      expect(replayed.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'timeout' });
      await replayed.close();
    } finally {
      await cp.stop();
    }
  });
});

describe('a control plane killed with SIGKILL during creates', () => {
  it('loses no created sandbox and leaks none after a restart', async () => {
    const state = stateFolder();
    const port = await freePort();
    const url = `http://127.0.0.1:${String(port)}`;
    let server = await serveControlPlane(state.stateDir, port);
    const created: Sandbox[] = [];
    try {
      // Creates cut off by the kill fail on the client side; that is expected and not checked here.
      const attempts = Array.from({ length: 6 }, (_, i) => attempt(i).catch(() => undefined));
      async function attempt(i: number): Promise<void> {
        await new Promise((resolve) => setTimeout(resolve, i * 120));
        const sbx = await Sandbox.create({
          template: 'sdk-base-caps',
          allowInternetAccess: false,
          controlPlaneUrl: url,
        });
        created.push(sbx);
      }
      await expect.poll(() => created.length, { timeout: 20_000, interval: 10 }).toBeGreaterThanOrEqual(2);
      server.kill('SIGKILL');
      await once(server, 'exit');
      await Promise.allSettled(attempts);

      server = await serveControlPlane(state.stateDir, port);
      for (const sbx of created) expect((await sbx.commands.run('echo alive')).stdout).toBe('alive\n');
      // Every resource on the host belongs to a sandbox the control plane tracks (a create cut off after
      // it was journaled is tracked too: it ends at its timeout or on kill), and every created one lives.
      const live = (await state.driver.list()).sort();
      const tracked = (
        (await (
          await fetch(`${url}/v1/sandboxes`, { headers: { authorization: `Bearer ${TEST_OPERATOR_KEY}` } })
        ).json()) as { sandboxId: string; state: string }[]
      )
        .filter((s) => s.state !== 'ended')
        .map((s) => s.sandboxId)
        .sort();
      expect(live).toEqual(tracked);
      for (const sbx of created) expect(live).toContain(sbx.sandboxId);
      for (const sbx of created) await sbx.kill();
      expect((await state.driver.list()).length).toBe(live.length - created.length);
    } finally {
      server.kill('SIGTERM');
      for (const id of await state.driver.list()) await state.driver.destroy(id);
      state.remove();
    }
  });
});

describe('the warm pool', () => {
  it('hands over a launched sandbox at create, and a restart destroys the ones never handed over', async () => {
    const cp = await startControlPlane({ warmPool: 1 });
    try {
      await expect.poll(() => cp.plane.warmReady, { timeout: 20_000, interval: 50 }).toBe(2);
      const pooled = await cp.driver.list();
      const sbx = await Sandbox.create({
        template: 'sdk-base-caps',
        allowInternetAccess: false,
        controlPlaneUrl: cp.url,
      });
      expect(pooled).toContain(sbx.sandboxId);
      expect((await sbx.commands.run('id -u')).stdout).toBe('1000\n');
      await expect.poll(() => cp.plane.warmReady, { timeout: 20_000, interval: 50 }).toBe(2); // refilled

      await cp.plane.close();
      const restarted = await ControlPlane.start({ stateDir: cp.stateDir, driver: cp.driver, timers: false });
      expect(await cp.driver.list()).toEqual([sbx.sandboxId]);
      expect(restarted.get(sbx.sandboxId).state).toBe('running');
      await restarted.close();
    } finally {
      await cp.stop();
    }
  });
});
