import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { fc, test } from '@fast-check/vitest';
import { afterAll, expect } from 'vitest';
import { Journal, type JournalFiles } from '../../actors/journal.js';

/** A file as a crash sees it: what was written, and how much of it an fsync made durable. */
interface File {
  bytes: Buffer;
  synced: number;
}

/**
 * The journal's file layer in memory, with what survives a crash: a file's durable bytes are those an
 * fsync covered, a folder's durable entries those a folder fsync covered. Every call takes a few turns of
 * the event loop; call number `crashAt` crashes the machine (before or after taking effect), and from then
 * on no call returns.
 */
class CrashingFiles implements JournalFiles {
  /** The folder's entries now, and as of its last fsync. */
  readonly names = new Map<string, File>();
  durableNames = new Map<string, File>();
  readonly #fds = new Map<number, File>();
  #nextFd = 100;
  #calls = 0;
  crashed = false;
  readonly whenCrashed: Promise<void>;
  #crash = (): void => undefined;

  constructor(
    path: string,
    initial: Buffer,
    private readonly crashAt: number,
    private readonly crashAfterEffect: boolean,
    private readonly turns: readonly number[],
  ) {
    this.names.set(path, { bytes: initial, synced: initial.length });
    this.durableNames = new Map(this.names);
    this.whenCrashed = new Promise((resolve) => (this.#crash = resolve));
  }

  async #call<T>(effect: () => T): Promise<T> {
    const call = this.#calls++;
    const turns = this.turns.length === 0 ? 0 : (this.turns[call % this.turns.length] ?? 0);
    for (let i = 0; i < turns; i++) await turn();
    if (!this.crashed && call === this.crashAt) {
      if (this.crashAfterEffect) effect();
      this.crashed = true;
      this.#crash();
    }
    if (this.crashed) return new Promise<T>(() => undefined);
    return effect();
  }

  #file(fd: number): File {
    const file = this.#fds.get(fd);
    if (file === undefined) throw new Error(`bad descriptor ${String(fd)}`);
    return file;
  }

  openForAppend(path: string): number {
    const file = this.names.get(path);
    if (file === undefined) throw new Error(`no file ${path}`);
    this.#fds.set(this.#nextFd, file);
    return this.#nextFd++;
  }
  append(fd: number, data: Buffer): Promise<void> {
    return this.#call(() => {
      const file = this.#file(fd);
      file.bytes = Buffer.concat([file.bytes, data]);
    });
  }
  syncData(fd: number): Promise<void> {
    return this.#call(() => {
      const file = this.#file(fd);
      file.synced = file.bytes.length;
    });
  }
  sync(fd: number): Promise<void> {
    return this.syncData(fd);
  }
  create(path: string): Promise<number> {
    return this.#call(() => {
      if (this.names.has(path)) throw new Error(`${path} exists`);
      const file = { bytes: Buffer.alloc(0), synced: 0 };
      this.names.set(path, file);
      this.#fds.set(this.#nextFd, file);
      return this.#nextFd++;
    });
  }
  rename(from: string, to: string): Promise<void> {
    return this.#call(() => {
      const file = this.names.get(from);
      if (file === undefined) throw new Error(`no file ${from}`);
      this.names.set(to, file);
      this.names.delete(from);
    });
  }
  syncFolder(): Promise<void> {
    return this.#call(() => {
      this.durableNames = new Map(this.names);
    });
  }
  close(fd: number): Promise<void> {
    return this.#call(() => {
      this.#fds.delete(fd);
    });
  }
  unlink(path: string): Promise<void> {
    return this.#call(() => {
      this.names.delete(path);
    });
  }
}

type Step =
  | { readonly kind: 'append'; readonly count: number }
  | { readonly kind: 'turn' }
  | { readonly kind: 'settle' }
  | { readonly kind: 'compact' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), count: fc.integer({ min: 1, max: 4 }) }),
  fc.constant({ kind: 'turn' as const }),
  fc.constant({ kind: 'settle' as const }),
  fc.constant({ kind: 'compact' as const }),
);

/** An event numbered `n`, or a snapshot of the events applied: 0 .. upTo - 1. */
type JournalRecord = { readonly n: number } | { readonly upTo: number };

const linesOf = (records: readonly JournalRecord[]): Buffer =>
  Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(''));

