/**
 * The control plane's journal: one JSON record per line. `append` resolves once its record is durable,
 * and the owner applies an event only after that ("journaled before applied"), so a control plane killed
 * at any instant replays to a state it had reached. Group commit: the records appended in one turn of the
 * event loop go out in one write and one fdatasync, run on libuv's thread pool so the event loop keeps
 * turning meanwhile. `compact` replaces the whole file with the owner's snapshots atomically (a temporary
 * file, fsync, rename, folder fsync). A torn last line (a crash mid-write) is dropped on open.
 */
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { JournalBrokenError, JournalClosedError, JournalCompactionError } from './journal-errors.js';
import { nodeJournalFiles, type JournalFiles } from './journal-files.js';
import { lineOf, readRecords } from './journal-lines.js';

export { JournalBrokenError, JournalClosedError, JournalCompactionError } from './journal-errors.js';
export { nodeJournalFiles, type JournalFiles } from './journal-files.js';

/** Options of `Journal.open`. */
export interface JournalOptions {
  /** The file layer; `nodeJournalFiles` by default. */
  readonly files?: JournalFiles;
}

/** An appended record on its way to disk. */
interface Pending {
  readonly line: string;
  /** True once the record is durable and its promise resolved. */
  durable: boolean;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/** A compaction asked for and not yet started. */
interface Compaction {
  /** The owner's records, as lines. */
  text: string;
  /** Appends under way (written, not yet durable) when it was asked for: they follow the records. */
  carry: readonly Pending[];
  readonly waiters: { resolve: () => void; reject: (error: Error) => void }[];
}

/** The prefix of a leftover compaction file: `journal.jsonl.compacting-<pid>-<n>`. */
const leftoverPrefix = (path: string): string => `${basename(path)}.compacting-`;

/**
 * A journal of records of type `R`, owner-only (0600).
 *
 * @example
 * ```ts
 * const journal = Journal.open<Event>('/var/lib/sdk/journal.jsonl');
 * for (const event of journal.records) replay(event);
 * await journal.append(event); // durable now
 * apply(event);
 * if (journal.appendedSinceOpenOrCompaction > 10_000) await journal.compact(snapshots());
 * await journal.close();
 * ```
 */
export class Journal<R> {
  readonly #path: string;
  readonly #files: JournalFiles;
  readonly #records: readonly R[];
  #fd: number;
  /** Appends not yet handed to a write. */
  #queue: Pending[] = [];
  /** Appends handed to the write under way (a batch, or a compaction's file), not yet durable. */
  #inFlight: readonly Pending[] = [];
  #compaction: Compaction | undefined;
  /** A write or a compaction is under way. */
  #running = false;
  /** The next one is scheduled for the next turn of the event loop. */
  #scheduled = false;
  #appended = 0;
  #compactions = 0;
  #broken: JournalBrokenError | undefined;
  #closing: Promise<void> | undefined;
  readonly #idle: (() => void)[] = [];

  private constructor(path: string, files: JournalFiles, fd: number, records: readonly R[]) {
    this.#path = path;
    this.#files = files;
    this.#fd = fd;
    this.#records = records;
  }

  /**
   * Opens (or creates, with its folder) the journal at `path` and reads what it holds. A torn last line
   * is cut off the file, and files a compaction left behind are removed. Synchronous: it runs before the
   * owner serves anything.
   */
  static open<R>(path: string, options: JournalOptions = {}): Journal<R> {
    const files = options.files ?? nodeJournalFiles;
    const folder = dirname(path);
    const made = mkdirSync(folder, { recursive: true });
    for (const name of readdirSync(folder)) {
      if (name.startsWith(leftoverPrefix(path))) unlinkSync(join(folder, name));
    }
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const { records, kept } = bytes === undefined ? { records: [], kept: 0 } : readRecords(bytes);
    if (bytes !== undefined && kept < bytes.length) {
      // A torn final write is cut off (durably), so the next record starts on a line of its own.
      const fd = openSync(path, 'r+');
      try {
        ftruncateSync(fd, kept);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    const fd = files.openForAppend(path);
    if (bytes === undefined) {
      // The new file's name, and each folder made for it, must outlive a crash as its records do.
      const top = made === undefined ? folder : dirname(made);
      for (let dir = folder; ; dir = dirname(dir)) {
        syncFolderSync(dir);
        if (dir === top || dir === dirname(dir)) break;
      }
    }
    return new Journal(path, files, fd, records as R[]);
  }

  /** The records read at open, in order. */
  get records(): readonly R[] {
    return this.#records;
  }

  /**
   * Records made durable after the file's start: since open, or since the last compaction (the appends
   * a compaction wrote after the owner's records count). The owner compacts when it grows.
   */
  get appendedSinceOpenOrCompaction(): number {
    return this.#appended;
  }

  /**
   * Appends a record; resolves once it is durable. The owner applies the event a record describes only
   * after this resolves ("journaled before applied"): a crash before that leaves a state the journal can
   * replay to, and a record whose append resolved is never lost.
   *
   * Every record appended in one turn of the event loop goes out in one write and one fdatasync, after
   * the records of earlier turns (never reordered); their promises resolve together, in order. If the
   * write or fdatasync fails, every pending append rejects with `JournalBrokenError` and so does every
   * later one (a rejected record may or may not be on disk). Rejects with `JournalClosedError` after
   * `close`, and with the `TypeError` of `JSON.stringify` for a record it cannot serialize.
   */
  append(record: R): Promise<void> {
    const refusal = this.#refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    return new Promise<void>((resolve, reject) => {
      // Serialized now: the record may change after the call. A throw here rejects the promise.
      this.#queue.push({ line: lineOf(record), durable: false, resolve, reject });
      this.#kick();
    });
  }

