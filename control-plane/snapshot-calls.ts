/**
 * The snapshot calls of the control plane's API (issue 26): take a snapshot of a running sandbox, fork
 * one into several (a snapshot, then sandboxes started from it, all or none), list and delete snapshots.
 * The snapshots themselves, their files and their journal records are `snapshot-store.ts`'; creating and
 * killing sandboxes is the control plane's, called back.
 */
import {
  forkRequestSchema,
  type CreateSandboxRequest,
  type SandboxInfo,
  type SnapshotInfo,
} from '../protocol/control-plane-api.js';
import { AuthenticationError, SandboxError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import { settleInBatches } from './batches.js';
import { snapshotCarry, type DaemonTarget } from './daemon-agent.js';
import type { LiveSandbox } from './sandbox-registry.js';
import type { SnapshotStore } from './snapshot-store.js';

/** Sandboxes a fork starts at once (each launch keeps a core busy for a moment). */
const FORK_CONCURRENCY = 4;

/** What a fork answers: the snapshot taken, and each sandbox started from it (with its token). */
export interface ForkedSandboxes {
  readonly snapshot: SnapshotInfo;
  readonly sandboxes: (SandboxInfo & { daemonUrl: string; accessToken: string })[];
}

/** What the snapshot calls need of the control plane. */
export interface SnapshotHost {
  readonly store: SnapshotStore;
  readonly now: () => number;
  isOperator(bearer: string | undefined): boolean;
  /** The live sandbox, for a caller holding its token or the operator key. */
  authorized(id: string, bearer: string | undefined): LiveSandbox;
  /** sandboxd of a running sandbox with the control plane's credential. */
  target(id: string, bearer: string | undefined): DaemonTarget;
  /** An SDK call's activity: resumes the sandbox when suspended with auto-resume. */
  activity(id: string, bearer: string | undefined): Promise<unknown>;
  create(request: CreateSandboxRequest): Promise<SandboxInfo & { daemonUrl: string; accessToken: string }>;
  kill(id: string, bearer: string | undefined): Promise<unknown>;
}

/** The snapshot calls, each checked before anything happens. */
export class SnapshotCalls {
  readonly #host: SnapshotHost;

  constructor(host: SnapshotHost) {
    this.#host = host;
  }

  /**
   * Takes a snapshot of a sandbox (resumed first when it is suspended with autoResume, as any call):
   * memory, processes and files of a gVisor one, files of a namespace one. It goes on running.
   *
   * @throws AuthenticationError, SandboxError `sandbox_not_found`, `sandbox_ended`, `sandbox_suspended`,
   *   `no_space` (the snapshots' cap)
   */
  async take(id: string, token: string | undefined): Promise<SnapshotInfo> {
    await this.#host.activity(id, token);
    const sandbox = this.#host.authorized(id, token);
    if (sandbox.actor.state !== 'running') {
      throw new SandboxError('the sandbox is suspended; resume it first', { code: 'sandbox_suspended' });
    }
    const { limits } = sandbox.facts;
    if (limits === undefined) {
      throw new SandboxError('the sandbox was created before snapshots: none can be taken of it');
    }
    const isolation = sandbox.facts.isolation ?? 'namespace';
    // A memory snapshot's copies take over what sandboxd (outside it) knows of the box's processes.
    const carried = isolation === 'gvisor' ? await snapshotCarry(this.#host.target(id, token)) : undefined;
    return this.#host.store.take(
      {
        sandboxId: id,
        isolation,
        template: sandbox.facts.template,
        launch: {
          allowInternetAccess: sandbox.facts.allowInternetAccess,
          ...(sandbox.facts.egress === undefined ? {} : { egress: sandbox.facts.egress }),
          ...limits,
        },
        ...(carried === undefined ? {} : { carried }),
      },
      this.#host.now(),
    );
  }

  /**
   * Takes a snapshot of a sandbox and starts `count` sandboxes from it at once (operator key, as
   * create): each with its own id, token, network, id range and clocks. All of them, or none: when one
   * fails to start the others are killed.
   *
   * @throws AuthenticationError without the operator key; InvalidArgumentError for a bad count
   */
  async fork(id: string, body: unknown, bearer: string | undefined): Promise<ForkedSandboxes> {
    this.#operatorOnly(bearer);
    const { count } = parseOptions(forkRequestSchema, body, 'sbx.fork');
    const snapshot = await this.take(id, bearer);
    const started = await settleInBatches(count, FORK_CONCURRENCY, () =>
      this.#host.create({ snapshot: snapshot.snapshotId }),
    );
    const failed = started.find((outcome) => outcome.status === 'rejected');
    const sandboxes = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    if (failed !== undefined) {
      await Promise.all(
        sandboxes.map((created) => this.#host.kill(created.sandboxId, bearer).catch(() => undefined)),
      );
      throw failed.reason;
    }
    return { snapshot, sandboxes };
  }

  /**
   * Every snapshot (operator key), or those of one sandbox.
   *
   * @throws AuthenticationError without the operator key
   */
  list(bearer: string | undefined, sandboxId?: string): SnapshotInfo[] {
    this.#operatorOnly(bearer);
    return sandboxId === undefined ? this.#host.store.list() : this.#host.store.of(sandboxId);
  }

  /**
   * Deletes a snapshot and its files (operator key).
   *
   * @throws AuthenticationError; InvalidArgumentError `snapshot` for an unknown id
   */
  async delete(snapshotId: string, bearer: string | undefined): Promise<void> {
    this.#operatorOnly(bearer);
    await this.#host.store.delete(snapshotId);
  }

  #operatorOnly(bearer: string | undefined): void {
    if (!this.#host.isOperator(bearer)) throw new AuthenticationError('missing or invalid operator key');
  }
}
