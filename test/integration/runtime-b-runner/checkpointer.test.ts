/**
 * The runner's checkpointer (`runtime-drivers/runtime-b/runner/checkpointer.mjs`, on `node:sqlite`) keeps
 * the semantics of `@langchain/langgraph-checkpoint-sqlite`: run in the built template's Node 24 by
 * `checkpointer-probe.mjs`, since the host's Node 20 has no `node:sqlite`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const AGENTS = resolve(import.meta.dirname, '../../../templates/sdk-agent/build/opt-agents');
const NODE = join(AGENTS, 'node', 'bin', 'node');
const dir = mkdtempSync(join(tmpdir(), 'rb-checkpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface ProbeResult {
  ids: { first: string; second: string };
  putConfigs: unknown[];
  latest: {
    config: unknown;
    parentConfig: unknown;
    values: unknown;
    metadata: unknown;
    pendingWrites: unknown[];
  };
  byId: { config: unknown; parentConfig: unknown; values: unknown };
  missing: unknown;
  list: string[];
  listLimit: string[];
  listBefore: string[];
  listInput: string[];
  listStep: string[];
  listAll: number;
  afterDelete: { tuple: unknown; list: string[] };
  otherThread: string;
}

describe('NodeSqliteSaver', () => {
  it('saves, finds, lists and deletes as the SQLite checkpointer does, across processes', () => {
    if (!existsSync(NODE)) throw new Error(`${NODE} is missing: run npm run template:agent first`);
    const output = execFileSync(
      NODE,
      [join(import.meta.dirname, 'checkpointer-probe.mjs'), join(AGENTS, 'runtime-b'), join(dir, 'c.db')],
      { encoding: 'utf8' },
    );
    const result = JSON.parse(output) as ProbeResult;
    const { first, second } = result.ids;
    const config = (id: string): unknown => ({
      configurable: { thread_id: 't1', checkpoint_ns: '', checkpoint_id: id },
    });
    expect(result.putConfigs).toEqual([config(first), config(second)]);
    expect(result.latest).toEqual({
      config: config(second),
      parentConfig: config(first),
      values: { messages: ['hello', 'there'] },
      metadata: { source: 'loop', step: 0, parents: {} },
      // writesSortKey order (task path, task id, index); the error at its fixed index -1, replaced.
      pendingWrites: [
        ['task1', '__error__', 'second error'],
        ['task1', 'x', 0],
        ['task2', 'b', 2],
        ['task2', 'a', 1],
      ],
    });
    expect(result.byId).toEqual({
      config: config(first),
      parentConfig: null,
      values: { messages: ['hello'] },
    });
    expect(result.missing).toBeNull();
    expect(result.list).toEqual([second, first]);
    expect(result.listLimit).toEqual([second]);
    expect(result.listBefore).toEqual([first]);
    expect(result.listInput).toEqual([first]);
    expect(result.listStep).toEqual([second]);
    expect(result.listAll).toBe(3);
    expect(result.afterDelete).toEqual({ tuple: null, list: [] });
    expect(result.otherThread).toBe(first);
  });
});
