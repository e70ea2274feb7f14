import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import ts from 'typescript';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  Journal,
  JournalBrokenError,
  JournalClosedError,
  JournalCompactionError,
} from '../../actors/journal.js';
import {
  ioError,
  journalPath,
  outcome,
  reopened,
  TestFiles,
  type N,
  type Snapshot,
} from '../support/journal-test-files.js';

describe('journal compaction and crashes', () => {
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
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    // The fixture runs on plain Node: it gets the journal's modules transpiled on their own.
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    for (const name of ['journal', 'journal-errors', 'journal-files', 'journal-lines']) {
      const source = readFileSync(fileURLToPath(new URL(`../../actors/${name}.ts`, import.meta.url)), 'utf8');
      writeFileSync(
        join(dir, `${name}.js`),
        ts.transpileModule(source, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        }).outputText,
      );
    }
    const module = join(dir, 'journal.js');
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
