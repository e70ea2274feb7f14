/**
 * A durable LangGraph checkpointer on Node 24's built-in `node:sqlite` (no native module to build): the
 * same tables and semantics as `@langchain/langgraph-checkpoint-sqlite` 1.0.4's `SqliteSaver` (written
 * anew here), so a thread saved by one runner process is continued by the next.
 *
 * - `checkpoints(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
 *   metadata)`, key (thread_id, checkpoint_ns, checkpoint_id); the latest checkpoint of a thread is the
 *   greatest id (ids are uuid6, ordered by time).
 * - `writes(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path)`, key
 *   (thread_id, checkpoint_ns, checkpoint_id, task_id, idx). Special channels (error, scheduled,
 *   interrupt, resume) sit at their fixed negative `idx` (`WRITES_IDX_MAP`) and replace what is there;
 *   other writes never replace a stored one. Pending writes come back in `writesSortKey` order (task
 *   path, task id, idx), the order live execution applies them in.
 * - A checkpoint older than format 4 gets its parent's pending sends back (`migratePendingSends`).
 */
import { DatabaseSync } from 'node:sqlite';
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';

/** Metadata keys `list({ filter })` compares (those of `CheckpointMetadata`); others are ignored. */
const METADATA_KEYS = ['source', 'step', 'parents'];

const SCHEMA = `
CREATE TABLE IF NOT EXISTS checkpoints (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type TEXT,
  checkpoint BLOB,
  metadata BLOB,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS writes (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  channel TEXT NOT NULL,
  type TEXT,
  value BLOB,
  task_path TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);`;

/** Deep equality of JSON-like values (metadata filters: `parents` is an object). */
function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
}

export class NodeSqliteSaver extends BaseCheckpointSaver {
  /** @type {DatabaseSync} */
  #db;

  /**
   * @param {string} path - the database file (created when missing), or `:memory:`
   * @param {import('@langchain/langgraph-checkpoint').SerializerProtocol} [serde]
   */
  constructor(path, serde) {
    super(serde);
    this.#db = new DatabaseSync(path, { timeout: 5000 });
    this.#db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;');
    this.#db.exec(SCHEMA);
  }

  /** Closes the database (further calls throw). */
  close() {
    if (this.#db.isOpen) this.#db.close();
  }

  /** Runs `fn` in one transaction (all or nothing). */
  #transaction(fn) {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      fn();
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** The pending writes stored against one checkpoint, deserialized, in `writesSortKey` order. */
  async #pendingWrites(threadId, ns, checkpointId) {
    const rows = this.#db
      .prepare(
        'SELECT task_id, idx, channel, type, value, task_path FROM writes ' +
          'WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?',
      )
      .all(threadId, ns, checkpointId);
    rows.sort((a, b) =>
      compareWritesSortKeys(
        writesSortKey(a.task_path, a.task_id, Number(a.idx)),
        writesSortKey(b.task_path, b.task_id, Number(b.idx)),
      ),
    );
    return Promise.all(
      rows.map(async (row) => [
        row.task_id,
        row.channel,
        await this.serde.loadsTyped(row.type ?? 'json', row.value ?? ''),
      ]),
    );
  }

