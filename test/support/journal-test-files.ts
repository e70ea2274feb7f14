/**
 * Journal tests' shared parts: a temporary journal path (removed after its test), a file layer that
 * counts calls, fails one or holds one back, and small helpers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { onTestFinished } from 'vitest';
import { Journal, nodeJournalFiles, type JournalFiles } from '../../actors/journal.js';

/**
 * A journal path in a folder of its own, removed when the calling test finishes (per test, not per
 * file: with `isolate: false` a hook registered when this module loads would reach one file only).
 */
export function journalPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-journal-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'state', 'journal.jsonl');
}

export type Operation = Exclude<keyof JournalFiles, 'openForAppend'>;

/** `nodeJournalFiles` with every call counted, and calls that can be held at a gate or made to fail. */
export class TestFiles implements JournalFiles {
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

  /**
   * Resolves once `operation` has been called `times` times in all. The real file calls run on libuv's
   * thread pool, which a loaded machine may keep busy for a long time: the bound is a generous wall
   * clock (a hang still fails), never a count of event-loop turns.
   */
  async called(operation: Operation, times = 1): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (this.count(operation) < times) {
      if (Date.now() > deadline) throw new Error(`${operation} was not called ${String(times)} times`);
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

export const ioError = (code: string, syscall: string): Error =>
  Object.assign(new Error(`${code}: ${syscall}`), { code, syscall });

/** The settled outcome of a promise, for asserting on rejections without unhandled ones. */
export const outcome = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );

/** The records a fresh open reads, the journal closed again. */
export async function reopened<R>(path: string): Promise<readonly R[]> {
  const journal = Journal.open<R>(path);
  await journal.close();
  return journal.records;
}

export interface N {
  n: number;
}
export interface Snapshot {
  snapshot: string;
}
