/**
 * Run by checkpointer.test.ts with the template's Node 24 (`node:sqlite` is not in the host's Node 20):
 * exercises the built runner's `NodeSqliteSaver` and prints what it saw as one JSON line.
 *
 * Arguments: the built `runtime-b` folder, a database path.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [runtimeB, database] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(runtimeB, path)).href);
const { NodeSqliteSaver } = await load('checkpointer.mjs');
const { emptyCheckpoint, uuid6 } = await load('node_modules/@langchain/langgraph-checkpoint/dist/index.js');

const thread = (extra = {}) => ({ configurable: { thread_id: 't1', checkpoint_ns: '', ...extra } });
const ids = async (iterator) => {
  const out = [];
  for await (const tuple of iterator) out.push(tuple.config.configurable.checkpoint_id);
  return out;
};

const saver = new NodeSqliteSaver(database);
const first = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: ['hello'] } };
const second = { ...emptyCheckpoint(), id: uuid6(-1), channel_values: { messages: ['hello', 'there'] } };
const firstConfig = await saver.put(thread(), first, { source: 'input', step: -1, parents: {} });
const secondConfig = await saver.put(thread({ checkpoint_id: first.id }), second, {
  source: 'loop',
  step: 0,
  parents: {},
});
await saver.put({ configurable: { thread_id: 't2', checkpoint_ns: '' } }, first, {
  source: 'input',
  step: -1,
  parents: {},
});
const at = thread({ checkpoint_id: second.id });
await saver.putWrites(
  at,
  [
    ['b', 2],
    ['a', 1],
  ],
  'task2',
  'path~2',
);
await saver.putWrites(at, [['x', 0]], 'task1', 'path~1');
await saver.putWrites(at, [['x', 99]], 'task1', 'path~1'); // a regular write never replaces
await saver.putWrites(at, [['__error__', 'first error']], 'task1', 'path~1');
await saver.putWrites(at, [['__error__', 'second error']], 'task1', 'path~1'); // a special one does
saver.close();

// Another process, the same file.
const again = new NodeSqliteSaver(database);
const latest = await again.getTuple(thread());
const byId = await again.getTuple(thread({ checkpoint_id: first.id }));
const result = {
  ids: { first: first.id, second: second.id },
  putConfigs: [firstConfig, secondConfig],
  latest: {
    config: latest.config,
    parentConfig: latest.parentConfig,
    values: latest.checkpoint.channel_values,
    metadata: latest.metadata,
    pendingWrites: latest.pendingWrites,
  },
  byId: {
    config: byId.config,
    parentConfig: byId.parentConfig ?? null,
    values: byId.checkpoint.channel_values,
  },
  missing: (await again.getTuple({ configurable: { thread_id: 'nobody' } })) ?? null,
  list: await ids(again.list(thread())),
  listLimit: await ids(again.list(thread(), { limit: 1 })),
  listBefore: await ids(again.list(thread(), { before: thread({ checkpoint_id: second.id }) })),
  listInput: await ids(again.list(thread(), { filter: { source: 'input' } })),
  listStep: await ids(again.list(thread(), { filter: { step: 0 } })),
  listAll: (await ids(again.list({ configurable: {} }))).length,
};
await again.deleteThread('t1');
result.afterDelete = {
  tuple: (await again.getTuple(thread())) ?? null,
  list: await ids(again.list(thread())),
};
result.otherThread = (
  await again.getTuple({ configurable: { thread_id: 't2', checkpoint_ns: '' } })
)?.checkpoint.id;
again.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