  /** Puts the parent's pending sends into a checkpoint of a format before 4. */
  async #migratePendingSends(checkpoint, threadId, ns, parentId) {
    const rows = this.#db
      .prepare(
        'SELECT type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? ' +
          'AND channel = ? ORDER BY task_path, task_id, idx',
      )
      .all(threadId, ns, parentId, TASKS);
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = await Promise.all(
      rows.map((row) => this.serde.loadsTyped(row.type ?? 'json', row.value)),
    );
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** A stored checkpoint row as a `CheckpointTuple`. */
  async #tuple(row, config) {
    const ns = row.checkpoint_ns;
    const checkpoint = await this.serde.loadsTyped(row.type ?? 'json', row.checkpoint);
    if (checkpoint.v < 4 && row.parent_checkpoint_id != null) {
      await this.#migratePendingSends(checkpoint, row.thread_id, ns, row.parent_checkpoint_id);
    }
    const tuple = {
      config,
      checkpoint,
      metadata: await this.serde.loadsTyped(row.type ?? 'json', row.metadata),
      pendingWrites: await this.#pendingWrites(row.thread_id, ns, row.checkpoint_id),
    };
    if (row.parent_checkpoint_id != null) {
      tuple.parentConfig = {
        configurable: {
          thread_id: row.thread_id,
          checkpoint_ns: ns,
          checkpoint_id: row.parent_checkpoint_id,
        },
      };
    }
    return tuple;
  }

  async getTuple(config) {
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns ?? '';
    const checkpointId = getCheckpointId(config);
    if (threadId === undefined || threadId === null) return undefined;
    const columns =
      'SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata ' +
      'FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?';
    const row = checkpointId
      ? this.#db.prepare(`${columns} AND checkpoint_id = ?`).get(String(threadId), ns, checkpointId)
      : this.#db.prepare(`${columns} ORDER BY checkpoint_id DESC LIMIT 1`).get(String(threadId), ns);
    if (row === undefined) return undefined;
    // Asked for the latest: the answer names the checkpoint it found.
    const found = checkpointId
      ? config
      : { configurable: { thread_id: row.thread_id, checkpoint_ns: ns, checkpoint_id: row.checkpoint_id } };
    return this.#tuple(row, found);
  }

  async *list(config, options = {}) {
    const { limit, before, filter } = options;
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns;
    const where = [];
    const args = [];
    if (threadId !== undefined && threadId !== null && threadId !== '') {
      where.push('thread_id = ?');
      args.push(String(threadId));
    }
    if (ns !== undefined && ns !== null) {
      where.push('checkpoint_ns = ?');
      args.push(ns);
    }
    const beforeId = before?.configurable?.checkpoint_id;
    if (beforeId !== undefined && beforeId !== null) {
      where.push('checkpoint_id < ?');
      args.push(beforeId);
    }
    const sql =
      'SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata ' +
      `FROM checkpoints ${where.length > 0 ? `WHERE ${where.join(' AND ')} ` : ''}ORDER BY checkpoint_id DESC`;
    const wanted = Object.entries(filter ?? {}).filter(
      ([key, value]) => value !== undefined && METADATA_KEYS.includes(key),
    );
    let left = limit === undefined || limit === null ? Infinity : Math.trunc(Number(limit));
    for (const row of this.#db.prepare(sql).all(...args)) {
      if (left <= 0) return;
      if (wanted.length > 0) {
        const metadata = await this.serde.loadsTyped(row.type ?? 'json', row.metadata);
        if (!wanted.every(([key, value]) => sameJson(metadata?.[key], value))) continue;
      }
      left -= 1;
      yield await this.#tuple(row, {
        configurable: {
          thread_id: row.thread_id,
          checkpoint_ns: row.checkpoint_ns,
          checkpoint_id: row.checkpoint_id,
        },
      });
    }
  }

  async put(config, checkpoint, metadata) {
    if (!config.configurable) throw new Error('Empty configuration supplied.');
    const threadId = config.configurable.thread_id;
    if (!threadId) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const ns = config.configurable.checkpoint_ns ?? '';
    const parentId = config.configurable.checkpoint_id;
    const [[checkpointType, checkpointValue], [metadataType, metadataValue]] = await Promise.all([
      this.serde.dumpsTyped(copyCheckpoint(checkpoint)),
      this.serde.dumpsTyped(metadata),
    ]);
    if (checkpointType !== metadataType) {
      throw new Error('Failed to serialize checkpoint and metadata to the same type.');
    }
    this.#db
      .prepare(
        'INSERT OR REPLACE INTO checkpoints ' +
          '(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        String(threadId),
        ns,
        checkpoint.id,
        parentId ?? null,
        checkpointType,
        checkpointValue,
        metadataValue,
      );
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config, writes, taskId, taskPath) {
    if (!config.configurable) throw new Error('Empty configuration supplied.');
    const { thread_id: threadId, checkpoint_id: checkpointId } = config.configurable;
    if (!threadId) throw new Error('Missing thread_id field in config.configurable.');
    if (!checkpointId) throw new Error('Missing checkpoint_id field in config.configurable.');
    const ns = config.configurable.checkpoint_ns ?? '';
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        return [
          String(threadId),
          ns,
          checkpointId,
          taskId,
          WRITES_IDX_MAP[channel] ?? idx,
          channel,
          type,
          serialized,
          taskPath ?? '',
        ];
      }),
    );
    // Only special channels may overwrite: a regular write never clobbers another task's stored one.
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const insert = this.#db.prepare(
      `INSERT ${special ? 'OR REPLACE' : 'OR IGNORE'} INTO writes ` +
        '(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#transaction(() => {
      for (const row of rows) insert.run(...row);
    });
  }

  async deleteThread(threadId) {
    this.#transaction(() => {
      this.#db.prepare('DELETE FROM checkpoints WHERE thread_id = ?').run(String(threadId));
      this.#db.prepare('DELETE FROM writes WHERE thread_id = ?').run(String(threadId));
    });
  }
}
