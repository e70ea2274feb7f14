/**
 * runtime_b's runner as sandboxd starts it, on the host (`runner-world.ts`): a run that writes a real
 * file, the file tools, a second run in the same home, and every provider through its base path. What
 * it prints is the NDJSON contract of templates/README.md, every line of which the runtime_b parser
 * accepts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatToolNames, text, toolCall } from '../../support/model-server/index.js';
import {
  FULL_USAGE,
  NO_CACHE_WRITE,
  NO_REASONING,
  USAGE,
  config,
  modelConfig,
  requests,
  roles,
  runRunner,
  runnerDirs,
  toolCalls,
  types,
  useRunnerWorld,
  type Json,
  type Provider,
} from './runner-world.js';

useRunnerWorld();

describe('runtime_b runner', () => {
  it('compatible: a bash call writes a real file, then text; usage streamed and made disjoint', async () => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner('compatible (cold)', {
      home,
      config: config(workdir),
      script: [
        toolCall('execute', { command: 'echo hello > made.txt && echo written' }, { usage: USAGE }),
        text('All done.', USAGE),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'made.txt'), 'utf8')).toBe('hello\n');
    const usage = { input: 100, output: 4, reasoning: 3, cacheRead: 20, cacheWrite: 0, total: 127 };
    expect(run.events[0]).toEqual({
      type: 'session',
      sessionId: expect.stringMatching(/^rda_[0-9a-f]{32}$/) as unknown,
    });
    expect(run.events.slice(1)).toEqual([
      { type: 'step_started' },
      { type: 'step_finished', usage },
      {
        type: 'tool_call',
        name: 'bash',
        status: 'completed',
        input: { command: 'echo hello > made.txt && echo written' },
        output: 'written\n\n[Command succeeded with exit code 0]',
      },
      { type: 'step_started' },
      { type: 'text_delta', text: 'All ' },
      { type: 'text_delta', text: 'done.' },
      { type: 'text', text: 'All done.' },
      { type: 'step_finished', usage },
    ]);
    const [first, second] = requests();
    expect(first?.path).toBe('/v1/chat/completions');
    expect((first?.body as Json).stream_options).toEqual({ include_usage: true });
    expect(first?.credentials).toEqual({ authorization: 'expected' });
    expect(roles(first)).toEqual(['system', 'user']);
    expect(chatToolNames(first).sort()).toEqual(
      [
        'delete',
        'edit_file',
        'execute',
        'glob',
        'grep',
        'ls',
        'read_file',
        'task',
        'write_file',
        'write_todos',
      ].sort(),
    );
    expect(roles(second)).toEqual(['system', 'user', 'assistant', 'tool']);
    // Nothing but the checkpoints (and Node's compile cache) in the home.
    expect(existsSync(join(home, '.local', 'share', 'sdk-runtime-b', 'checkpoints.db'))).toBe(true);
  });

  it('the file tools and bash see one filesystem: absolute paths are real, relative ones under workdir', async () => {
    const { home, workdir } = runnerDirs();
    const absolute = join(workdir, 'dir', 'a.txt');
    const outside = join(home, 'outside.txt');
    const run = await runRunner('file tools', {
      home,
      config: config(workdir),
      script: [
        toolCall('write_file', { file_path: absolute, content: 'hello world\n' }),
        toolCall('edit_file', { file_path: absolute, old_string: 'world', new_string: 'there' }),
        toolCall('read_file', { file_path: absolute }),
        toolCall('write_file', { file_path: 'rel/b.txt', content: 'relative hello\n' }),
        toolCall('write_file', { file_path: outside, content: 'beside the workdir\n' }),
        toolCall('execute', { command: `cat ${absolute} rel/b.txt ${outside}` }),
        toolCall('grep', { pattern: 'hello' }),
        toolCall('grep', { pattern: 'beside', path: home }),
        toolCall('glob', { pattern: '**/*.txt' }),
        toolCall('ls', { path: join(workdir, 'dir') }),
        toolCall('ls', {}),
        // deepagents keeps a large result at /large_tool_results/<id>.txt: under the working directory.
        toolCall('execute', { command: 'seq 1 17000' }, { id: 'call_big' }),
        toolCall('read_file', { file_path: '/large_tool_results/call_big.txt', offset: 16990, limit: 5 }),
        toolCall('write_todos', { todos: [{ content: 'check', status: 'completed' }] }),
        text('Done.'),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(absolute, 'utf8')).toBe('hello there\n');
    expect(readFileSync(join(workdir, 'rel', 'b.txt'), 'utf8')).toBe('relative hello\n');
    expect(readFileSync(outside, 'utf8')).toBe('beside the workdir\n');
    // Not a second tree under the working directory, as a virtual root would make.
    expect(existsSync(join(workdir, home.slice(1)))).toBe(false);
    expect(existsSync(join(workdir, workdir.slice(1)))).toBe(false);
    const calls = toolCalls(run);
    expect(calls.map((call) => [call.name, call.status])).toEqual([
      ['edit', 'completed'],
      ['edit', 'completed'],
      ['read', 'completed'],
      ['edit', 'completed'],
      ['edit', 'completed'],
      ['bash', 'completed'],
      ['grep', 'completed'],
      ['grep', 'completed'],
      ['glob', 'completed'],
      ['list', 'completed'],
      ['list', 'completed'],
      ['bash', 'completed'],
      ['read', 'completed'],
      ['todowrite', 'completed'],
    ]);
    expect(calls[2]?.output).toContain('hello there');
    expect(calls[5]?.output).toContain('hello there\nrelative hello\nbeside the workdir\n');
    // Without a path, grep, glob and ls look in the working directory and name real paths.
    expect(calls[6]?.output).toContain(absolute);
    expect(calls[6]?.output).toContain(join(workdir, 'rel', 'b.txt'));
    expect(calls[6]?.output).not.toContain(outside);
    expect(calls[7]?.output).toContain(outside);
    expect(calls[8]?.output).toContain(absolute);
    expect(calls[8]?.output).toContain(join(workdir, 'rel', 'b.txt'));
    expect(calls[9]?.output).toContain(absolute);
    expect(calls[10]?.output).toContain(`${join(workdir, 'dir')}/`);
    expect(readFileSync(join(workdir, 'large_tool_results', 'call_big.txt'), 'utf8')).toContain('\n17000\n');
    expect(calls[12]?.output).toContain('16995');
  });

  it('runs again in a home whose compile cache an earlier run left', async () => {
    const { home, workdir } = runnerDirs();
    for (const round of [1, 2, 3]) {
      const run = await runRunner(`compatible (warm ${String(round)})`, {
        home,
        config: config(workdir),
        script: [text('ok', USAGE)],
      });
      expect(run.code, run.stderr).toBe(0);
    }
  });

  // Each provider through its base path: a bash call and a text, with the placeholder as the only key,
  // and the usage each wire can carry made disjoint (LangChain's own sums put right).
  const PROVIDER_CASES: readonly {
    provider: Provider;
    id: string;
    path: string;
    credentials: Record<string, 'expected'>;
    usage: Json;
  }[] = [
    {
      provider: 'vendor_a',
      id: 'vendor-a.model-v1:0',
      path: '/model/vendor-a.model-v1%3A0/converse-stream',
      credentials: { authorization: 'expected' },
      usage: NO_REASONING,
    },
    {
      provider: 'vendor_b',
      id: 'model-b',
      path: '/v1/messages',
      credentials: { 'x-api-key': 'expected' },
      usage: NO_REASONING,
    },
    {
      provider: 'vendor_c',
      id: 'model-c',
      path: '/v1/responses',
      credentials: { authorization: 'expected' },
      usage: NO_CACHE_WRITE,
    },
    {
      provider: 'vendor_d',
      id: 'model-d',
      path: '/v1beta/models/model-d:streamGenerateContent',
      credentials: { 'x-goog-api-key': 'expected' },
      usage: NO_CACHE_WRITE,
    },
    {
      provider: 'vendor_e',
      id: 'model-e',
      path: '/vendor_c/v1/responses',
      credentials: { authorization: 'expected', 'api-key': 'expected' },
      usage: NO_CACHE_WRITE,
    },
    {
      provider: 'compatible',
      id: 'model-f',
      path: '/v1/chat/completions',
      credentials: { authorization: 'expected' },
      usage: NO_CACHE_WRITE,
    },
  ];

  it.each(PROVIDER_CASES)('$provider reaches $path', async ({ provider, id, path, credentials, usage }) => {
    const { home, workdir } = runnerDirs();
    const run = await runRunner(provider, {
      home,
      config: config(workdir, { model: modelConfig(provider, id) }),
      script: [
        toolCall('execute', { command: `echo ${provider} > made.txt` }, { usage: FULL_USAGE }),
        text('Done.', FULL_USAGE),
      ],
    });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(workdir, 'made.txt'), 'utf8')).toBe(`${provider}\n`);
    expect(requests().map((request) => request.path)).toEqual([path, path]);
    for (const request of requests()) expect(request.credentials).toEqual(credentials);
    expect(types(run)).toEqual([
      'session',
      'step_started',
      'step_finished',
      'tool_call',
      'step_started',
      ...types(run).slice(5, -2),
      'text',
      'step_finished',
    ]);
    expect(run.events.at(-2)).toEqual({ type: 'text', text: 'Done.' });
    expect(toolCalls(run)).toEqual([
      expect.objectContaining({
        name: 'bash',
        status: 'completed',
        input: { command: `echo ${provider} > made.txt` },
      }),
    ]);
    expect(run.events.filter((event) => event.type === 'step_finished')).toEqual([
      { type: 'step_finished', usage },
      { type: 'step_finished', usage },
    ]);
  });
});
