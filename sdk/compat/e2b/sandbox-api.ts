/**
 * E2B's `SandboxApi`: the calls on a sandbox by id, with the key and no handle (`kill`, `getInfo`,
 * `pause`, `list`, `setTimeout`, `getMetrics`, `updateNetwork`, and the snapshot calls by id, which
 * `sandbox-snapshots.ts` makes), inherited by the shim's `Sandbox` as E2B's `Sandbox extends
 * SandboxApi`. The calls that give a handle (`create`, `connect`, `fork`) are `sandbox.ts`'; this module
 * never imports it, so what both need (the access tokens this process knows, `setTimeout`'s check) is
 * here.
 */
import { egressPolicySchema } from '../../../rules/egress-policy.js';
import { parseOptions } from '../../../rules/parse-options.js';
import { sandboxInfoSchema, setTimeoutRequestSchema } from '../../../protocol/control-plane-api.js';
import { egressPolicyWire } from '../../../protocol/egress-wire.js';
import { readMetrics } from '../../sandbox-metrics.js';
import type { ConnectionOpts } from './connection.js';
import { SandboxNotFoundError, e2bCall, e2bParse } from './errors.js';
import { e2bMetric, metricsRange, type SandboxMetrics, type SandboxMetricsOpts } from './sandbox-metrics.js';
import { updateEgress, type SandboxNetworkUpdate } from './network.js';
import { checkSandboxId, operatorCall } from './operator-call.js';
import { SandboxPaginator, e2bInfo, type SandboxInfo, type SandboxListOpts } from './sandbox-info.js';
import { createSnapshotById, deleteSnapshot, listSnapshots } from './sandbox-snapshots.js';
import type { CreateSnapshotOpts, SnapshotInfo, SnapshotListOpts, SnapshotPaginator } from './snapshots.js';

/**
 * Access tokens of the sandboxes this process created or connected, by id: E2B connects with the key
 * alone, so `Sandbox.connect(id)` needs no token for them. A handle adds its sandbox's; a kill, by id or
 * on a handle, forgets it.
 */
export const knownTokens = new Map<string, string>();

/** True when `error` says the sandbox is gone (E2B answers such calls with `false`). */
export const gone = (error: unknown): boolean => error instanceof SandboxNotFoundError;

/** `timeoutMs` of `setTimeout`, checked before any call as the native wire takes it (1 ms to 8 h). */
export function checkTimeout(call: string, timeoutMs: unknown): number {
  return e2bParse(setTimeoutRequestSchema.shape.timeoutMs, timeoutMs, call, ['timeoutMs']);
}

/**
 * The calls on sandboxes by id that need no handle, as E2B's `SandboxApi`: the shim's `Sandbox` extends
 * it, so they are `Sandbox.kill`, `Sandbox.getInfo`, `Sandbox.list`, `Sandbox.setTimeout`, ….
 */
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a base of statics, as E2B's SandboxApi: `Sandbox` inherits them
export class SandboxApi {
  /** Ends a sandbox by id with the key; false when it did not exist or had ended. */
  static async kill(sandboxId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    const { plane, key } = operatorCall('Sandbox.kill', opts);
    try {
      knownTokens.delete(checkSandboxId(sandboxId));
      await e2bCall(() =>
        plane.call('DELETE', `/v1/sandboxes/${encodeURIComponent(sandboxId)}`, sandboxInfoSchema, {
          token: key,
        }),
      );
      return true;
    } catch (error) {
      if (gone(error)) return false;
      throw error;
    }
  }

  /**
   * A sandbox's facts by id, with the key: its template, `metadata`, `startedAt`, `endAt`, state, egress.
   *
   * @throws SandboxNotFoundError when missing or ended
   */
  static async getInfo(sandboxId: string, opts: ConnectionOpts = {}): Promise<SandboxInfo> {
    const { plane, key } = operatorCall('Sandbox.getInfo', opts);
    checkSandboxId(sandboxId);
    return e2bInfo(
      await e2bCall(() =>
        plane.call('GET', `/v1/sandboxes/${encodeURIComponent(sandboxId)}`, sandboxInfoSchema, {
          token: key,
        }),
      ),
    );
  }

  /** Pauses a sandbox by id, with the key; false when it was paused already. */
  static async pause(sandboxId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    const { plane, key } = operatorCall('Sandbox.pause', opts);
    checkSandboxId(sandboxId);
    const info = await SandboxApi.getInfo(sandboxId, opts);
    if (info.state === 'paused') return false;
    await e2bCall(() =>
      plane.call('POST', `/v1/sandboxes/${encodeURIComponent(sandboxId)}/pause`, sandboxInfoSchema, {
        token: key,
      }),
    );
    return true;
  }

  /** E2B's `betaPause`: `pause`. */
  static async betaPause(sandboxId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    return SandboxApi.pause(sandboxId, opts);
  }

