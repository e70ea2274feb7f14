/**
 * runtime_b's runner (`runner-world.ts`): failures reported by class and status only (the model's,
 * a subagent's, the configuration's), and reasoning events only when asked.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatus, toolCall } from '../../support/model-server/index.js';
import {
  config,
  modelOrigin,
  runRunner,
  runnerDirs,
  tempDir,
  toolCalls,
  useRunnerWorld,
  type Json,
} from './runner-world.js';

useRunnerWorld();

describe('runtime_b runner: failures', () => {
  it('a model error ends the run with the error class and status, never its message', async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('401', {
      home,
      config: config(workdir),
      script: [errorStatus(401, { message: 'vendor text that must not leak' })],
    });
    expect(run.code).toBe(1);
    expect(run.events.slice(1)).toEqual([
      { type: 'step_started' },
      { type: 'error', name: 'AuthenticationError', statusCode: 401 },
    ]);
    expect(run.stdout).not.toContain('vendor text');
  });

  it("a subagent's model error ends the run the same way, its message nowhere on stdout", async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('subagent 401', {
      home,
      config: config(workdir),
      script: [
        toolCall('task', { description: 'look', subagent_type: 'general-purpose' }),
        errorStatus(401, { message: 'vendor text that must not leak' }),
      ],
    });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('vendor text');
    expect(toolCalls(run)).toEqual([
      {
        type: 'tool_call',
        name: 'task',
        status: 'error',
        input: { description: 'look', subagent_type: 'general-purpose' },
        output: 'the tool failed',
      },
    ]);
    expect(run.events.at(-1)).toEqual({ type: 'error', name: 'AuthenticationError', statusCode: 401 });
  });

  it('a configuration it cannot use fails with ConfigError before anything else', async () => {
    const home = tempDir('rb-home-');
    const run = await runRunner('bad config', {
      home,
      config: { model: { provider: 'nobody', id: 'x', baseURL: modelOrigin() }, workdir: home },
    });
    expect(run.code).toBe(1);
    expect(run.events).toEqual([{ type: 'error', name: 'ConfigError', statusCode: null }]);
  });
});

describe('runtime_b runner reasoning', () => {
  /** A chat-completions stream with `reasoning_content` deltas (what compatible servers send). */
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: Json, finish: string | null = null): void => {
          const body = {
            id: 'chatcmpl-r1',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [{ index: 0, delta, finish_reason: finish }],
          };
          res.write(`data: ${JSON.stringify(body)}\n\n`);
        };
        chunk({ role: 'assistant', reasoning_content: 'Thinking ' });
        chunk({ reasoning_content: 'hard.' });
        chunk({ content: 'Answer.' });
        chunk({}, 'stop');
        res.end('data: [DONE]\n\n');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it.each([true, false])('reasoning: %s', async (reasoning) => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner(`reasoning ${String(reasoning)}`, {
      home,
      config: config(workdir, {
        reasoning,
        model: { provider: 'compatible', id: 'm', baseURL: `${origin}/v1` },
      }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.events.filter((event) => event.type === 'reasoning' || event.type === 'text')).toEqual([
      ...(reasoning ? [{ type: 'reasoning', text: 'Thinking hard.' }] : []),
      { type: 'text', text: 'Answer.' },
    ]);
  });
});