/** The complete lines of `bytes`, parsed. */
const completeRecords = (bytes: Buffer): JournalRecord[] =>
  bytes
    .toString()
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as JournalRecord);

/** The records a fresh open reads, the journal closed again. */
async function reopened(path: string): Promise<readonly JournalRecord[]> {
  const journal = Journal.open<JournalRecord>(path);
  await journal.close();
  return journal.records;
}

const root = mkdtempSync(join(tmpdir(), 'sdk-journal-crash-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

test.prop(
  [
    fc.integer({ min: 0, max: 3 }), // events already in the journal
    fc.array(step, { minLength: 1, maxLength: 30 }),
    fc.nat({ max: 24 }), // the file call the machine crashes at (beyond the run's calls: no crash)
    fc.boolean(), // the crashing call takes effect first
    fc.array(fc.nat({ max: 2 }), { minLength: 1, maxLength: 8 }), // turns each file call takes
    fc.boolean(), // an undurable rename survives the crash
    fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), // how much unsynced tail survives
  ],
  { numRuns: 1000 },
)(
  'after a crash at any file call, reopening yields every record whose append resolved, in order, at most a torn tail dropped',
  async (initial, steps, crashAt, crashAfterEffect, turns, renameSurvives, tailKept) => {
    const folder = join(root, String(++runs));
    mkdirSync(folder);
    const path = join(folder, 'journal.jsonl');
    const initialRecords = Array.from({ length: initial }, (_, n) => ({ n }));
    writeFileSync(path, linesOf(initialRecords), { mode: 0o600 });
    const files = new CrashingFiles(path, linesOf(initialRecords), crashAt, crashAfterEffect, turns);
    const journal = Journal.open<JournalRecord>(path, { files });
    expect(journal.records).toEqual(initialRecords);

    let applied = initial; // the owner's state: events 0 .. applied - 1, applied once journaled
    let next = initial;
    const resolved: number[] = [];
    const outstanding: Promise<unknown>[] = [];
    const orCrash = (promise: Promise<unknown>): Promise<unknown> =>
      Promise.race([promise, files.whenCrashed]);
    for (const s of steps) {
      if (files.crashed) break;
      if (s.kind === 'append') {
        for (let i = 0; i < s.count; i++) {
          const n = next++;
          outstanding.push(
            journal.append({ n }).then(() => {
              expect(n).toBe(applied); // resolutions come in the order of the appends
              resolved.push(n);
              applied = n + 1;
            }),
          );
        }
      } else if (s.kind === 'turn') {
        await turn();
      } else if (s.kind === 'settle') {
        await orCrash(Promise.all(outstanding));
        await turn();
      } else {
        outstanding.push(journal.compact([{ upTo: applied }]));
      }
    }
    if (!files.crashed) await orCrash(Promise.all([...outstanding, journal.close()]));

    // The machine comes back: the journal's name points at the durable entry, or at the renamed file
    // when the rename happened to reach the disk; each file keeps its synced bytes and some of the rest.
    const durable = files.durableNames.get(path);
    const current = files.names.get(path);
    const file = renameSurvives ? (current ?? durable) : (durable ?? current);
    if (file === undefined) throw new Error('the journal has no file');
    const kept = file.synced + Math.floor(tailKept * (file.bytes.length - file.synced));
    writeFileSync(path, file.bytes.subarray(0, kept));

    const records = await reopened(path);
    // At most a torn tail dropped: a prefix of what the file was given, and all its durable records.
    expect(records).toEqual(completeRecords(file.bytes).slice(0, records.length));
    expect(records.length).toBeGreaterThanOrEqual(
      completeRecords(file.bytes.subarray(0, file.synced)).length,
    );
    // Replayed: a snapshot first (if any), then events in order, each the next one; nothing resolved lost.
    let replayed = 0;
    records.forEach((record, index) => {
      if ('upTo' in record) {
        expect(index).toBe(0);
        replayed = record.upTo;
      } else {
        expect(record.n).toBe(replayed);
        replayed++;
      }
    });
    expect(replayed).toBeGreaterThanOrEqual(applied);
    expect(replayed).toBeLessThanOrEqual(next);
    if (!files.crashed) expect(replayed).toBe(next);

    // The reopened journal goes on from there.
    const again = Journal.open<JournalRecord>(path);
    await again.append({ n: replayed });
    await again.close();
    expect((await reopened(path)).at(-1)).toEqual({ n: replayed });
  },
);
