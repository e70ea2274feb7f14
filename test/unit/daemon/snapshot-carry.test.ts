/**
 * What sandboxd tells a memory snapshot's copies (`GET /v1/snapshot-carry`, issue 26): the prepared
 * runtime, started with the configuration `prepare` named (not the one written last), with its pid,
 * working directory and command line; and `prepare` naming a configuration sandboxd does not hold is
 * refused before anything starts.
 */
import { describe, expect, it } from 'vitest';
import { snapshotCarrySchema, type SnapshotCarry } from '../../../protocol/snapshot-carry.js';
import { agentRequestBody, useDaemonWorld } from './daemon-world.js';

// A stand-in runtime that waits for its prompt, which never comes.
const world = useDaemonWorld({
  name: 'sdk-snapshot-carry-',
  token: 'unit-test-sandbox-token-0123456789',
  runtime: '#!/bin/sh\ncat > /dev/null\n',
});

async function writeConfig(smallModel: string): Promise<string> {
  const body = agentRequestBody({ smallModel });
  const res = await world.call('PUT', '/v1/agent/config', body);
  expect(res.status).toBe(200);
  return body.hash;
}

async function carry(): Promise<SnapshotCarry> {
  const res = await world.call('GET', '/v1/snapshot-carry');
  expect(res.status).toBe(200);
  return snapshotCarrySchema.parse(await res.json());
}

describe('GET /v1/snapshot-carry', () => {
  it('names the runtime prepare() started, with the configuration it named', async () => {
    expect(await carry()).toEqual({ gatewayPorts: {} });
    const named = await writeConfig('named');
    await writeConfig('last');
    const unknown = await world.call('POST', '/v1/agent/prepare', {
      runtime: 'runtime_a',
      configHash: 'f'.repeat(64),
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe('agent_config_missing');
    expect(await carry()).toEqual({ gatewayPorts: {} });

    const prepared = await world.call('POST', '/v1/agent/prepare', {
      runtime: 'runtime_a',
      configHash: named,
    });
    expect(prepared.status).toBe(200);
    await expect.poll(async () => (await carry()).standby?.pid ?? 0).toBeGreaterThan(0);
    expect((await carry()).standby).toEqual({
      configHash: named,
      workdir: '/',
      pid: expect.any(Number) as unknown,
      cmd: expect.stringContaining('opencode') as unknown,
    });
  });
});