  /**
   * Replaces the journal's whole contents with `records`, atomically: they are written to a temporary
   * file in the same folder, which is fsync'ed and renamed over the journal, and the folder is fsync'ed.
   * A crash at any point leaves the old file or the new one, never a mix, and no resolved append lost.
   *
   * `records` must reflect every append that resolved before this call and none still pending: call it
   * from a timer or I/O callback, not between an append's resolution and the owner's apply. Appends still
   * pending, and those made while the compaction runs, are written after `records`, in order (appends
   * wait for the compaction to finish). A second call before the first has started replaces its records;
   * both resolve together. Rejects with `JournalCompactionError` when it fails before the rename (the
   * journal is unchanged and goes on), and with `JournalBrokenError` when the folder's fsync fails after it.
   */
  compact(records: readonly R[]): Promise<void> {
    const refusal = this.#refusal();
    if (refusal !== undefined) return Promise.reject(refusal);
    return new Promise<void>((resolve, reject) => {
      const text = records.map(lineOf).join('');
      // Records of the write under way are not durable yet, so the owner has not applied them.
      const carry = this.#inFlight.filter((pending) => !pending.durable);
      const waiter = { resolve, reject };
      if (this.#compaction === undefined) this.#compaction = { text, carry, waiters: [waiter] };
      else {
        this.#compaction.text = text;
        this.#compaction.carry = carry;
        this.#compaction.waiters.push(waiter);
      }
      this.#kick();
    });
  }

  /** Waits for the appends and the compaction under way, then closes the file. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#idle.push(resolve);
      this.#kick();
    }).then(() => this.#files.close(this.#fd));
    return this.#closing;
  }

  #refusal(): Error | undefined {
    if (this.#closing !== undefined) return new JournalClosedError(this.#path);
    return this.#broken;
  }

  /** Starts the next write on the next turn of the event loop, so a turn's appends are never split. */
  #kick(): void {
    if (this.#running || this.#scheduled) return;
    if (this.#queue.length === 0 && this.#compaction === undefined) {
      for (const idle of this.#idle.splice(0)) idle();
      return;
    }
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#runNext();
    });
  }

  async #runNext(): Promise<void> {
    this.#running = true;
    const compaction = this.#compaction;
    this.#compaction = undefined;
    try {
      if (compaction === undefined) await this.#commit(this.#queue.splice(0));
      else await this.#compactNow(compaction);
    } catch (error) {
      // Not expected (both catch their own failures), but an unknown state must not take appends.
      this.#break(error);
      for (const waiter of compaction?.waiters ?? []) waiter.reject(this.#broken ?? (error as Error));
    }
    this.#inFlight = [];
    this.#running = false;
    this.#kick();
  }

  /** One write and one fdatasync for a batch; its promises resolve together, in order. */
  async #commit(batch: Pending[]): Promise<void> {
    this.#inFlight = batch;
    try {
      await this.#files.append(this.#fd, Buffer.from(batch.map((pending) => pending.line).join('')));
      await this.#files.syncData(this.#fd);
    } catch (error) {
      this.#break(error);
      return;
    }
    this.#inFlight = [];
    this.#appended += batch.length;
    for (const pending of batch) {
      pending.durable = true;
      pending.resolve();
    }
  }

  async #compactNow(compaction: Compaction): Promise<void> {
    const drained = this.#queue.splice(0);
    this.#inFlight = drained;
    // Appends carried over are durable in the old file by now (had one failed, the journal would be broken).
    const after = [...compaction.carry.filter((pending) => pending.durable), ...drained];
    const folder = dirname(this.#path);
    const temporary = join(folder, `${leftoverPrefix(this.#path)}${process.pid}-${++this.#compactions}`);
    let fd: number | undefined;
    try {
      const text = compaction.text + after.map((pending) => pending.line).join('');
      fd = await this.#files.create(temporary);
      await this.#files.append(fd, Buffer.from(text));
      await this.#files.sync(fd);
      await this.#files.rename(temporary, this.#path);
    } catch (error) {
      // Nothing replaced the journal: the old file is whole, and the held-back appends go to it.
      if (fd !== undefined) await this.#files.close(fd).catch(() => undefined);
      await this.#files.unlink(temporary).catch(() => undefined);
      this.#queue.unshift(...drained);
      const failure = new JournalCompactionError(this.#path, error);
      for (const waiter of compaction.waiters) waiter.reject(failure);
      return;
    }
    const old = this.#fd;
    this.#fd = fd;
    try {
      await this.#files.syncFolder(folder);
    } catch (error) {
      // The name may still point at the old file after a crash: nothing written from here is safe.
      this.#break(error);
      for (const waiter of compaction.waiters) waiter.reject(this.#broken ?? (error as Error));
      await this.#files.close(old).catch(() => undefined);
      return;
    }
    await this.#files.close(old).catch(() => undefined); // the old file is no longer the journal
    this.#inFlight = [];
    this.#appended = after.length;
    for (const pending of drained) {
      pending.durable = true;
      pending.resolve();
    }
    for (const waiter of compaction.waiters) waiter.resolve();
  }

  /** A write failed: every pending append and compaction rejects, and so will every later one. */
  #break(cause: unknown): void {
    this.#broken ??= new JournalBrokenError(this.#path, cause);
    const broken = this.#broken;
    for (const pending of [...this.#inFlight, ...this.#queue.splice(0)]) pending.reject(broken);
    this.#inFlight = [];
    const compaction = this.#compaction;
    this.#compaction = undefined;
    for (const waiter of compaction?.waiters ?? []) waiter.reject(broken);
  }
}

function syncFolderSync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
