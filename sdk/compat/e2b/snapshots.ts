/**
 * E2B's snapshots over the native ones (`sdk/snapshot.ts`): `createSnapshot`'s options and E2B's
 * `SnapshotInfo` (`snapshotId`, `names`), `fork`'s options, `Sandbox.listSnapshots`' options and
 * `SnapshotPaginator`. E2B's snapshot and fork hold the sandbox's memory (its processes go on in a
 * copy): here that is a gVisor sandbox's snapshot; a namespace sandbox's holds its files only, so there
 * it is refused unless the caller asks for files only (`keepMemory: false`, E2B's name of a
 * filesystem-only snapshot in `pause`), as in the Python shim.
 */
import { z } from 'zod';
import {
  snapshotListSchema,
  type SandboxInfo as NativeSandboxInfo,
} from '../../../protocol/control-plane-api.js';
import { SNAPSHOT_ID } from '../../../rules/names.js';
import type { ControlPlaneClient } from '../../control-plane-client.js';
import type { ConnectionOpts } from './connection.js';
import { NotSupportedError, SandboxError, e2bCall, invalidArgument } from './errors.js';

/** What E2B says of a snapshot (E2B's `SnapshotInfo`). */
export interface SnapshotInfo {
  /** The snapshot's id (`snap_` and 16 hex digits): `Sandbox.create(snapshotId)` starts a sandbox from it. */
  readonly snapshotId: string;
  /** E2B's names of the snapshot: empty (snapshots here have ids only). */
  readonly names: string[];
}

/** Options of `createSnapshot` (E2B's `CreateSnapshotOpts`, plus `keepMemory`). */
export interface CreateSnapshotOpts extends ConnectionOpts {
  /** Refused: snapshots here have ids only (`Sandbox.create(snapshotId)`). */
  name?: string;
  /**
   * The shim's, named as E2B's `pause({ keepMemory })`: `true` (the default, what E2B's snapshot is) keeps
   * the sandbox's memory and processes, which needs a gVisor sandbox (`SDK_ISOLATION=gvisor` at create);
   * `false` asks for its files only, which any sandbox gives (a gVisor sandbox's snapshot is its memory
   * snapshot all the same, its files included).
   */
  keepMemory?: boolean;
  /** The same choice by the name this project's issue gives it: `'full'` (keepMemory) or `'filesystem'`. */
  mode?: SnapshotMode;
}

/** `mode`: `'full'` keeps the memory (as `keepMemory: true`), `'filesystem'` the files only. */
export type SnapshotMode = 'full' | 'filesystem';

/** Options of `fork` (E2B's `SandboxForkOpts`, plus `keepMemory` as `createSnapshot`'s). */
export interface SandboxForkOpts extends ConnectionOpts {
  /** How many sandboxes to start from the one snapshot: 1 (E2B's default) to 100. */
  count?: number;
  /** Lifetime of each new sandbox, ms; 300 000 (E2B's) by default. */
  timeoutMs?: number;
  /** As `createSnapshot`'s: `false` forks a namespace sandbox by its files only. */
  keepMemory?: boolean;
  /** As `createSnapshot`'s. */
  mode?: SnapshotMode;
}

/** Options of `Sandbox.listSnapshots` (E2B's `SnapshotListOpts`). */
export interface SnapshotListOpts extends ConnectionOpts {
  /** Only the snapshots of this sandbox. */
  sandboxId?: string;
  /** E2B's name or id filter: a snapshot id here (snapshots have no names). */
  name?: string;
  /** Snapshots per page (E2B's default 100). */
  limit?: number;
  nextToken?: string;
}

/** Keys of `createSnapshot`'s options beyond the connection's. */
export const CREATE_SNAPSHOT_KEYS = ['name', 'keepMemory', 'mode'] as const;
/** Keys of `fork`'s options beyond the connection's. */
export const FORK_KEYS = ['count', 'timeoutMs', 'keepMemory', 'mode'] as const;
/** Keys of `listSnapshots`' options beyond the connection's. */
export const LIST_SNAPSHOT_KEYS = ['sandboxId', 'name', 'limit', 'nextToken'] as const;

/** Most sandboxes one fork starts (the control plane's fork takes as many). */
const MAX_FORK_COUNT = 100;
/** E2B's page size of `Sandbox.listSnapshots`. */
const DEFAULT_LIST_LIMIT = 100;

/** E2B's info of a snapshot id. */
export const e2bSnapshot = (snapshotId: string): SnapshotInfo => ({ snapshotId, names: [] });

/** True when `template` (where E2B takes a template or a snapshot id) is a snapshot id of ours. */
export const isSnapshotId = (template: unknown): template is string =>
  typeof template === 'string' && SNAPSHOT_ID.test(template);

/**
 * `keepMemory` (a boolean) or `mode` (`'full'` or `'filesystem'`), which must agree when both are given;
 * the memory kept by default (E2B's snapshot keeps it).
 */
function keepMemoryOf(call: string, keepMemory: unknown, mode?: unknown): boolean {
  if (keepMemory !== undefined && typeof keepMemory !== 'boolean')
    throw invalidArgument(`${call}: keepMemory must be a boolean`, 'keepMemory');
  if (mode !== undefined && mode !== 'full' && mode !== 'filesystem')
    throw invalidArgument(`${call}: mode must be 'full' or 'filesystem'`, 'mode');
  const fromMode = mode === undefined ? undefined : mode === 'full';
  if (keepMemory !== undefined && fromMode !== undefined && keepMemory !== fromMode)
    throw invalidArgument(`${call}: keepMemory and mode disagree`, 'mode');
  return keepMemory ?? fromMode ?? true;
}

