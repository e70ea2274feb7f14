/**
 * What reaches opencode's command line and environment can never be a flag or change how a process
 * runs: session ids and models are checked on the wire and passed as `--name=value`; the configuration's
 * environment holds key variables only (the placeholder), never `LD_*` or `PATH`.
 */
import { describe, expect, it } from 'vitest';
import { runtimeACommand } from '../../../daemon/runtime-a-launch.js';
import { agentConfigSchema, startExecutionSchema } from '../../../protocol/agent-wire.js';
import { OPENCODE_PROVIDERS } from '../../../runtime-drivers/runtime-a/providers.js';

const START = {
  runtime: 'runtime_a',
  configHash: 'a'.repeat(64),
  limits: { timeoutMs: 1000, maxSteps: 5, maxTotalTokens: null, maxOutputBytes: 1000 },
  workdir: '/home/user',
  reasoning: false,
} as const;

describe('the runtime_a command line', () => {
  it('passes a session and a model as --name=value', () => {
    const cmd = runtimeACommand({ sessionId: 'ses_abc123', model: 'gateway/m-1', reasoning: true });
    expect(cmd).toBe(
      "exec '/opt/agents/bin/opencode' 'run' '--format' 'json' '--title' 'sdk agent run' '--model=gateway/m-1' '--session=ses_abc123' '--thinking'",
    );
  });

  it.each(['--auto', '-c', '--help', 'ses-1', 'ses_', `rda_${'g'.repeat(32)}`])(
    'refuses session id %s on the wire',
    (sessionId) => expect(startExecutionSchema.safeParse({ ...START, sessionId }).success).toBe(false),
  );

  it.each(['ses_AbC123', `rda_${'0a'.repeat(16)}`])('takes session id %s', (sessionId) =>
    expect(startExecutionSchema.safeParse({ ...START, sessionId }).success).toBe(true),
  );

  it('refuses a model that starts like a flag', () => {
    expect(startExecutionSchema.safeParse({ ...START, model: '--auto' }).success).toBe(false);
    expect(startExecutionSchema.safeParse({ ...START, model: 'gateway/model-2' }).success).toBe(true);
  });
});

describe("the configuration's environment", () => {
  const config = (env: Record<string, string>) =>
    agentConfigSchema.safeParse({ runtime: 'runtime_a', hash: 'b'.repeat(64), text: '{}', files: [], env });

  it("takes every provider's placeholder key variable", () => {
    for (const provider of Object.values(OPENCODE_PROVIDERS)) {
      if (provider.placeholderKeyEnv === undefined) continue;
      expect(config({ [provider.placeholderKeyEnv]: 'sdk-placeholder' }).success).toBe(true);
    }
  });

  it.each(['LD_PRELOAD', 'LD_LIBRARY_PATH', 'PATH', 'NODE_OPTIONS', 'GCONV_PATH', 'BASH_ENV'])(
    'refuses %s',
    (name) => expect(config({ [name]: '/tmp/x' }).success).toBe(false),
  );
});
