/**
 * Who a preview URL lets in, and what it wakes (control-plane/previews.ts), on the memory driver: an
 * unknown or ended sandbox is refused before its token is looked at, a private port admits only its own
 * port token, public ports are journaled and kept across a restart, a suspended sandbox with auto-resume
 * is resumed by a request and one without is not, and connect gives the preview key only to the holder
 * of the sandbox's token.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { portToken } from '../../../protocol/preview-wire.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(async () => {
  await world.dispose();
});

describe('preview access', () => {
  it("admits a private port's own token only, and refuses unknown and ended sandboxes first", async () => {
    const plane = await world.start();
    const a = await plane.create(closedEgress);
    const b = await plane.create(closedEgress);
    expect(a.previewKey).not.toBe(b.previewKey);
    await expect(plane.previews.open(a.sandboxId, 8000, portToken(a.previewKey, 8000))).resolves.toBe(false);
    for (const token of [
      undefined,
      portToken(a.previewKey, 8001),
      portToken(b.previewKey, 8000),
      a.accessToken,
    ]) {
      await expect(plane.previews.open(a.sandboxId, 8000, token)).rejects.toMatchObject({
        code: 'unauthenticated',
      });
    }
    await expect(plane.previews.open('ffffffffffff', 8000, undefined)).rejects.toMatchObject({
      code: 'sandbox_not_found',
    });
    await plane.kill(a.sandboxId, a.accessToken);
    await expect(plane.previews.open(a.sandboxId, 8000, undefined)).rejects.toMatchObject({
      code: 'sandbox_ended',
    });
    expect(() => plane.previews.targetOf(a.sandboxId)).toThrow(
      expect.objectContaining({ code: 'sandbox_ended' }),
    );
  });

  it('keeps public ports across a restart, and only the token holder changes them', async () => {
    const first = await world.start();
    const sbx = await first.create(closedEgress);
    await first.previews.expose(sbx.sandboxId, 3000, true, sbx.accessToken);
    await first.previews.expose(sbx.sandboxId, 80, true, sbx.accessToken);
    await expect(first.previews.expose(sbx.sandboxId, 81, true, 'not-the-token')).rejects.toMatchObject({
      name: 'AuthenticationError',
    });
    await expect(first.previews.expose(sbx.sandboxId, 0, true, sbx.accessToken)).rejects.toMatchObject({
      name: 'InvalidArgumentError',
    });
    const second = await world.restart(first);
    expect(second.previews.publicPorts(sbx.sandboxId, sbx.accessToken)).toEqual([80, 3000]);
    await expect(second.previews.open(sbx.sandboxId, 3000, undefined)).resolves.toBe(false);
    await second.previews.expose(sbx.sandboxId, 3000, false, sbx.accessToken);
    await expect(second.previews.open(sbx.sandboxId, 3000, undefined)).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });

  it('resumes a suspended sandbox with auto-resume, and not one without', async () => {
    const plane = await world.start();
    const waking = await plane.create({
      ...closedEgress,
      idlePolicy: { maxIdleSeconds: 60, autoResume: true },
    });
    const sleeping = await plane.create({
      ...closedEgress,
      idlePolicy: { maxIdleSeconds: 60, autoResume: false },
    });
    await plane.pause(waking.sandboxId, waking.accessToken);
    await plane.pause(sleeping.sandboxId, sleeping.accessToken);
    await expect(plane.previews.open(waking.sandboxId, 80, portToken(waking.previewKey, 80))).resolves.toBe(
      true,
    );
    expect(plane.get(waking.sandboxId).state).toBe('running');
    await expect(
      plane.previews.open(sleeping.sandboxId, 80, portToken(sleeping.previewKey, 80)),
    ).rejects.toMatchObject({ code: 'sandbox_suspended' });
    expect(plane.get(sleeping.sandboxId).state).toBe('suspended');
    // A tunnel is never opened to a sandbox that is not running.
    expect(() => plane.previews.targetOf(sleeping.sandboxId)).toThrow(
      expect.objectContaining({ code: 'sandbox_suspended' }),
    );
  });

  it("gives the preview key on connect to the token's holder only", async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    expect((await plane.connect(sbx.sandboxId, sbx.accessToken)).previewKey).toBe(sbx.previewKey);
    expect(await plane.connect(sbx.sandboxId, 'someone-else')).not.toHaveProperty('previewKey');
  });
});
