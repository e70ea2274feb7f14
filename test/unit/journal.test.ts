import { spawn } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  appendFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Journal,
  JournalBrokenError,
  JournalClosedError,
  JournalCompactionError,
  nodeJournalFiles,
  type JournalFiles,
} from '../../actors/journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-journal-'));
  dirs.push(dir);
  return join(dir, 'state', 'journal.jsonl');
}

type Operation = Exclude<keyof JournalFiles, 'openForAppend'>;

/** `nodeJournalFiles` with every call counted, and calls that can be held at a gate or made to fail. */
class TestFiles implements JournalFiles {
  readonly calls: Operation[] = [];
  /** What each `append` wrote, as text. */
  readonly writes: string[] = [];
  readonly #gates = new Map<Operation, Promise<void>>();
  readonly #failures = new Map<Operation, () => Error>();

  count(operation: Operation): number {
    return this.calls.filter((call) => call === operation).length;
  }

  /** Holds every call of `operation` until the returned function is called. */
  hold(operation: Operation): () => void {
    let release = (): void => undefined;
    this.#gates.set(
      operation,
      new Promise<void>((resolve) => {
        release = () => {
          this.#gates.delete(operation);
          resolve();
        };
      }),
    );
    return release;
  }

  /** Makes the next call of `operation` fail with `error()`, without making the real call. */
  failNext(operation: Operation, error: () => Error): void {
    this.#failures.set(operation, error);
  }

  /** Resolves once `operation` has been called `times` times in all. */
  async called(operation: Operation, times = 1): Promise<void> {
    for (let turns = 0; this.count(operation) < times; turns++) {
      if (turns > 10_000) throw new Error(`${operation} was not called ${String(times)} times`);
      await turn();
    }
  }

  async #enter(operation: Operation): Promise<void> {
    this.calls.push(operation);
    await this.#gates.get(operation);
    const failure = this.#failures.get(operation);
    if (failure !== undefined) {
      this.#failures.delete(operation);
      throw failure();
    }
  }

  openForAppend(path: string): number {
    return nodeJournalFiles.openForAppend(path);
  }
  async append(fd: number, data: Buffer): Promise<void> {
    await this.#enter('append');
    this.writes.push(data.toString());
    await nodeJournalFiles.append(fd, data);
  }
  async syncData(fd: number): Promise<void> {
    await this.#enter('syncData');
    await nodeJournalFiles.syncData(fd);
  }
  async create(path: string): Promise<number> {
    await this.#enter('create');
    return nodeJournalFiles.create(path);
  }
  async sync(fd: number): Promise<void> {
    await this.#enter('sync');
    await nodeJournalFiles.sync(fd);
  }
  async rename(from: string, to: string): Promise<void> {
    await this.#enter('rename');
    await nodeJournalFiles.rename(from, to);
  }
  async syncFolder(path: string): Promise<void> {
    await this.#enter('syncFolder');
    await nodeJournalFiles.syncFolder(path);
  }
  async close(fd: number): Promise<void> {
    await this.#enter('close');
    await nodeJournalFiles.close(fd);
  }
  async unlink(path: string): Promise<void> {
    await this.#enter('unlink');
    await nodeJournalFiles.unlink(path);
  }
}

const ioError = (code: string, syscall: string): Error =>
  Object.assign(new Error(`${code}: ${syscall}`), { code, syscall });

/** The settled outcome of a promise, for asserting on rejections without unhandled ones. */
const outcome = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );

/** The records a fresh open reads, the journal closed again. */
async function reopened<R>(path: string): Promise<readonly R[]> {
  const journal = Journal.open<R>(path);
  await journal.close();
  return journal.records;
}

interface N {
  n: number;
}
interface Snapshot {
  snapshot: string;
}

