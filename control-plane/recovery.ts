/**
 * Recovery (DESIGN.md §1): on start the journal is replayed into the registry without effects, then the
 * world is made to match it, so a control plane killed at any moment and started again loses no sandbox
 * and leaks nothing. Compaction writes the registry back as the records replay starts from.
 * Reconciliation touches only what the driver lists: the driver instance's own sandboxes.
 */
import type { SandboxMachineEvent } from '../machines/sandbox-machine.js';
import type { SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import type { JournalRecord } from './journal-records.js';
import type { LiveSandbox, SandboxRegistry } from './sandbox-registry.js';
import type { SnapshotStore } from './snapshot-store.js';
import type { Webhooks } from './webhooks.js';

/** What recovery works with. */
export interface RecoveryTargets {
  /** The journal's records, as read at open. */
  readonly records: readonly JournalRecord[];
  /** Empty: the journal is replayed into it. */
  readonly registry: SandboxRegistry;
  /** Empty: the journal's snapshots are replayed into it. */
  readonly snapshots: SnapshotStore;
  readonly driver: SandboxDriver;
  /** Sends an event to a live sandbox (its effects run). */
  readonly send: (sandbox: LiveSandbox, event: SandboxMachineEvent) => Promise<void>;
  /** Follows a live sandbox's daemon. */
  readonly follow: (sandbox: LiveSandbox) => void;
  /** Takes the webhook records, and begins once the journal is replayed (before reconciliation). */
  readonly webhooks: Pick<Webhooks, 'replay' | 'begin'>;
}

/**
 * Replays the journal into the registry, then reconciles it with the driver: a live sandbox the driver
 * still has is frozen or thawed as journaled, watched and followed; one it no longer has ends as killed;
 * an ended one whose resources remain is destroyed; resources nobody journaled as created (launches cut
 * short by a crash, warm sandboxes never handed over) are destroyed.
 */
export async function recover(targets: RecoveryTargets): Promise<void> {
  const { registry, driver, snapshots } = targets;
  replay(targets.records, registry, snapshots, targets.webhooks);
  await targets.webhooks.begin(); // what reconciliation changes goes to the destinations given now
  await snapshots.removeStrays();
  const existing = new Set(await driver.list());
  for (const sandbox of registry.liveSandboxes()) {
    const { id } = sandbox.actor;
    const alive = existing.has(id);
    existing.delete(id);
    if (sandbox.actor.state === 'ended') {
      // A crash between journaling the end and destroying; a destroy that fails again is left for the
      // next start rather than failing this one.
      if (alive) await driver.destroy(id).catch(() => undefined);
      registry.release(sandbox);
    } else if (!alive) {
      await targets.send(sandbox, { type: 'kill' }); // gone while we were down
    } else {
      // Make the world match the journal; a sandbox whose sandboxd died meanwhile is reported by the
      // watch, which fires at once for an empty sandbox.
      await (sandbox.actor.state === 'suspended' ? driver.pause(id) : driver.resume(id)).catch(
        () => undefined,
      );
      driver.watch(id);
      targets.follow(sandbox);
    }
  }
  // Resources nobody journaled as created: launches cut short by a crash.
  for (const id of [...existing, ...registry.launching]) await driver.destroy(id).catch(() => undefined);
  registry.launching.clear();
}

/**
 * The records a compaction writes: the webhooks' (their destinations and deliveries waiting), one per
 * sandbox (an ended one's facts, a live one's persisted snapshot) and the launches in flight. Replayed,
 * they rebuild the same registry and webhook queue.
 */
export function compactionRecords(
  registry: SandboxRegistry,
  snapshots: SnapshotStore,
  webhooks: Pick<Webhooks, 'records'>,
): JournalRecord[] {
  return [
    ...webhooks.records(),
    ...snapshots.records().map((snapshot): JournalRecord => ({ kind: 'snapshot_taken', snapshot })),
    ...[...snapshots.taking].map((snapshotId): JournalRecord => ({ kind: 'snapshot_taking', snapshotId })),
    ...[...registry.tombstones()].map(([id, ended]): JournalRecord => ({ kind: 'ended', id, ...ended })),
    ...[...registry.liveSandboxes()].map((sandbox): JournalRecord => ({
      kind: 'snapshot',
      id: sandbox.actor.id,
      input: sandbox.input,
      facts: sandbox.facts,
      ...sandbox.actor.persisted(),
    })),
    ...[...registry.launching].map((id): JournalRecord => ({ kind: 'launching', id })),
  ];
}

/** Applies the records to the registry in order, without effects. */
function replay(
  records: readonly JournalRecord[],
  registry: SandboxRegistry,
  snapshots: SnapshotStore,
  webhooks: Pick<Webhooks, 'replay'>,
): void {
  const { launching } = registry;
  for (const record of records) {
    if (record.kind === 'snapshot_taking') snapshots.taking.add(record.snapshotId);
    else if (record.kind === 'snapshot_taken') snapshots.replayTaken(record.snapshot);
    else if (record.kind === 'snapshot_deleted') snapshots.replayDeleted(record.snapshotId);
    else if (record.kind === 'launching') launching.add(record.id);
    else if (record.kind === 'launch_failed') launching.delete(record.id);
    else if (record.kind === 'created') {
      launching.delete(record.id);
      registry.adopt(record.id, record.input, record.facts);
    } else if (record.kind === 'snapshot') {
      launching.delete(record.id);
      registry.adopt(record.id, record.input, record.facts, { snapshot: record.snapshot, seq: record.seq });
    } else if (record.kind === 'ended') {
      registry.bury(record.id, { info: record.info, facts: record.facts });
    } else if (record.kind === 'egress') {
      registry.setEgress(record.id, record.egress);
    } else if (record.kind === 'ports') {
      registry.setPublicPorts(record.id, record.publicPorts);
    } else if (
      record.kind === 'webhook_destinations' ||
      record.kind === 'webhook_delivered' ||
      record.kind === 'webhook_pending'
    ) {
      webhooks.replay(record);
    } else {
      registry.find(record.id)?.actor.replay(record.event, record.seq);
    }
  }
}
