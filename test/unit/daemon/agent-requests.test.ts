/**
 * sandboxd checks an agent request with its runtime's driver before keeping it (`PUT /v1/agent/config`):
 * the hash is the text's own, the runtime is one of its folders, the options are the runtime's own, and
 * the spec is one the runtime can run. Refusals name the field, never a value.
 */
import { describe, expect, it } from 'vitest';
import { agentRequestHash } from '../../../protocol/agent-request-hash.js';
import { agentRequestBody, useDaemonWorld } from './daemon-world.js';

const world = useDaemonWorld({
  name: 'sdk-agent-requests-',
  token: 'unit-test-sandbox-token-0123456789',
  runtime: '#!/bin/sh\ncat > /dev/null\n',
});

async function refusal(
  body: unknown,
): Promise<{ status: number; code: string; field?: string; message: string }> {
  const res = await world.call('PUT', '/v1/agent/config', body);
  const envelope = (await res.json()) as { code: string; message: string; context?: { field?: string } };
  return {
    status: res.status,
    code: envelope.code,
    message: envelope.message,
    ...(envelope.context?.field === undefined ? {} : { field: envelope.context.field }),
  };
}

/** A write of `request` for `runtime`, named by its hash. */
function write(runtime: string, request: unknown): { runtime: string; hash: string; text: string } {
  const text = JSON.stringify(request);
  return { runtime, hash: agentRequestHash(runtime, text), text };
}

/** The start of a run of `runtime` with request `configHash` in the world's folder. */
function startBody(runtime: string, configHash: string): unknown {
  return {
    runtime,
    configHash,
    limits: { timeoutMs: 30_000, maxSteps: 5, maxTotalTokens: null, maxOutputBytes: 1 << 20 },
    workdir: world.dir,
    reasoning: false,
  };
}

const base = JSON.parse(agentRequestBody().text) as { spec: Record<string, unknown> };

describe('PUT /v1/agent/config', () => {
  it('keeps a request its runtime can run and answers its hash', async () => {
    const body = agentRequestBody();
    const res = await world.call('PUT', '/v1/agent/config', body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hash: body.hash });
  });

  it('keeps one spec asked of two runtimes as two requests, each starting its own runtime', async () => {
    const request = { ...base, options: {} };
    const a = write('runtime_a', request);
    const b = write('runtime_b', request);
    expect(a.hash).not.toBe(b.hash);
    for (const body of [a, b]) expect((await world.call('PUT', '/v1/agent/config', body)).status).toBe(200);
    // A start naming the other runtime's request is refused as missing, never run with it.
    const crossed = await world.call('POST', '/v1/agent/executions', startBody('runtime_b', a.hash));
    expect(await crossed.json()).toMatchObject({ code: 'agent_config_missing' });
    // runtime_b was written last: runtime_a's request is still there (no agent_config_missing).
    const started = await world.call('POST', '/v1/agent/executions', startBody('runtime_a', a.hash));
    expect(started.status).toBe(200);
    const { executionId } = (await started.json()) as { executionId: string };
    expect((await world.call('POST', `/v1/agent/executions/${executionId}/abort`)).status).toBe(200);
    // Ended (its tree gone) before the next test starts one.
    await expect
      .poll(
        async () =>
          ((await (await world.call('GET', '/v1/agent/executions')).json()) as { current: unknown }).current,
        {
          timeout: 30_000,
        },
      )
      .toBeNull();
  });

  it('refuses a hash that is not the text’s own', async () => {
    expect(await refusal({ ...agentRequestBody(), hash: 'f'.repeat(64) })).toMatchObject({
      status: 400,
      code: 'invalid_argument',
      field: 'hash',
    });
  });

  it.each(['runtime_nope', 'runtime_zz9'])('refuses runtime %s, which no folder holds', async (runtime) => {
    expect(await refusal(write(runtime, { ...base, options: {} }))).toMatchObject({
      code: 'invalid_argument',
      field: 'runtime',
    });
  });

  it('refuses an option the runtime does not have, and a malformed one', async () => {
    expect(
      await refusal(write('runtime_a', { ...base, options: { env: { LD_PRELOAD: '/tmp/x' } } })),
    ).toMatchObject({ code: 'invalid_argument', field: 'options' });
    expect(
      await refusal(write('runtime_b', { ...base, options: { entrypoint: 'not an entrypoint' } })),
    ).toMatchObject({ code: 'invalid_argument', field: 'options.entrypoint' });
  });

  it('refuses a spec the runtime cannot run (runtime_b: no mcp)', async () => {
    const spec = { ...base.spec, mcp: { docs: { kind: 'remote', gateway: 'llm', path: '/mcp' } } };
    expect(await refusal(write('runtime_b', { spec, options: {} }))).toMatchObject({
      code: 'invalid_argument',
      field: 'spec.mcp',
    });
  });

  it('refuses a malformed request, naming the field', async () => {
    const spec = {
      ...base.spec,
      model: { provider: 'vendor_z', id: 'm', gateway: 'llm', promptCaching: true },
    };
    expect(await refusal(write('runtime_a', { spec, options: {} }))).toMatchObject({
      code: 'invalid_argument',
      field: 'request.spec.model.provider',
    });
    expect(
      await refusal({ runtime: 'runtime_a', hash: agentRequestHash('runtime_a', '{'), text: '{' }),
    ).toMatchObject({
      code: 'invalid_argument',
      field: 'text',
    });
  });

  it('starts no run of a request whose gateway has no route: invalid_argument, nothing left', async () => {
    const body = agentRequestBody({
      model: { provider: 'compatible', id: 'm', gateway: 'gone', promptCaching: true },
    });
    expect((await world.call('PUT', '/v1/agent/config', body)).status).toBe(200);
    const listed = async (): Promise<unknown> => (await world.call('GET', '/v1/agent/executions')).json();
    const before = await listed();
    const res = await world.call('POST', '/v1/agent/executions', startBody('runtime_a', body.hash));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('gone') as unknown,
    });
    expect(await listed()).toEqual(before);
  });
});