/**
 * `createSnapshot`'s own options, checked before any call (the connection's are checked by the caller).
 *
 * @returns whether the snapshot must keep the memory
 * @throws NotSupportedError for `name`; InvalidArgumentError for a malformed `keepMemory`
 */
export function checkCreateSnapshotOpts(call: string, opts: CreateSnapshotOpts): boolean {
  if (opts.name !== undefined) {
    throw new NotSupportedError(
      `${call}({ name })`,
      'snapshots here have ids only: keep the snapshotId it returns and pass it to Sandbox.create',
    );
  }
  return keepMemoryOf(call, opts.keepMemory, opts.mode);
}

/** `fork`'s own options, checked before any call. */
export function checkForkOpts(call: string, opts: SandboxForkOpts): { count: number; keepMemory: boolean } {
  const count: unknown = opts.count ?? 1;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_FORK_COUNT) {
    throw invalidArgument(
      `${call}: count must be a whole number from 1 to ${String(MAX_FORK_COUNT)} (E2B: count must be at least 1)`,
      'count',
    );
  }
  return { count, keepMemory: keepMemoryOf(call, opts.keepMemory, opts.mode) };
}

/**
 * Refuses a snapshot with memory of a sandbox whose snapshots hold its files only (a namespace one),
 * saying how to get either.
 *
 * @throws NotSupportedError (feature `<call>({ keepMemory: true })`)
 */
export function requireMemorySnapshot(call: string, info: NativeSandboxInfo, keepMemory: boolean): void {
  if (!keepMemory || info.isolation === 'gvisor') return;
  throw new NotSupportedError(
    `${call}({ keepMemory: true })`,
    `sandbox ${info.sandboxId} runs with ${info.isolation} isolation, whose snapshots hold its files only; ` +
      "a snapshot with its memory and running processes (E2B's, and the default: keepMemory: true) needs a gVisor " +
      "sandbox (isolation: 'gvisor'): create it with SDK_ISOLATION=gvisor in the environment, or pass " +
      '{ keepMemory: false } for a snapshot of its files only',
  );
}

/**
 * A snapshot id given to `deleteSnapshot`: not a string is an `InvalidArgumentError`; a string that is
 * no id of ours names no snapshot (false, as E2B answers an unknown one).
 */
export function wellFormedSnapshotId(snapshotId: unknown): boolean {
  if (typeof snapshotId !== 'string' || snapshotId === '') {
    throw invalidArgument('snapshotId must be a snapshot id (a non-empty string)', 'snapshotId');
  }
  return SNAPSHOT_ID.test(snapshotId);
}

/**
 * Pages of `Sandbox.listSnapshots` (E2B's `SnapshotPaginator`): `hasNext`, `nextItems()`, the control
 * plane's snapshots oldest first.
 */
export class SnapshotPaginator {
  /** True while there may be more snapshots to fetch. */
  hasNext = true;
  /** Where the next page starts. */
  nextToken: string | undefined;
  readonly #plane: ControlPlaneClient;
  readonly #key: string;
  readonly #opts: SnapshotListOpts;

  /** @internal */
  constructor(plane: ControlPlaneClient, key: string, opts: SnapshotListOpts) {
    this.#plane = plane;
    this.#key = key;
    this.#opts = opts;
    this.nextToken = opts.nextToken;
    for (const field of ['sandboxId', 'name'] as const) {
      const value: unknown = opts[field];
      if (value !== undefined && (typeof value !== 'string' || value === '')) {
        throw invalidArgument(`Sandbox.listSnapshots: ${field} must be a non-empty string`, field);
      }
    }
    if (opts.limit !== undefined && (!Number.isInteger(opts.limit) || opts.limit < 1)) {
      throw invalidArgument('Sandbox.listSnapshots: limit must be a whole number, 1 or more', 'limit');
    }
    if (opts.nextToken !== undefined && !/^\d+$/.test(opts.nextToken)) {
      throw invalidArgument('Sandbox.listSnapshots: nextToken must be a token a page gave', 'nextToken');
    }
  }

  /** The next page of snapshots. */
  async nextItems(): Promise<SnapshotInfo[]> {
    if (!this.hasNext) throw new SandboxError('No more items to fetch');
    const { snapshots } = await e2bCall(() =>
      this.#plane.call('GET', '/v1/snapshots', snapshotListSchema, { token: this.#key }),
    );
    const { sandboxId, name } = this.#opts;
    const matching = snapshots
      .filter((s) => sandboxId === undefined || s.sandboxId === sandboxId)
      .filter((s) => name === undefined || s.snapshotId === name);
    const start = Number(this.nextToken ?? '0');
    const end = start + (this.#opts.limit ?? DEFAULT_LIST_LIMIT);
    this.hasNext = end < matching.length;
    this.nextToken = this.hasNext ? String(end) : undefined;
    return matching.slice(start, end).map((s) => e2bSnapshot(s.snapshotId));
  }
}

/** The schema `deleteSnapshot` reads the control plane's empty answer with. */
export const deletedSchema = z.strictObject({});
