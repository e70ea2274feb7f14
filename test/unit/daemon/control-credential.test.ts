/**
 * The control plane's credential at sandboxd: admitted to the event stream, the gateways' status, the
 * agent's executions, their events and their abort, opening a terminal (whose calls by pid it may then
 * make: `test/integration/sandbox/terminals.test.ts`), and to nothing else, no process it did not open
 * among them; its calls are not recorded as `call` records, so the inspector watching never keeps a
 * sandbox from going idle.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_ENDPOINTS } from '../../../daemon/audit-records.js';
import { agentRequestBody, useDaemonWorld } from './daemon-world.js';

const TOKEN = 'unit-test-sandbox-token-0123456789';
const CONTROL = 'unit-test-control-token-9876543210';
// A stand-in runtime that waits for its prompt, which never comes: the execution runs until aborted.
const world = useDaemonWorld({
  name: 'sdk-control-credential-',
  token: TOKEN,
  controlToken: CONTROL,
  runtime: '#!/bin/sh\ncat > /dev/null\n',
});
let executionId = '';

const call = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await fetch(`${world.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}` },
    ...(method === 'GET' ? {} : { body: JSON.stringify(body ?? {}) }),
  });
  // Streams answer 200 at once: read no further.
  if (res.headers.get('content-type') === 'application/x-ndjson') await res.body?.cancel();
  else await res.arrayBuffer();
  return res.status;
};

const calls = (): string[] => world.records().flatMap((r) => (r.type === 'call' ? [r.endpoint] : []));

beforeAll(async () => {
  const body = agentRequestBody();
  const { hash } = body;
  expect(await call('PUT', '/v1/agent/config', TOKEN, body)).toBe(200);
  const res = await fetch(`${world.url}/v1/agent/executions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({
      runtime: 'runtime_a',
      configHash: hash,
      limits: { timeoutMs: 30_000, maxSteps: 5, maxTotalTokens: null, maxOutputBytes: 1 << 20 },
      workdir: world.dir,
      reasoning: false,
    }),
  });
  ({ executionId } = (await res.json()) as { executionId: string });
});

describe("the control plane's credential", () => {
  it("is admitted to exactly the event stream, the gateways, a snapshot's carry, the egress policy, the agent executions and opening a terminal", () => {
    expect([...CONTROL_ENDPOINTS].sort()).toEqual([
      'GET /v1/agent/executions',
      'GET /v1/agent/executions/:id/events',
      'GET /v1/events',
      'GET /v1/gateways',
      'GET /v1/snapshot-carry',
      'POST /v1/agent/executions/:id/abort',
      'POST /v1/terminals',
      'PUT /v1/egress',
    ]);
  });

  it("alone sets the egress policy: the sandbox's token is refused, unrecorded", async () => {
    const before = calls();
    const policy = { mode: 'open', allow: [], deny: [] };
    const put = (token: string): Promise<Response> =>
      fetch(`${world.url}/v1/egress`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(policy),
      });
    expect((await put(TOKEN)).status).toBe(401);
    // Admitted; this daemon runs on the host, with no egress filter to give it to.
    expect((await put(CONTROL)).status).toBe(404);
    expect(calls()).toEqual(before);
  });

  it('reads the stream, the gateways and the executions without any of it recorded as a call', async () => {
    const before = calls();
    expect(await call('GET', '/v1/events?after=0', CONTROL)).toBe(200);
    expect(await call('GET', '/v1/gateways', CONTROL)).toBe(200);
    expect(await call('GET', '/v1/snapshot-carry', CONTROL)).toBe(200);
    expect(await call('GET', '/v1/agent/executions', CONTROL)).toBe(200);
    expect(await call('GET', `/v1/agent/executions/${executionId}/events?after=0`, CONTROL)).toBe(200);
    // Admitted, then the handler's own answer: no such execution.
    expect(await call('GET', '/v1/agent/executions/exe_none/events', CONTROL)).toBe(404);
    expect(calls()).toEqual(before);
    // The same read with the sandbox's token is the sandbox's activity.
    expect(await call('GET', '/v1/gateways', TOKEN)).toBe(200);
    expect(calls()).toEqual([...before, 'GET /v1/gateways']);
  });

  it.each([
    ['POST', '/v1/processes'],
    ['GET', '/v1/processes'],
    ['GET', '/v1/processes/1/events'],
    ['POST', '/v1/processes/1/signal'],
    ['POST', '/v1/processes/1/stdin'],
    ['POST', '/v1/processes/1/resize'],
    ['POST', '/v1/gateways'],
    ['GET', '/v1/version'],
    ['PUT', '/v1/agent/config'],
    ['POST', '/v1/agent/executions'],
    ['POST', '/v1/agent/executions/exe_x/prompt'],
    ['POST', '/v1/agent/prepare'],
    ['GET', '/v1/home/archive'],
    ['PUT', '/v1/home/archive'],
    ['GET', '/v1/no-such-thing'],
  ])('is refused for %s %s, unrecorded', async (method, path) => {
    const before = calls();
    expect(await call(method, path, CONTROL)).toBe(401);
    expect(calls()).toEqual(before);
  });

  it('aborts a running execution', async () => {
    const list = async () => {
      const res = await fetch(`${world.url}/v1/agent/executions`, {
        headers: { authorization: `Bearer ${CONTROL}` },
      });
      return (await res.json()) as { current: string | null; executions: { executionId: string }[] };
    };
    expect((await list()).current).toBe(executionId);
    expect(await call('POST', `/v1/agent/executions/${executionId}/abort`, CONTROL)).toBe(200);
    await expect.poll(async () => (await list()).current, { timeout: 5_000 }).toBeNull();
    expect(calls()).not.toContain('POST /v1/agent/executions/:id/abort');
  });
});
