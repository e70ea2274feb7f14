import { closeSync, mkdirSync, readFileSync, statSync, appendFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Journal, JournalBrokenError, nodeJournalFiles, type JournalFiles } from '../../actors/journal.js';
import { ioError, journalPath, outcome, reopened, TestFiles, type N } from '../support/journal-test-files.js';

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
});
