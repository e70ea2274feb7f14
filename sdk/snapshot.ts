/**
 * Snapshots of sandboxes (issue 26): what `sbx.snapshot()` returns, `Sandbox.create({ snapshot })`
 * starts from and `sbx.fork()` takes on the way. A gVisor sandbox's snapshot holds its processes, memory
 * and files (`kind: 'memory'`); a namespace sandbox's its own files (`'filesystem'`): its changes to its
 * template and its home. A snapshot never holds a gateway's value or a token: a sandbox started from one
 * has no gateways until its creator gives them (`Sandbox.create({ snapshot, gateways })`).
 */
import { z } from 'zod';
import {
  snapshotListSchema,
  type Isolation,
  type SnapshotInfo,
  type SnapshotKind,
} from '../protocol/control-plane-api.js';
import { SANDBOX_ID, SANDBOX_ID_RULE, SNAPSHOT_ID } from '../rules/names.js';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { ControlPlaneClient, controlPlaneUrl, operatorKey } from './control-plane-client.js';

const listOptions = z.strictObject({
  /** Control plane address; `SDK_CONTROL_PLANE_URL` or http://127.0.0.1:4780 by default. */
  controlPlaneUrl: httpUrlSchema.optional(),
  /** Only the snapshots of this sandbox. */
  sandboxId: z.string().regex(SANDBOX_ID, SANDBOX_ID_RULE).optional(),
});

const deleteOptions = z.strictObject({ controlPlaneUrl: httpUrlSchema.optional() });

const SNAPSHOT_ID_SCHEMA = z.string().regex(SNAPSHOT_ID, 'must be a snapshot id (snap_ and 16 hex digits)');

/**
 * A snapshot a control plane keeps.
 *
 * @example
 * ```ts
 * const snapshot = await sbx.snapshot();
 * const copy = await Sandbox.create({ snapshot, gateways: { llm } });
 * for (const s of await Snapshot.list()) console.log(s.id, s.kind, s.bytes);
 * await Snapshot.delete(snapshot.id);
 * ```
 */
export class Snapshot {
  /** `snap_` and 16 hex digits. */
  readonly id: string;
  /** The sandbox it was taken of. */
  readonly sandboxId: string;
  /** When it was taken, ms since the epoch. */
  readonly createdAt: number;
  /** `memory` (gVisor: processes, memory, files) or `filesystem` (namespaces: files only). */
  readonly kind: SnapshotKind;
  readonly isolation: Isolation;
  readonly template: string;
  /** What it takes in the control plane's state folder. */
  readonly bytes: number;

  /** @internal from the control plane's answer */
  constructor(info: SnapshotInfo) {
    this.id = info.snapshotId;
    this.sandboxId = info.sandboxId;
    this.createdAt = info.createdAt;
    this.kind = info.kind;
    this.isolation = info.isolation;
    this.template = info.template;
    this.bytes = info.bytes;
  }

  /**
   * Every snapshot of the control plane (or of one sandbox), oldest first; the operator key
   * (`SDK_API_KEY`).
   *
   * @throws InvalidArgumentError for bad options, before any call; AuthenticationError without the key
   */
  static async list(options: z.input<typeof listOptions> = {}): Promise<Snapshot[]> {
    const o = parseOptions(listOptions, options, 'Snapshot.list');
    const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl));
    const path = o.sandboxId === undefined ? '/v1/snapshots' : `/v1/sandboxes/${o.sandboxId}/snapshots`;
    const { snapshots } = await plane.call('GET', path, snapshotListSchema, { token: operatorKey() });
    return snapshots.map((info) => new Snapshot(info));
  }

  /**
   * Deletes a snapshot and its files; the operator key (`SDK_API_KEY`).
   *
   * @throws InvalidArgumentError for a malformed or unknown id; AuthenticationError without the key
   */
  static async delete(id: string, options: z.input<typeof deleteOptions> = {}): Promise<void> {
    const snapshotId = parseOptions(SNAPSHOT_ID_SCHEMA, id, 'Snapshot.delete', ['id']);
    const o = parseOptions(deleteOptions, options, 'Snapshot.delete');
    const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl));
    await plane.call('DELETE', `/v1/snapshots/${snapshotId}`, z.strictObject({}), { token: operatorKey() });
  }
}
