/**
 * `Sandbox`'s snapshot and fork calls (`createSnapshot`, `listSnapshots`, `deleteSnapshot`, `fork`, by id
 * with the key and on a handle), which `sandbox-api.ts` (by id) and `sandbox.ts` (on a handle, and
 * `fork`) delegate to. E2B's snapshot keeps the memory: a gVisor sandbox's does; of a namespace sandbox
 * (files only) it is refused unless `keepMemory: false` (the options and their checks are
 * `snapshots.ts`'). A fork takes one snapshot, starts its copies from it and deletes it, as E2B's fork
 * leaves none.
 *
 * It never imports the `Sandbox` class (which imports it): a fork is given the function that turns a
 * copy's create into a handle.
 */
import {
  sandboxInfoSchema,
  snapshotSchema,
  type SandboxInfo as NativeSandboxInfo,
  type SnapshotInfo as NativeSnapshotInfo,
} from '../../../protocol/control-plane-api.js';
import { ControlPlaneClient } from '../../control-plane-client.js';
import type { Sandbox as NativeSandbox } from '../../sandbox.js';
import { resolveSandboxOptions } from '../../sandbox-options.js';
import {
  requireApiKey,
  resolveConnection,
  type ConnectionOpts,
  type ResolvedConnection,
} from './connection.js';
import { InvalidArgumentError, SandboxError, e2bCall, toE2BError } from './errors.js';
import { checkSandboxId, operatorCall } from './operator-call.js';
import { e2bInfo } from './sandbox-info.js';
import { snapshotCreate, type ResolvedCreate } from './sandbox-opts.js';
import {
  CREATE_SNAPSHOT_KEYS,
  FORK_KEYS,
  LIST_SNAPSHOT_KEYS,
  SnapshotPaginator,
  checkCreateSnapshotOpts,
  checkForkOpts,
  deletedSchema,
  e2bSnapshot,
  requireMemorySnapshot,
  wellFormedSnapshotId,
  type CreateSnapshotOpts,
  type SandboxForkOpts,
  type SnapshotInfo,
  type SnapshotListOpts,
} from './snapshots.js';

/** Copies of one fork started at once (as the control plane's own fork). */
const FORK_CONCURRENCY = 4;
/** A well-formed snapshot id standing for the one a fork takes, to check its copies' options first. */
const ANY_SNAPSHOT = 'snap_0000000000000000';

/**
 * Starts one copy of a fork from its create (the snapshot's, the fork's lifetime, key and `envs`): the
 * `Sandbox` class's, so this module need not import it.
 */
export type OpenCopy<T> = (copy: ResolvedCreate) => Promise<T>;

/** `Sandbox.createSnapshot(sandboxId, opts)`: a snapshot of a sandbox by id, with the key. */
export async function createSnapshotById(sandboxId: string, opts: CreateSnapshotOpts): Promise<SnapshotInfo> {
  const { plane, key } = operatorCall('Sandbox.createSnapshot', opts, CREATE_SNAPSHOT_KEYS);
  const keepMemory = checkCreateSnapshotOpts('Sandbox.createSnapshot', opts);
  checkSandboxId(sandboxId);
  const taken = await snapshotById(plane, key, sandboxId, keepMemory, 'Sandbox.createSnapshot');
  return e2bSnapshot(taken.snapshotId);
}

/** `sbx.createSnapshot(opts)`: a snapshot of the handle's sandbox, with its token. */
export async function createSnapshotOf(
  native: NativeSandbox,
  opts: CreateSnapshotOpts,
): Promise<SnapshotInfo> {
  resolveConnection('createSnapshot', opts, CREATE_SNAPSHOT_KEYS);
  const keepMemory = checkCreateSnapshotOpts('createSnapshot', opts);
  return e2bSnapshot((await snapshotOf(native, keepMemory, 'createSnapshot')).snapshotId);
}

/** `Sandbox.listSnapshots(opts)`: the control plane's snapshots, with the key, in pages. */
export function listSnapshots(opts: SnapshotListOpts): SnapshotPaginator {
  const { plane, key } = operatorCall('Sandbox.listSnapshots', opts, LIST_SNAPSHOT_KEYS);
  return new SnapshotPaginator(plane, key, opts);
}

/** `Sandbox.deleteSnapshot(snapshotId, opts)`: true when deleted, false when there was no such snapshot. */
export async function deleteSnapshot(snapshotId: string, opts: ConnectionOpts): Promise<boolean> {
  const { plane, key } = operatorCall('Sandbox.deleteSnapshot', opts);
  if (!wellFormedSnapshotId(snapshotId)) return false;
  try {
    await e2bCall(() =>
      plane.call('DELETE', `/v1/snapshots/${encodeURIComponent(snapshotId)}`, deletedSchema, {
        token: key,
      }),
    );
    return true;
  } catch (error) {
    // The control plane answers an unknown (well-formed) id as an invalid argument.
    if (error instanceof InvalidArgumentError) return false;
    throw error;
  }
}

/** `Sandbox.fork(sandboxId, opts)`: a fork of a sandbox by id, with the key; its copies get no `envs`. */
export async function forkById<T>(
  sandboxId: string,
  opts: SandboxForkOpts,
  open: OpenCopy<T>,
): Promise<Array<T | Error>> {
  const plan = forkPlan('Sandbox.fork', opts, {});
  checkSandboxId(sandboxId);
  const taken = await snapshotById(plan.plane, plan.apiKey, sandboxId, plan.keepMemory, 'Sandbox.fork');
  return copies(taken, plan, open);
}

