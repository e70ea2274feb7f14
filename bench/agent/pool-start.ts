/**
 * A new agent sandbox to its first model request: `Sandbox.create()` then `agent.run()` (cold), beside
 * `pool.take()` then `agent.run()` on a pool warmed with `agentPoolWarmup('runtime_a')` (issue 14), each
 * timed from the create or take call to the model's first request, in the same run.
 */
import { AgentSpec } from '../../sdk/agent-spec.js';
import { agentPoolWarmup, PoolConfig } from '../../sdk/pool-config.js';
import { Sandbox } from '../../sdk/sandbox.js';
import { SandboxPool } from '../../sdk/sandbox-pool.js';
import type { SecretGateway } from '../../sdk/secret-gateway.js';
import type { SecretCache } from '../../sdk/secret-store/secret-cache.js';
import type { TimedModel } from './timed-model.js';

/** What both starts need. */
export interface PoolStartWorld {
  readonly controlPlaneUrl: string;
  readonly gateways: () => Record<string, SecretGateway>;
  readonly secretCache: SecretCache;
  readonly spec: AgentSpec;
  readonly upstream: TimedModel;
  /** Resets the model's script to a 2-request conversation. */
  readonly script: () => void;
}

/** ms from `start` (which opens a sandbox) to its agent's first model request; the sandbox is killed. */
export async function timeToFirstRequest(
  world: PoolStartWorld,
  start: () => Promise<Sandbox>,
): Promise<number> {
  world.script();
  const called = performance.now();
  const sbx = await start();
  try {
    await sbx.agent.run('Fix the file.', { spec: world.spec });
  } finally {
    await sbx.kill();
  }
  const first = world.upstream.firstRequestAfter(called);
  if (first === undefined) throw new Error('the upstream saw no request');
  return first;
}

/** `iterations` cold starts and as many pooled ones, alternating; samples in ms. */
export async function measurePoolStart(
  world: PoolStartWorld,
  iterations: number,
): Promise<{ readonly cold: number[]; readonly pooled: number[] }> {
  const cold: number[] = [];
  const pooled: number[] = [];
  const pool = new SandboxPool(
    new PoolConfig({
      size: 1,
      template: 'sdk-agent',
      allowInternetAccess: false,
      warmup: agentPoolWarmup('runtime_a'),
    }),
    { controlPlaneUrl: world.controlPlaneUrl },
  );
  const ready = async (): Promise<void> => {
    while (pool.ready < 1) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  try {
    for (let i = 0; i < iterations; i++) {
      cold.push(
        await timeToFirstRequest(world, () =>
          Sandbox.create({
            controlPlaneUrl: world.controlPlaneUrl,
            template: 'sdk-agent',
            allowInternetAccess: false,
            gateways: world.gateways(),
            secretCache: world.secretCache,
          }),
        ),
      );
      await ready();
      pooled.push(
        await timeToFirstRequest(world, () =>
          pool.take({ gateways: world.gateways(), secretCache: world.secretCache }),
        ),
      );
    }
  } finally {
    await pool.close();
  }
  return { cold, pooled };
}
