import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, SandboxError } from '../../../rules/errors.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';
import { MemoryDriver } from '../../support/memory-driver.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(() => world.dispose());

/** Every call on an ended sandbox is refused with `sandbox_ended`. */
async function expectRefused(calls: readonly (() => Promise<unknown>)[]): Promise<void> {
  for (const call of calls) {
    const error: unknown = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ code: 'sandbox_ended' });
  }
}

describe('a sandbox whose sandboxd dies', () => {
  it('ends as failed at once, its resources removed, and refuses calls afterwards', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    const other = await plane.create(closedEgress);
    world.driver.exit(sbx.sandboxId);
    await vi.waitFor(() =>
      expect(plane.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'failed' }),
    );
    expect(world.driver.sandbox(sbx.sandboxId)).toBeUndefined();
    expect(plane.get(other.sandboxId).state).toBe('running');
    await expectRefused([
      () => plane.connect(sbx.sandboxId, sbx.accessToken),
      () => plane.activity(sbx.sandboxId, sbx.accessToken),
    ]);
  });

  it('ends as failed also while suspended, and a restart replays the end', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    world.driver.exit(sbx.sandboxId);
    await vi.waitFor(() =>
      expect(plane.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'failed' }),
    );
    const restarted = await world.restart(plane);
    expect(restarted.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'failed' });
    expect(world.driver.calls.filter((c) => c.id === sbx.sandboxId)).toEqual([]);
  });
});

describe('an ended sandbox', () => {
  it('refuses pause, connect, activity and kill with sandbox_ended; its facts stay readable', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    expect(await plane.kill(sbx.sandboxId, sbx.accessToken)).toMatchObject({
      state: 'ended',
      endReason: 'killed',
    });
    expect(world.driver.sandbox(sbx.sandboxId)).toBeUndefined();
    const callsBefore = world.driver.calls.length;
    await expectRefused([
      () => plane.pause(sbx.sandboxId, sbx.accessToken),
      () => plane.connect(sbx.sandboxId, sbx.accessToken),
      () => plane.activity(sbx.sandboxId, sbx.accessToken),
      () => plane.kill(sbx.sandboxId, sbx.accessToken),
    ]);
    expect(world.driver.calls.length).toBe(callsBefore); // refused before any driver call
    expect(plane.get(sbx.sandboxId)).toMatchObject({ state: 'ended', endReason: 'killed' });
    expect(plane.list().map((info) => info.sandboxId)).toContain(sbx.sandboxId);
  });
});

describe('templates through the driver', () => {
  it('refuses an unknown template and closed egress on a template that cannot close it, before any launch', async () => {
    const plane = await world.start();
    await expect(plane.create({ template: 'no-such-template' })).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      field: 'template',
    });
    await expect(plane.create({ template: 'sdk-base', allowInternetAccess: false })).rejects.toMatchObject({
      constructor: InvalidArgumentError,
      field: 'template',
    });
    expect(world.driver.idsCalled('template')).toEqual(['no-such-template', 'sdk-base']);
    expect(world.driver.idsCalled('launch')).toEqual([]);
  });

  it('launches any template the driver has, with the manifest the driver reports', async () => {
    world.driver = new MemoryDriver({
      templates: [{ name: 'team-image', sandboxdVersion: '0.10.0', canCloseEgress: true }],
    });
    const plane = await world.start();
    const sbx = await plane.create({ template: 'team-image', allowInternetAccess: false });
    expect(sbx).toMatchObject({ template: 'team-image', allowInternetAccess: false, state: 'running' });
    expect(world.driver.sandbox(sbx.sandboxId)?.request.template).toBe('team-image');
    await expect(plane.create({ template: 'sdk-base' })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('a failed launch', () => {
  it('fails create with sandbox_error, leaves nothing behind, and is journaled so a restart has nothing to do', async () => {
    const plane = await world.start();
    world.driver.failNext('launch');
    await expect(plane.create(closedEgress)).rejects.toMatchObject({
      constructor: SandboxError,
      code: 'sandbox_error',
    });
    expect(world.driver.host.ids()).toEqual([]);
    expect(world.journal().map((r) => r.kind)).toEqual(['launching', 'launch_failed']);
    const restarted = await world.restart(plane);
    expect(restarted.list()).toEqual([]);
    expect(world.driver.idsCalled('destroy')).toEqual([]);
  });
});
