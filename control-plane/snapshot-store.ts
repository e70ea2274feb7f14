/**
 * The snapshots a control plane keeps (issue 26): journaled records, their files in
 * `<state folder>/snapshots/<id>/`, host root's alone (0700), written by the driver
 * (`SandboxDriver.snapshot`). A snapshot is journaled as being taken before the driver writes it and as
 * taken once whole, so a crash meanwhile leaves no files behind (recovery removes what no taken record
 * claims). What all snapshots take together is capped per control plane: one that would pass the cap is
 * removed and refused with `no_space`.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SnapshotInfo } from '../protocol/control-plane-api.js';
import type { SnapshotCarry } from '../protocol/snapshot-carry.js';
import { InvalidArgumentError, SandboxError } from '../rules/errors.js';
import type { EgressPolicy } from '../rules/egress-policy.js';
import type { SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import type { SandboxJournal } from './journal-records.js';

/** What a sandbox started from a snapshot is launched with, beside its files. */
export interface SnapshotLaunch {
  readonly allowInternetAccess: boolean;
  /** The sandbox's egress policy when it was taken (absent in journals written before issue 27). */
  readonly egress?: EgressPolicy;
  readonly memoryMb: number;
  readonly maxPids: number;
  readonly cpus: number;
}

/**
 * A snapshot as journaled: its public facts, how to launch from it and (a memory snapshot's) what its
 * sandboxd left the copies.
 */
export type SnapshotRecord = SnapshotInfo & {
  readonly launch: SnapshotLaunch;
  readonly carried?: SnapshotCarry;
};

/** The cap on what a control plane's snapshots take together, by default. */
export const DEFAULT_SNAPSHOT_BYTES = 16 * 2 ** 30;

/** The sandbox a snapshot is taken of, as the control plane knows it. */
export interface SnapshotSubject {
  readonly sandboxId: string;
  readonly isolation: SnapshotInfo['isolation'];
  readonly template: string;
  readonly launch: SnapshotLaunch;
  /** What the copies' sandboxd takes over (asked of the sandbox's before a memory snapshot). */
  readonly carried?: SnapshotCarry;
}

/**
 * A control plane's snapshots.
 *
 * @example
 * ```ts
 * const store = new SnapshotStore(stateDir, journal, driver, DEFAULT_SNAPSHOT_BYTES);
 * const snapshot = await store.take({ sandboxId, isolation, template, launch });
 * store.folderOf(snapshot.snapshotId); // what `launch({ from })` reads
 * ```
 */
export class SnapshotStore {
  readonly #dir: string;
  readonly #journal: SandboxJournal;
  readonly #driver: SandboxDriver;
  readonly #capBytes: number;
  readonly #snapshots = new Map<string, SnapshotRecord>();
  /** Being taken: journaled, not yet whole. */
  readonly taking = new Set<string>();

  constructor(stateDir: string, journal: SandboxJournal, driver: SandboxDriver, capBytes: number) {
    this.#dir = join(stateDir, 'snapshots');
    this.#journal = journal;
    this.#driver = driver;
    this.#capBytes = capBytes;
  }

  /** A replayed record (recovery, `recovery.ts`). */
  replayTaken(record: SnapshotRecord): void {
    this.taking.delete(record.snapshotId);
    this.#snapshots.set(record.snapshotId, record);
  }

  /** A replayed deletion. */
  replayDeleted(snapshotId: string): void {
    this.taking.delete(snapshotId);
    this.#snapshots.delete(snapshotId);
  }

  /** Every snapshot, oldest first. */
  list(): SnapshotInfo[] {
    return [...this.#snapshots.values()].map(publicFacts).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** The snapshots of sandbox `sandboxId`, oldest first. */
  of(sandboxId: string): SnapshotInfo[] {
    return this.list().filter((snapshot) => snapshot.sandboxId === sandboxId);
  }

  /**
   * The snapshot `snapshotId`.
   *
   * @throws InvalidArgumentError `snapshot` when there is none by that id
   */
  get(snapshotId: string): SnapshotRecord {
    const record = this.#snapshots.get(snapshotId);
    if (record === undefined)
      throw new InvalidArgumentError(`snapshot: no snapshot ${snapshotId}`, { field: 'snapshot' });
    return record;
  }

  /** The folder of a snapshot's files (what `launch({ from })` reads). */
  folderOf(snapshotId: string): string {
    return join(this.#dir, snapshotId);
  }

  /**
   * Takes a snapshot of the running sandbox `subject` (the driver writes it; the sandbox goes on).
   *
   * @throws SandboxError `no_space` when it would pass the cap (nothing of it is kept)
   */
  async take(subject: SnapshotSubject, now: number): Promise<SnapshotInfo> {
    const snapshotId = `snap_${randomBytes(8).toString('hex')}`;
    await this.#journal.append({ kind: 'snapshot_taking', snapshotId });
    this.taking.add(snapshotId);
    const folder = this.folderOf(snapshotId);
    try {
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      const saved = await this.#driver.snapshot(subject.sandboxId, folder);
      if (this.#bytes() + saved.bytes > this.#capBytes) {
        throw new SandboxError(
          `snapshots would take more than this control plane's cap of ${String(this.#capBytes)} bytes: delete some`,
          { code: 'no_space' },
        );
      }
      const record: SnapshotRecord = {
        snapshotId,
        sandboxId: subject.sandboxId,
        createdAt: now,
        kind: saved.kind,
        isolation: subject.isolation,
        template: subject.template,
        bytes: saved.bytes,
        launch: subject.launch,
        ...(subject.carried === undefined ? {} : { carried: subject.carried }),
      };
      await this.#journal.append({ kind: 'snapshot_taken', snapshot: record });
      this.replayTaken(record);
      return publicFacts(record);
    } catch (error) {
      await rm(folder, { recursive: true, force: true });
      await this.#journal.append({ kind: 'snapshot_deleted', snapshotId }).catch(() => undefined);
      this.taking.delete(snapshotId);
      throw error instanceof SandboxError ? error : new SandboxError('the snapshot could not be taken');
    }
  }

  /**
   * Deletes a snapshot and its files.
   *
   * @throws InvalidArgumentError `snapshot` when there is none by that id
   */
  async delete(snapshotId: string): Promise<void> {
    this.get(snapshotId);
    await this.#journal.append({ kind: 'snapshot_deleted', snapshotId });
    this.#snapshots.delete(snapshotId);
    await rm(this.folderOf(snapshotId), { recursive: true, force: true });
  }

  /** Removes the folders no taken snapshot claims (a crash while one was taken). */
  async removeStrays(): Promise<void> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!this.#snapshots.has(name)) await rm(join(this.#dir, name), { recursive: true, force: true });
    }
    for (const snapshotId of this.taking) {
      await this.#journal.append({ kind: 'snapshot_deleted', snapshotId }).catch(() => undefined);
    }
    this.taking.clear();
  }

  /** The records a compaction writes for the snapshots. */
  records(): SnapshotRecord[] {
    return [...this.#snapshots.values()];
  }

  #bytes(): number {
    let total = 0;
    for (const snapshot of this.#snapshots.values()) total += snapshot.bytes;
    return total;
  }
}

/** What anyone with the operator key may read of a snapshot. */
function publicFacts(record: SnapshotRecord): SnapshotInfo {
  const { snapshotId, sandboxId, createdAt, kind, isolation, template, bytes } = record;
  return { snapshotId, sandboxId, createdAt, kind, isolation, template, bytes };
}
