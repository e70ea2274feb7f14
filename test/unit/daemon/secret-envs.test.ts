/**
 * sandboxd's `secrets=` (`PUT /v1/secrets`): the values reach every command `POST /v1/processes` starts,
 * under the command's own `envs` (which win on a shared name), and nothing else: not the agent's
 * runtime, not the audit records, not the process list, not an answer or an error.
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SecretEnvs } from '../../../daemon/secret-envs.js';
import { LIMITS } from '../../../rules/limits.js';
import { agentRequestBody, useDaemonWorld } from './daemon-world.js';

const TOKEN = 'unit-test-token-secret-envs-0123';
const VALUE = 'planted-secret-env-value-7a61c3';
const OTHER = 'planted-other-value-91d0e2';
// A stand-in runtime that writes its whole environment beside its working folder, then ends well.
const world = useDaemonWorld({
  name: 'sdk-secret-envs-',
  token: TOKEN,
  runtime: '#!/bin/sh\nenv > ./runtime-env\ncat > /dev/null\nexit 0\n',
  recordAgentProcesses: true,
});

const { call } = world;

/** Runs `cmd` in the foreground and returns its stdout. */
async function stdoutOf(cmd: string, envs: Record<string, string> = {}): Promise<string> {
  const res = await call('POST', '/v1/processes?stream=true', { cmd, envs });
  const events = (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; stream?: string; data?: string });
  return events
    .filter((e) => e.type === 'data' && e.stream === 'stdout')
    .map((e) => Buffer.from(e.data ?? '', 'base64').toString('utf8'))
    .join('');
}

beforeAll(async () => {
  const res = await call('PUT', '/v1/secrets', { envs: { API_KEY: VALUE, SHARED: OTHER } });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ names: ['API_KEY', 'SHARED'] });
});

describe('secrets as environment variables of commands', () => {
  it('are in the environment of every command', async () => {
    expect(await stdoutOf('printf %s "$API_KEY"')).toBe(VALUE);
    const out = join(world.dir, 'background-out');
    const background = await call('POST', '/v1/processes', { cmd: `printf %s "$API_KEY" > '${out}'` });
    expect(background.status).toBe(200);
    const { pid } = (await background.json()) as { pid: number };
    await (await call('GET', `/v1/processes/${String(pid)}/events`)).text();
    expect(readFileSync(out, 'utf8')).toBe(VALUE);
  });

  it("lose to a command's own envs of the same name", async () => {
    expect(await stdoutOf('printf %s "$SHARED"', { SHARED: 'mine' })).toBe('mine');
    expect(await stdoutOf('printf %s "$SHARED"')).toBe(OTHER);
  });

  it('never reach the agent runtime, the audit records or the process list', async () => {
    const body = agentRequestBody();
    const { hash } = body;
    expect((await call('PUT', '/v1/agent/config', body)).status).toBe(200);
    const started = await call('POST', '/v1/agent/executions', {
      runtime: 'runtime_a',
      configHash: hash,
      limits: { timeoutMs: 30_000, maxSteps: 5, maxTotalTokens: null, maxOutputBytes: 1 << 20 },
      workdir: world.dir,
      reasoning: false,
    });
    const { executionId } = (await started.json()) as { executionId: string };
    await (await call('POST', `/v1/agent/executions/${executionId}/prompt`, 'hello')).text();
    const runtimeEnv = readFileSync(join(world.dir, 'runtime-env'), 'utf8');
    expect(runtimeEnv).toContain('OPENCODE_CONFIG_CONTENT=');
    expect(runtimeEnv).not.toContain('API_KEY');
    expect(runtimeEnv).not.toContain(VALUE);
    expect(JSON.stringify(world.records())).not.toContain(VALUE);
    expect(world.records()).toContainEqual(
      expect.objectContaining({ type: 'call', endpoint: 'PUT /v1/secrets' }),
    );
    expect(await (await call('GET', '/v1/processes')).text()).not.toContain(VALUE);
  });
});

describe('PUT /v1/secrets', () => {
  it('refuses a bad name, a NUL byte or too many entries, naming the field and never a value', async () => {
    const refusals = [
      [{ envs: { 'NOT-A-NAME': VALUE } }, 'envs.NOT-A-NAME'],
      [{ envs: { GOOD: `${VALUE}\0tail` } }, 'envs.GOOD'],
      [
        {
          envs: Object.fromEntries(
            Array.from({ length: LIMITS.secretEnvsPerSandbox + 1 }, (_, i) => [`V${String(i)}`, VALUE]),
          ),
        },
        'envs',
      ],
      [{ envs: { GOOD: 5 } }, 'envs.GOOD'],
      [{ routes: {} }, ''],
    ] as const;
    for (const [body, field] of refusals) {
      const res = await call('PUT', '/v1/secrets', body);
      expect(res.status).toBe(400);
      const answer = await res.text();
      expect(answer).toContain('invalid_argument');
      if (field !== '') expect(answer).toContain(`${field}:`);
      expect(answer).not.toContain(VALUE);
    }
    // A refused body changes nothing.
    expect(await stdoutOf('printf %s "$API_KEY"')).toBe(VALUE);
  });

  it('needs the sandbox token', async () => {
    const res = await fetch(`${world.url}/v1/secrets`, { method: 'PUT', body: '{"envs":{}}' });
    expect(res.status).toBe(401);
  });
});

describe('SecretEnvs', () => {
  it('prints and serialises names only', () => {
    const envs = new SecretEnvs();
    envs.replace({ B: VALUE, A: OTHER });
    expect(inspect(envs, { showHidden: true, depth: 10 })).toBe('SecretEnvs(A, B)');
    expect(JSON.stringify({ envs })).toBe('{"envs":{"names":["A","B"]}}');
    expect(envs.under({ A: 'own' })).toEqual({ A: 'own', B: VALUE });
  });
});