  /**
   * The running and paused sandboxes of the control plane, with the key (one page per `limit`): those
   * whose metadata holds every entry of `query.metadata`, in one of `query.state`, started at or after
   * `query.startedAfter`, of `query.template`; newest first (`order: 'asc'`: oldest first).
   *
   * @example
   * ```ts
   * const paginator = Sandbox.list({ query: { metadata: { userId: '123' }, state: ['running'] } });
   * while (paginator.hasNext) console.log(await paginator.nextItems());
   * ```
   * @throws InvalidArgumentError for a malformed query, order, limit or nextToken, before any call
   */
  static list(opts: SandboxListOpts = {}): SandboxPaginator {
    const { plane, key } = operatorCall('Sandbox.list', opts, ['query', 'order', 'limit', 'nextToken']);
    return new SandboxPaginator(plane, key, opts);
  }

  /**
   * Sets a sandbox by id, with the key, to end `timeoutMs` from now, sooner or later than before (E2B's
   * `Sandbox.setTimeout`; `POST /v1/sandboxes/{id}/timeout`). A paused sandbox stays paused, its lifetime
   * counting on. E2B caps a sandbox's life at 24 h (Pro); here it is 8 h from its creation, running plus
   * suspended.
   *
   * @throws InvalidArgumentError for a `timeoutMs` that is not a whole number from 1 to 28 800 000 (8 h),
   *   before any call, or that reaches past 8 h from the sandbox's creation (nothing changed)
   * @throws SandboxNotFoundError when there is no such sandbox or it has ended
   */
  static async setTimeout(sandboxId: string, timeoutMs: number, opts: ConnectionOpts = {}): Promise<void> {
    const { plane, key } = operatorCall('Sandbox.setTimeout', opts);
    checkSandboxId(sandboxId);
    const checked = checkTimeout('Sandbox.setTimeout', timeoutMs);
    await e2bCall(() =>
      plane.call('POST', `/v1/sandboxes/${encodeURIComponent(sandboxId)}/timeout`, sandboxInfoSchema, {
        token: key,
        body: { timeoutMs: checked },
      }),
    );
  }

  /**
   * A sandbox's metrics samples by id, with the key: CPU, memory and disk every few seconds while it
   * ran, oldest first, those in `[start, end]` when given.
   *
   * @throws InvalidArgumentError for a malformed `start` / `end` or option, before any call
   * @throws SandboxNotFoundError when there is no such sandbox
   */
  static async getMetrics(sandboxId: string, opts: SandboxMetricsOpts = {}): Promise<SandboxMetrics[]> {
    const { plane, key } = operatorCall('Sandbox.getMetrics', opts, ['start', 'end']);
    checkSandboxId(sandboxId);
    const range = metricsRange('Sandbox.getMetrics', opts);
    const samples = await e2bCall(() => readMetrics(plane, sandboxId, range, key, 'Sandbox.getMetrics'));
    return samples.map(e2bMetric);
  }

  /** E2B's deprecated `getFullInfo`: `getInfo`. */
  static async getFullInfo(sandboxId: string, opts: ConnectionOpts = {}): Promise<SandboxInfo> {
    return SandboxApi.getInfo(sandboxId, opts);
  }

  /**
   * Replaces a sandbox's egress rules by id, with the key (`PUT /v1/sandboxes/{id}/egress`): E2B's
   * `network` mapped as at create (`sbx.updateNetwork`). What is left out is cleared, as in E2B.
   *
   * @throws InvalidArgumentError for a malformed option or entry, before any call
   * @throws NotSupportedError for `rules` or `egressProxy`, before any call
   * @throws SandboxNotFoundError when there is no such sandbox or it has ended
   */
  static async updateNetwork(
    sandboxId: string,
    network: SandboxNetworkUpdate,
    opts: ConnectionOpts = {},
  ): Promise<void> {
    const { plane, key } = operatorCall('Sandbox.updateNetwork', opts);
    checkSandboxId(sandboxId);
    const body = updateEgress('Sandbox.updateNetwork', network);
    await e2bCall(() =>
      plane.call('PUT', `/v1/sandboxes/${encodeURIComponent(sandboxId)}/egress`, egressPolicyWire, {
        token: key,
        body: parseOptions(egressPolicySchema, body, 'Sandbox.updateNetwork'),
      }),
    );
  }

  /**
   * Takes a snapshot of a sandbox by id, with the key; the sandbox goes on running. E2B's snapshot keeps
   * the memory: a gVisor sandbox's does; of a namespace sandbox (files only) it is refused unless
   * `keepMemory: false`. Start a sandbox from it with `Sandbox.create(snapshotId)`.
   *
   * @throws NotSupportedError for `name`, and for a memory snapshot of a namespace sandbox
   * @throws SandboxNotFoundError when there is no such sandbox or it has ended
   */
  static async createSnapshot(sandboxId: string, opts: CreateSnapshotOpts = {}): Promise<SnapshotInfo> {
    return createSnapshotById(sandboxId, opts);
  }

  /** The control plane's snapshots (or one sandbox's), with the key, oldest first, in pages of `limit`. */
  static listSnapshots(opts: SnapshotListOpts = {}): SnapshotPaginator {
    return listSnapshots(opts);
  }

  /**
   * Deletes a snapshot and its files, with the key; false when there was no such snapshot. Sandboxes
   * started from it go on.
   */
  static async deleteSnapshot(snapshotId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    return deleteSnapshot(snapshotId, opts);
  }
}
