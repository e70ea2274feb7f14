/**
 * sandboxd's `process` records: a command's start carries its command line as the caller gave it (cut
 * to `MAX_RECORD_TEXT`, ending with `…`), its end the exit code or the signal; the agent's runtime is
 * recorded with the launch plan's command line, never its prompt or environment. Never output.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processRecord } from '../../../daemon/audit-records.js';
import { MAX_RECORD_TEXT, type DaemonRecord } from '../../../protocol/daemon-events.js';
import { agentRequestBody, useDaemonWorld } from './daemon-world.js';

const TOKEN = 'unit-test-token-0123456789';
const PROMPT = 'distinctive-prompt-text-5151';
const ENV_VALUE = 'distinctive-env-value-5252';
// A stand-in runtime: reads its prompt, prints nothing, ends well. Its processes are recorded too.
const world = useDaemonWorld({
  name: 'sdk-process-records-',
  token: TOKEN,
  runtime: '#!/bin/sh\ncat > /dev/null\nexit 0\n',
  recordAgentProcesses: true,
});
const { records } = world;

const { call } = world;

/** Runs `cmd` through `POST /v1/processes?stream=true` and returns its start and end records. */
async function run(cmd: string, envs: Record<string, string> = {}): Promise<DaemonRecord[]> {
  const res = await call('POST', '/v1/processes?stream=true', { cmd, envs });
  const lines = (await res.text()).split('\n').filter((line) => line !== '');
  const { pid } = JSON.parse(lines[0] ?? '{}') as { pid: number };
  await expect.poll(() => records().filter((r) => r.type === 'process' && r.pid === pid)).toHaveLength(2);
  return records().filter((r) => r.type === 'process' && r.pid === pid);
}

describe('process records of commands', () => {
  it('carry the command line at the start and the exit code at the end, never output or environment', async () => {
    const cmd = "printf 'out-%s' 424242; exit 3";
    const [start, end] = await run(cmd, { NOTE: ENV_VALUE });
    expect(start).toMatchObject({ type: 'process', event: 'start', command: cmd });
    expect(end).toMatchObject({ type: 'process', event: 'end', exitCode: 3, signal: null });
    expect(start).not.toHaveProperty('exitCode');
    expect(end).not.toHaveProperty('command');
    const text = JSON.stringify(records());
    expect(text).not.toContain('out-424242');
    expect(text).not.toContain(ENV_VALUE);
  });

  it('carry the signal that ended a command', async () => {
    const [, end] = await run('kill -TERM $$');
    expect(end).toMatchObject({ event: 'end', exitCode: null, signal: 'SIGTERM' });
  });

  it('cut a long command line to MAX_RECORD_TEXT characters ending with …', async () => {
    const cmd = `true ${'a'.repeat(2 * MAX_RECORD_TEXT)}`;
    const [start] = await run(cmd);
    const command = start?.type === 'process' ? (start.command ?? '') : '';
    expect(command).toHaveLength(MAX_RECORD_TEXT);
    expect(command).toBe(`${cmd.slice(0, MAX_RECORD_TEXT - 1)}…`);
    const exact = `true ${'b'.repeat(MAX_RECORD_TEXT - 5)}`;
    expect((await run(exact))[0]).toMatchObject({ command: exact });
  });

  it('never cut a character in two', () => {
    const cmd = `${'x'.repeat(MAX_RECORD_TEXT - 2)}😀 tail`;
    const record = processRecord(7, cmd, { type: 'start', pid: 7 });
    expect(record).toMatchObject({ command: `${'x'.repeat(MAX_RECORD_TEXT - 2)}…` });
  });
});

describe('process records of the agent', () => {
  it("carry the runtime's command line, never its prompt or environment, and how it ended", async () => {
    // ENV_VALUE is in the runtime's environment only (its configuration, OPENCODE_CONFIG_CONTENT).
    const body = agentRequestBody({ smallModel: ENV_VALUE });
    const { hash } = body;
    const configured = await call('PUT', '/v1/agent/config', body);
    expect(configured.status).toBe(200);
    const started = await call('POST', '/v1/agent/executions', {
      runtime: 'runtime_a',
      configHash: hash,
      model: 'model-y',
      limits: { timeoutMs: 30_000, maxSteps: 5, maxTotalTokens: null, maxOutputBytes: 1 << 20 },
      workdir: world.dir,
      reasoning: false,
    });
    expect(started.status).toBe(200);
    const { executionId } = (await started.json()) as { executionId: string };
    const answer = await call('POST', `/v1/agent/executions/${executionId}/prompt`, PROMPT);
    expect(answer.status).toBe(200);
    await answer.text(); // the stream ends with the execution
    const runtime = records().filter((r) => r.type === 'process' && r.command?.includes('opencode'));
    expect(runtime).toHaveLength(1);
    const pid = runtime[0]?.type === 'process' ? runtime[0].pid : 0;
    const binary = join(world.dir, 'agents', 'bin', 'opencode');
    expect(runtime[0]?.type === 'process' && runtime[0].command).toBe(
      `exec '${binary}' 'run' '--format' 'json' '--title' 'sdk agent run' '--model=gateway/model-y'`,
    );
    await expect
      .poll(() => records().find((r) => r.type === 'process' && r.pid === pid && r.event === 'end'))
      .toMatchObject({ exitCode: 0, signal: null });
    const all = JSON.stringify(records());
    expect(all).not.toContain(PROMPT);
    expect(all).not.toContain(ENV_VALUE);
    expect(all).not.toContain('OPENCODE_CONFIG_CONTENT');
  });
});
