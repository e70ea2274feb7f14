/**
 * Every AgentModel provider through its gateway route (issue 11 "runtime_a"): real opencode in an
 * `sdk-agent` sandbox speaks each vendor's wire format to the scripted model server over HTTPS; the
 * gateway injects the key in the vendor's header and the upstream sees exactly that value.
 */
import { describe, expect, it } from 'vitest';
import type { AgentProvider } from '../../../rules/agent-providers.js';
import type { Sandbox } from '../../../sdk/sandbox.js';
import { text, toolCall } from '../../support/model-server/index.js';
import { PROVIDER_PATHS, PROVIDER_ROUTES, useAgentWorld } from './agent-world.js';

const world = useAgentWorld(21);

const PATHS = PROVIDER_PATHS;

describe('each provider end to end', () => {
  for (const provider of Object.keys(PATHS) as AgentProvider[]) {
    it(`${provider}: a tool call runs in the sandbox and the key reaches only the upstream`, async () => {
      const sbx = await world.sandbox(provider);
      try {
        await runOn(sbx, provider);
      } finally {
        await sbx.kill();
      }
    });
  }
});

/** One run of `provider` on `sbx`: the result, the file its tool wrote, the requests the upstream saw. */
async function runOn(sbx: Sandbox, provider: AgentProvider): Promise<void> {
  world.upstream.model.reset([
    toolCall('bash', { command: `echo ${provider} > /home/user/who.txt`, description: 'write' }),
    text(`${provider} done`),
  ]);
  const result = await sbx.agent.run('write who you are', { spec: world.spec(provider) });
  expect(result).toMatchObject({ text: `${provider} done`, steps: 2, exitCode: 0 });
  expect(result.usage.total).toBeGreaterThan(0);
  expect((await sbx.commands.run('cat /home/user/who.txt')).stdout).toBe(`${provider}\n`);
  const requests = world.upstream.model.requests;
  expect(requests.map((r) => r.path)).toEqual([PATHS[provider], PATHS[provider]]);
  const header = PROVIDER_ROUTES[provider].header;
  for (const r of requests) expect(r.credentials).toEqual({ [header]: 'expected' });
}
