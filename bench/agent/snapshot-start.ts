/**
 * An agent sandbox restored from a memory snapshot taken after `agent.prepare({ spec })` (issue 26), to its
 * first model request: `Sandbox.create({ snapshot, gateways })` then `agent.run()`, beside a cold
 * `Sandbox.create()` + `run()` of the same isolation (gVisor: only its snapshots hold memory), each timed
 * from the create call to the model's first request, alternating, in the same run. The snapshot is taken
 * once, of a sandbox whose warm-up ran `leadMs`; it holds no gateway, so each copy is given them anew.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Sandbox } from '../../sdk/sandbox.js';
import { Snapshot } from '../../sdk/snapshot.js';
import type { PoolStartWorld } from './pool-start.js';
import { timeToFirstRequest } from './pool-start.js';

/** `iterations` cold gVisor starts and as many restores of a prepared snapshot; samples in ms. */
export async function measureSnapshotStart(
  world: PoolStartWorld,
  iterations: number,
  leadMs: number,
): Promise<{ readonly cold: number[]; readonly restored: number[] }> {
  const create = (snapshot?: Snapshot): Promise<Sandbox> =>
    Sandbox.create({
      controlPlaneUrl: world.controlPlaneUrl,
      template: 'sdk-agent',
      isolation: 'gvisor',
      allowInternetAccess: false,
      gateways: world.gateways(),
      secretCache: world.secretCache,
      ...(snapshot === undefined ? {} : { snapshot }),
    });
  const original = await create();
  let snapshot: Snapshot;
  try {
    original.agent.prepare({ spec: world.spec });
    await sleep(leadMs);
    snapshot = await original.snapshot();
  } finally {
    await original.kill();
  }
  const cold: number[] = [];
  const restored: number[] = [];
  try {
    for (let i = 0; i < iterations; i++) {
      cold.push(await timeToFirstRequest(world, () => create()));
      restored.push(await timeToFirstRequest(world, () => create(snapshot)));
    }
  } finally {
    await Snapshot.delete(snapshot.id, { controlPlaneUrl: world.controlPlaneUrl });
  }
  return { cold, restored };
}
