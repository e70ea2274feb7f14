/**
 * runtime_b's runner (`runner-world.ts`): sessions continued by a second process, permissions as
 * middleware (bash patterns included), subagents, and entrypoints with and without the middleware.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatToolNames, text, toolCall } from '../../support/model-server/index.js';
import {
  config,
  requests,
  roles,
  runRunner,
  runnerDirs,
  toolCalls,
  types,
  useRunnerWorld,
} from './runner-world.js';

useRunnerWorld();

describe('runtime_b runner: sessions, permissions, subagents, entrypoints', () => {
  it('continues a session in a second process: the second request carries the first conversation', async () => {
    const { home, workdir } = runnerDirs();
    const sessionId = `rda_${'0123456789abcdef'.repeat(2)}`;
    const first = await runRunner('session, first', {
      home,
      config: config(workdir, { sessionId }),
      prompt: 'first prompt',
      script: [toolCall('execute', { command: 'echo one > one.txt' }), text('First answer.')],
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.events[0]).toEqual({ type: 'session', sessionId });
    const second = await runRunner('session, second', {
      home,
      config: config(workdir, { sessionId }),
      prompt: 'second prompt',
      script: [text('Second answer.')],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(second.events[0]).toEqual({ type: 'session', sessionId });
    const [request] = requests();
    expect(roles(request)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    const messages = (request?.body as { messages: { content: unknown }[] }).messages;
    expect(JSON.stringify(messages)).toContain('first prompt');
    expect(JSON.stringify(messages)).toContain('First answer.');
    expect(messages.at(-1)?.content).toBe('second prompt');
  });

  it('permissions: a denied bash is not offered, and a call to it is refused', async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('bash denied', {
      home,
      config: config(workdir, {
        permissions: { default: 'allow', tools: { bash: 'deny', todowrite: 'deny' } },
      }),
      script: [toolCall('execute', { command: 'echo no > denied.txt' }), text('Could not.')],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(workdir, 'denied.txt'))).toBe(false);
    expect(chatToolNames(requests()[0])).not.toContain('execute');
    expect(chatToolNames(requests()[0])).not.toContain('write_todos');
    expect(chatToolNames(requests()[0])).toContain('read_file');
    expect(toolCalls(run)).toEqual([
      {
        type: 'tool_call',
        name: 'bash',
        status: 'error',
        input: { command: 'echo no > denied.txt' },
        output: 'permission denied: the bash tool is not allowed',
      },
    ]);
  });

  it('permissions: bash patterns, last match wins, the default when none matches', async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('bash patterns', {
      home,
      config: config(workdir, {
        permissions: {
          default: 'deny',
          tools: { read: 'allow', bash: { '*': 'deny', 'echo *': 'allow', 'echo secret*': 'deny' } },
        },
      }),
      script: [
        toolCall('execute', { command: 'echo fine > fine.txt' }),
        toolCall('execute', { command: 'echo secret > secret.txt' }),
        toolCall('execute', { command: 'touch other.txt' }),
        toolCall('ls', { path: '/' }),
        text('Done.'),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(workdir, 'fine.txt'))).toBe(true);
    expect(existsSync(join(workdir, 'secret.txt'))).toBe(false);
    expect(existsSync(join(workdir, 'other.txt'))).toBe(false);
    // default deny: only read and bash are offered.
    expect(chatToolNames(requests()[0]).sort()).toEqual(['execute', 'read_file']);
    expect(toolCalls(run).map((call) => [call.name, call.status])).toEqual([
      ['bash', 'completed'],
      ['bash', 'error'],
      ['bash', 'error'],
      ['list', 'error'],
    ]);
  });

  it('subagents from the configuration, with permissions of their own; their text stays in the task output', async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('subagent', {
      home,
      config: config(workdir, {
        subagents: {
          reviewer: {
            description: 'Reviews changes.',
            instructions: 'REVIEWER PROMPT.',
            permissions: { default: 'allow', tools: { bash: 'deny' } },
          },
        },
      }),
      script: [
        toolCall('task', { description: 'review it', subagent_type: 'reviewer' }),
        toolCall('execute', { command: 'echo sub > sub.txt' }),
        text('Reviewed: fine.'),
        toolCall('execute', { command: 'echo main > main.txt' }),
        text('All done.'),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    const [, subFirst] = requests();
    const system = (subFirst?.body as { messages: { role: string; content: unknown }[] }).messages[0];
    expect(JSON.stringify(system?.content)).toContain('REVIEWER PROMPT.');
    expect(chatToolNames(requests()[0])).toContain('execute');
    expect(chatToolNames(subFirst)).not.toContain('execute');
    expect(existsSync(join(workdir, 'sub.txt'))).toBe(false);
    expect(existsSync(join(workdir, 'main.txt'))).toBe(true);
    expect(toolCalls(run).map((call) => [call.name, call.status, call.output])).toEqual([
      ['bash', 'error', 'permission denied: the bash tool is not allowed'],
      ['task', 'completed', 'Reviewed: fine.'],
      ['bash', 'completed', '<no output>\n[Command succeeded with exit code 0]'],
    ]);
    expect(run.events.filter((event) => event.type === 'text')).toEqual([
      { type: 'text', text: 'All done.' },
    ]);
    expect(types(run).filter((type) => type === 'step_started')).toHaveLength(5);
  });

  const ENTRYPOINT = (withMiddleware: boolean): string => `
import { createDeepAgent } from 'deepagents';
export async function build(context) {
  if (typeof context.workdir !== 'string' || typeof context.checkpointer?.put !== 'function') throw new Error('bad context');
  return createDeepAgent({
    model: context.model,
    systemPrompt: 'ENTRYPOINT PROMPT. ' + context.instructions,
    backend: context.backend,
    subagents: context.subagents,
    middleware: ${withMiddleware ? '[context.permissionMiddleware]' : '[]'},
    checkpointer: context.checkpointer,
  });
}
`;

  it.each([
    [true, false],
    [false, true],
  ])(
    'an entrypoint builds the graph (with the middleware: %s, bash runs despite a deny: %s)',
    async (withMiddleware, ran) => {
      const { home, workdir } = runnerDirs();
      mkdirSync(join(workdir, 'agent'));
      writeFileSync(join(workdir, 'agent', 'graph.mjs'), ENTRYPOINT(withMiddleware));
      const run = await runRunner(`entrypoint (middleware ${String(withMiddleware)})`, {
        home,
        config: config(workdir, {
          entrypoint: 'agent.graph:build',
          permissions: { default: 'allow', tools: { bash: 'deny' } },
        }),
        script: [toolCall('execute', { command: 'echo ran > ran.txt' }), text('Done.')],
      });
      expect(run.code, run.stderr).toBe(0);
      const system = (requests()[0]?.body as { messages: { role: string; content: unknown }[] }).messages[0];
      expect(JSON.stringify(system?.content)).toContain('ENTRYPOINT PROMPT.');
      expect(existsSync(join(workdir, 'ran.txt'))).toBe(ran);
      expect(toolCalls(run).map((call) => call.status)).toEqual([ran ? 'completed' : 'error']);
    },
  );

  it('an entrypoint graph compiled without a checkpointer still keeps its session', async () => {
    const { home, workdir } = runnerDirs();
    mkdirSync(join(workdir, 'agent'));
    writeFileSync(
      join(workdir, 'agent', 'bare.mjs'),
      [
        "import { createDeepAgent } from 'deepagents';",
        'export const build = ({ model, instructions, backend, permissionMiddleware }) =>',
        '  createDeepAgent({ model, systemPrompt: instructions, backend, middleware: [permissionMiddleware] });',
        '',
      ].join('\n'),
    );
    const sessionId = `rda_${'fedcba9876543210'.repeat(2)}`;
    const entry = { entrypoint: 'agent.bare:build', sessionId };
    const first = await runRunner('entrypoint session, first', {
      home,
      config: config(workdir, entry),
      prompt: 'remember this',
      script: [text('Remembered.')],
    });
    expect(first.code, first.stderr).toBe(0);
    const second = await runRunner('entrypoint session, second', {
      home,
      config: config(workdir, entry),
      prompt: 'what was it?',
      script: [text('This.')],
    });
    expect(second.code, second.stderr).toBe(0);
    expect(roles(requests()[0])).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('an entrypoint that is not there fails with EntrypointError', async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('entrypoint missing', {
      home,
      config: config(workdir, { entrypoint: 'nowhere.graph:build' }),
      script: [],
    });
    expect(run.code).toBe(1);
    expect(run.events.slice(1)).toEqual([{ type: 'error', name: 'EntrypointError', statusCode: null }]);
    expect(requests()).toEqual([]);
  });
});