describe('journal', () => {
  it('keeps records across reopen, one JSON line each, readable by its owner only', async () => {
    const path = journalPath();
    const first = Journal.open<N>(path);
    await first.append({ n: 1 });
    await first.append({ n: 2 });
    expect(first.appendedSinceOpenOrCompaction).toBe(2);
    await first.close();
    const second = Journal.open<N>(path);
    expect(second.records).toEqual([{ n: 1 }, { n: 2 }]);
    expect(second.appendedSinceOpenOrCompaction).toBe(0);
    await second.close();
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('drops a torn last record (a crash mid-write) and keeps everything before it', async () => {
    const path = journalPath();
    const journal = Journal.open<N>(path);
    await journal.append({ n: 1 });
    await journal.close();
    appendFileSync(path, '{"n":2');
    const reopenedJournal = Journal.open<N>(path);
    expect(reopenedJournal.records).toEqual([{ n: 1 }]);
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
    await reopenedJournal.append({ n: 3 });
    await reopenedJournal.close();
    expect(await reopened(path)).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('drops everything from the first line that does not parse (zeros a crash left in the tail)', async () => {
    const path = journalPath();
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '{"n":1}\n\0\0\0\0\n{"n":3}\n');
    expect(await reopened(path)).toEqual([{ n: 1 }]);
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\n');
  });

  it('refuses to open a journal damaged in the middle rather than cut its durable records', () => {
    const path = journalPath();
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '{"n":1}\nnot a record\n{"n":3}\n');
    expect(() => Journal.open<N>(path)).toThrow(/line 2 is not a record/);
    expect(readFileSync(path, 'utf8')).toBe('{"n":1}\nnot a record\n{"n":3}\n');
  });

  it('writes the records appended in one tick with one write and one fdatasync, resolving them together, in order', async () => {
    const path = journalPath();
    const files = new TestFiles();
    const journal = Journal.open<N>(path, { files });
    const resolved: number[] = [];
    const appends: Promise<void>[] = [];
    for (let n = 0; n < 100; n++) appends.push(journal.append({ n }).then(() => void resolved.push(n)));
    // A microtask of the same tick is still this tick.
    await Promise.resolve();
    appends.push(journal.append({ n: 100 }).then(() => void resolved.push(100)));
    await Promise.all(appends);
    expect(files.count('append')).toBe(1);
    expect(files.count('syncData')).toBe(1);
    expect(resolved).toEqual([...Array(101).keys()]);
    expect(journal.appendedSinceOpenOrCompaction).toBe(101);

    // Each later tick whose appends are awaited is a batch of its own.
    for (let tick = 0; tick < 3; tick++) {
      await Promise.all([journal.append({ n: 200 + tick }), journal.append({ n: 300 + tick })]);
    }
    expect(files.count('append')).toBe(4);
    expect(files.count('syncData')).toBe(4);
    await journal.close();
    expect((await reopened<N>(path)).map((record) => record.n)).toEqual([
      ...Array(101).keys(),
      200,
      300,
      201,
      301,
      202,
      302,
    ]);
  });

  it('gathers the appends of the ticks that pass during an fdatasync into the next write', async () => {
    const path = journalPath();
    const files = new TestFiles();
    const journal = Journal.open<N>(path, { files });
    const resolved: number[] = [];
    const append = (n: number): Promise<void> => journal.append({ n }).then(() => void resolved.push(n));
    const release = files.hold('syncData');
    const first = append(1);
    await files.called('syncData');
    const later = [append(2), append(3)];
    await turn();
    later.push(append(4));
    await turn();
    expect(resolved).toEqual([]); // nothing is durable before its fdatasync returns
    release();
    await Promise.all([first, ...later]);
    expect(files.writes).toEqual(['{"n":1}\n', '{"n":2}\n{"n":3}\n{"n":4}\n']);
    expect(files.count('syncData')).toBe(2);
    expect(resolved).toEqual([1, 2, 3, 4]);
    await journal.close();
  });

  it.each([
    ['write', 'append', () => ioError('EIO', 'write')],
    ['fdatasync', 'syncData', () => ioError('ENOSPC', 'fdatasync')],
  ] as const)(
    'a failed %s rejects its whole batch and every later append: the journal says it is broken',
    async (_name, operation, error) => {
      const path = journalPath();
      const files = new TestFiles();
      const journal = Journal.open<N>(path, { files });
      await journal.append({ n: 1 });
      files.failNext(operation, error);
      const release = files.hold('append');
      const batch = [journal.append({ n: 2 }), journal.append({ n: 3 })].map(outcome);
      await files.called('append', 2);
      const queued = outcome(journal.append({ n: 4 })); // the next batch, waiting behind the failing one
      release();
      for (const result of [...(await Promise.all(batch)), await queued]) {
        expect(result).toBeInstanceOf(JournalBrokenError);
        expect(result).toMatchObject({ code: 'ERR_JOURNAL_BROKEN' });
        expect(String(result)).toMatch(/journal .* is broken/);
      }
      const later = await outcome(journal.append({ n: 5 }));
      expect(later).toBeInstanceOf(JournalBrokenError);
      expect(String(later)).toMatch(/broken: .*failed with (EIO|ENOSPC)/);
      expect(await outcome(journal.compact([]))).toBeInstanceOf(JournalBrokenError);
      expect(files.count('append')).toBe(2); // nothing written after the failure
      await journal.close();
      expect(await reopened(path)).toContainEqual({ n: 1 });
    },
  );

  it('a write on a descriptor the kernel refuses (closed under it) breaks the journal', async () => {
    const path = journalPath();
    const files: JournalFiles = {
      ...nodeJournalFiles,
      append: (fd, data) => {
        closeSync(fd);
        return nodeJournalFiles.append(fd, data);
      },
      close: () => Promise.resolve(),
    };
    const journal = Journal.open<N>(path, { files });
    const failed = await outcome(journal.append({ n: 1 }));
    expect(failed).toBeInstanceOf(JournalBrokenError);
    expect(String(failed)).toMatch(/write failed with EBADF/);
    expect(await outcome(journal.append({ n: 2 }))).toBeInstanceOf(JournalBrokenError);
    await journal.close();
  });

  it('rejects a record JSON cannot hold without harming the others', async () => {
    const path = journalPath();
    const journal = Journal.open<unknown>(path);
    const results = await Promise.all([
      outcome(journal.append({ n: 1 })),
      outcome(journal.append({ n: 10n })),
      outcome(journal.append(undefined)),
      outcome(journal.append({ n: 3 })),
    ]);
    expect(results[0]).toBe('resolved');
    expect(results[1]).toBeInstanceOf(TypeError);
    expect(results[2]).toBeInstanceOf(TypeError);
    expect(results[3]).toBe('resolved');
    await journal.close();
    expect(await reopened(path)).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('serializes a record when it is appended, not when it is written', async () => {
    const path = journalPath();
    const journal = Journal.open<N>(path);
    const record = { n: 1 };
    const appended = journal.append(record);
    record.n = 2;
    await appended;
    await journal.close();
    expect(await reopened(path)).toEqual([{ n: 1 }]);
  });

  it('compacts to the records given, atomically, owner-only, and counts appends from there', async () => {
    const path = journalPath();
    const files = new TestFiles();
    const journal = Journal.open<N | Snapshot>(path, { files });
    for (let n = 0; n < 5; n++) await journal.append({ n });
    expect(journal.appendedSinceOpenOrCompaction).toBe(5);
    await journal.compact([{ snapshot: 'a' }, { snapshot: 'b' }]);
    expect(files.calls.slice(-6)).toEqual(['create', 'append', 'sync', 'rename', 'syncFolder', 'close']);
    expect(journal.appendedSinceOpenOrCompaction).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('{"snapshot":"a"}\n{"snapshot":"b"}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dirname(path))).toEqual(['journal.jsonl']);
    await journal.append({ n: 5 });
    expect(journal.appendedSinceOpenOrCompaction).toBe(1);
    await journal.close();
    expect(await reopened(path)).toEqual([{ snapshot: 'a' }, { snapshot: 'b' }, { n: 5 }]);
  });

  it('keeps the appends under way and those made while it compacts, after the compacted records, in order', async () => {
    const path = journalPath();
    const files = new TestFiles();
    const journal = Journal.open<N | Snapshot>(path, { files });
    await journal.append({ n: 0 });
    const resolved: string[] = [];
    const append = (n: number): Promise<void> => journal.append({ n }).then(() => void resolved.push(`${n}`));

    const releaseBatch = files.hold('syncData');
    const inFlight = [append(1), append(2)];
    await files.called('syncData', 2); // 1 and 2 are written, not yet durable: the owner has not applied them
    const compaction = journal.compact([{ snapshot: 'up to 0' }]).then(() => void resolved.push('compacted'));
    const queued = append(3); // same tick as the compaction: waits for it
    const releaseCompaction = files.hold('sync');
    releaseBatch();
    await files.called('sync');
    const during = [append(4), append(5)];
    await turn();
    expect(resolved).toEqual(['1', '2']); // durable in the old file; the compaction carries them over
    releaseCompaction();
    await Promise.all([...inFlight, compaction, queued, ...during]);
    expect(resolved).toEqual(['1', '2', '3', 'compacted', '4', '5']);
    expect(journal.appendedSinceOpenOrCompaction).toBe(5);
    await journal.close();
    expect(await reopened(path)).toEqual([
      { snapshot: 'up to 0' },
      { n: 1 },
      { n: 2 },
      { n: 3 },
      { n: 4 },
      { n: 5 },
    ]);
  });

  it('runs one compaction for calls made before it starts, with the latest records', async () => {
    const path = journalPath();
    const files = new TestFiles();
    const journal = Journal.open<Snapshot>(path, { files });
    await Promise.all([journal.compact([{ snapshot: 'old' }]), journal.compact([{ snapshot: 'new' }])]);
    expect(files.count('create')).toBe(1);
    await journal.close();
    expect(await reopened(path)).toEqual([{ snapshot: 'new' }]);
  });

  it.each(['create', 'append', 'sync', 'rename'] as const)(
    'a compaction whose %s fails leaves the journal unchanged, and the appends held back go to it',
    async (operation) => {
      const path = journalPath();
      const files = new TestFiles();
      const journal = Journal.open<N | Snapshot>(path, { files });
      await journal.append({ n: 1 });
      files.failNext(operation, () => ioError('ENOSPC', operation));
      const compaction = outcome(journal.compact([{ snapshot: 'never' }]));
      const heldBack = journal.append({ n: 2 });
      const failure = await compaction;
      expect(failure).toBeInstanceOf(JournalCompactionError);
      expect(String(failure)).toMatch(/not compacted: .*ENOSPC; the journal is unchanged/);
      await heldBack;
      await journal.append({ n: 3 });
      expect(readdirSync(dirname(path))).toEqual(['journal.jsonl']); // the temporary file is gone
      await journal.close();
      expect(await reopened(path)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    },
  );

  it("a compaction whose folder fsync fails breaks the journal (the rename's fate is unknown)", async () => {
    const path = journalPath();
    const files = new TestFiles();
    const journal = Journal.open<N | Snapshot>(path, { files });
    await journal.append({ n: 1 });
    files.failNext('syncFolder', () => ioError('EIO', 'fsync'));
    const compaction = outcome(journal.compact([{ snapshot: 's' }]));
    const heldBack = outcome(journal.append({ n: 2 }));
    expect(await compaction).toBeInstanceOf(JournalBrokenError);
    expect(await heldBack).toBeInstanceOf(JournalBrokenError);
    expect(await outcome(journal.append({ n: 3 }))).toBeInstanceOf(JournalBrokenError);
    await journal.close();
    expect(files.count('close')).toBe(2); // the old file's descriptor and the new one's
  });

  it('close waits for the pending batch and the compaction, then refuses appends', async () => {
    const path = journalPath();
    const journal = Journal.open<N | Snapshot>(path);
    const pending = [
      journal.append({ n: 1 }),
      journal.compact([{ snapshot: 's' }]),
      journal.append({ n: 2 }),
    ];
    const closing = journal.close();
    expect(journal.close()).toBe(closing);
    const refused = await outcome(journal.append({ n: 3 }));
    expect(refused).toBeInstanceOf(JournalClosedError);
    expect(refused).toMatchObject({ code: 'ERR_JOURNAL_CLOSED' });
    expect(await outcome(journal.compact([]))).toBeInstanceOf(JournalClosedError);
    await closing;
    await Promise.all(pending);
    expect(await reopened(path)).toEqual([{ snapshot: 's' }, { n: 1 }, { n: 2 }]);
  });

  it('removes the files a compaction cut short left behind, when it opens', async () => {
    const path = journalPath();
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, '{"n":1}\n');
    writeFileSync(`${path}.compacting-123-1`, '{"snapshot":"half');
    writeFileSync(join(dirname(path), 'other.jsonl'), '');
    expect(await reopened(path)).toEqual([{ n: 1 }]);
    expect(readdirSync(dirname(path)).sort()).toEqual(['journal.jsonl', 'other.jsonl']);
  });

  it('holds every record whose append resolved in a process SIGKILLed mid-run, compactions included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-journal-kill-'));
    dirs.push(dir);
    // The fixture runs on plain Node: it gets the journal transpiled on its own.
    const source = readFileSync(fileURLToPath(new URL('../../actors/journal.ts', import.meta.url)), 'utf8');
    const module = join(dir, 'journal.mjs');
    writeFileSync(
      module,
      ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText,
    );
    const path = join(dir, 'state', 'journal.jsonl');
    const writer = fileURLToPath(new URL('../fixtures/journal-writer.mjs', import.meta.url));
    const child = spawn(process.execPath, [writer, pathToFileURL(module).href, path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        // Enough appends and compactions behind it: kill it wherever it is.
        if (/compacted 3\n/.test(output)) resolve();
      });
      child.on('exit', () => resolve());
    });
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const resolved = [...output.matchAll(/^(\d+)$/gm)].map((match) => Number(match[1]));
    expect(resolved.length).toBeGreaterThan(100);

    // Replay: a snapshot says how many records came before it; every event then follows the last one.
    let count = 0;
    const records = await reopened<{ upTo: number } | { n: number }>(path);
    for (const record of records) {
      if ('upTo' in record) count = record.upTo;
      else expect(record.n).toBe(count++);
    }
    expect(count).toBeGreaterThanOrEqual(Math.max(...resolved) + 1);
  });
});