/**
 * `sbx.fork(opts)`: a fork of the handle's sandbox, the snapshot taken with its token; `opts` carry
 * the handle's key (`withKey`), `envs` are its create's, which each copy gets.
 */
export async function forkOf<T>(
  native: NativeSandbox,
  opts: SandboxForkOpts,
  envs: Readonly<Record<string, string>>,
  open: OpenCopy<T>,
): Promise<Array<T | Error>> {
  const plan = forkPlan('fork', opts, envs);
  return copies(await snapshotOf(native, plan.keepMemory, 'fork'), plan, open);
}

/** `opts` with the handle's key when they give none (E2B's handle keeps the key of its connection). */
export function withKey<T extends ConnectionOpts>(opts: T, apiKey: string | undefined): T {
  if (typeof opts !== 'object' || (opts as unknown) === null) return opts; // refused as it is
  return opts.apiKey === undefined && apiKey !== undefined ? { ...opts, apiKey } : opts;
}

/**
 * Starts `plan.count` sandboxes from one snapshot, at most four at once, each of its own (its own id
 * and `E2B_SANDBOX_ID`, `plan`'s lifetime and `envs`), then deletes the snapshot (E2B's fork leaves
 * none). E2B's answer: one entry per copy, the sandbox or the error it failed with.
 */
async function copies<T>(snapshot: Taken, plan: ForkPlan, open: OpenCopy<T>): Promise<Array<T | Error>> {
  const results: Array<T | Error> = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < plan.count) {
      const index = next++;
      try {
        const copy = snapshotCreate(snapshot.snapshotId, plan.connection, plan.apiKey, plan.timeoutMs, {
          envs: plan.envs,
          templateId: snapshot.template,
        });
        results[index] = await open(copy);
      } catch (error) {
        results[index] = error instanceof Error ? error : new SandboxError(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.count, FORK_CONCURRENCY) }, worker));
  // Its sandboxes hold their files now; a failure to delete leaves it listed (listSnapshots).
  await plan.plane
    .call('DELETE', `/v1/snapshots/${encodeURIComponent(snapshot.snapshotId)}`, deletedSchema, {
      token: plan.apiKey,
    })
    .catch(() => undefined);
  return results;
}

/**
 * A snapshot with the sandbox's token; one with memory only of a gVisor sandbox, whose isolation is
 * read first.
 */
async function snapshotOf(native: NativeSandbox, keepMemory: boolean, call: string): Promise<Taken> {
  if (keepMemory) {
    requireMemorySnapshot(call, liveInfo(await e2bCall(() => native.getInfo())), keepMemory);
  }
  const taken = await e2bCall(() => native.snapshot());
  return { snapshotId: taken.id, template: taken.template };
}

/** Takes a snapshot of a sandbox by id with the key; one with memory only of a gVisor sandbox. */
async function snapshotById(
  plane: ControlPlaneClient,
  key: string,
  sandboxId: string,
  keepMemory: boolean,
  call: string,
): Promise<Taken> {
  const path = `/v1/sandboxes/${encodeURIComponent(sandboxId)}`;
  if (keepMemory) {
    const info = await e2bCall(() => plane.call('GET', path, sandboxInfoSchema, { token: key }));
    requireMemorySnapshot(call, liveInfo(info), keepMemory);
  }
  return e2bCall(() => plane.call('POST', `${path}/snapshots`, snapshotSchema, { token: key }));
}

/** What `fork` needs of the snapshot it took: its id, and the template its copies run. */
type Taken = Pick<NativeSnapshotInfo, 'snapshotId' | 'template'>;

/** What a fork does, its options checked before any call. */
interface ForkPlan {
  readonly count: number;
  readonly keepMemory: boolean;
  readonly timeoutMs: number | undefined;
  readonly connection: ResolvedConnection;
  readonly plane: ControlPlaneClient;
  readonly apiKey: string;
  /** `envs` of the forked sandbox's create, which each copy gets. */
  readonly envs: Readonly<Record<string, string>>;
}

/**
 * `fork`'s options, checked before any call: `count`, `keepMemory`, the copies' `timeoutMs` (as the
 * native create checks it) and the key.
 *
 * @throws InvalidArgumentError, NotSupportedError (E2B's hosted options), AuthenticationError (no key)
 */
function forkPlan(call: string, opts: SandboxForkOpts, envs: Readonly<Record<string, string>>): ForkPlan {
  const connection = resolveConnection(call, opts, FORK_KEYS);
  const { count, keepMemory } = checkForkOpts(call, opts);
  const apiKey = requireApiKey(call, connection);
  try {
    resolveSandboxOptions(snapshotCreate(ANY_SNAPSHOT, connection, apiKey, opts.timeoutMs).native);
  } catch (error) {
    throw toE2BError(error);
  }
  return {
    count,
    keepMemory,
    timeoutMs: opts.timeoutMs,
    connection,
    plane: new ControlPlaneClient(connection.controlPlaneUrl, connection.requestTimeoutMs),
    apiKey,
    envs,
  };
}

/** A sandbox's native facts while it lives; an ended one is `SandboxNotFoundError`, as E2B's answer. */
function liveInfo(info: NativeSandboxInfo): NativeSandboxInfo {
  e2bInfo(info);
  return info;
}
