/**
 * The read side: what callers see of sandboxes, derived from the actors and never journaled. Each
 * sandbox's state changes go into a sequenced log (`GET /v1/events`, resumable with cursors); every
 * actor transition, and every gateway route transition sandboxd reports, into the inspection feed
 * (`GET /v1/inspect`); `info` gives a sandbox's public facts.
 */
import { map, type Observable } from 'rxjs';
import { ActorSystem, type InspectionRecord } from '../actors/actor-system.js';
import type { SandboxActor } from '../actors/sandbox-actor.js';
import { SequencedLog } from '../actors/sequenced-log.js';
import type { SandboxEvent, SandboxInfo } from '../protocol/control-plane-api.js';
import type { DaemonEvent } from '../protocol/daemon-events.js';
import type { SandboxFacts } from './journal-records.js';
import type { SandboxMachineInput } from '../machines/sandbox-machine.js';
import { policyOfInternetAccess } from '../rules/egress-policy.js';

/** A state change as it is logged, before its sequence number. */
type SandboxChange = Omit<SandboxEvent, 'seq'>;

/** A gateway route's transition as sandboxd's event stream reports it. */
export type DaemonTransition = Extract<DaemonEvent, { readonly type: 'transition' }>;

/**
 * The state-event log and the inspection feed.
 *
 * @example
 * ```ts
 * const projection = new Projection();
 * const actor = new SandboxActor(id, input, { system: projection.system });
 * projection.track(actor);
 * projection.events({ sandboxId: id }).subscribe((event) => console.log(event.state));
 * ```
 */
export class Projection {
  /** The system sandbox actors record their transitions in (the inspection feed's source). */
  readonly system = new ActorSystem();
  /** Every state change, by sandbox; a sandbox's stream ends with its `ended` event. */
  readonly #events = new SequencedLog<SandboxChange>(
    (change) => change.sandboxId,
    (change) => change.state === 'ended',
    10_000,
    // Numbers start above any an earlier process of this control plane handed out (microseconds of the
    // wall clock), so a cursor kept across a restart gets the current states instead of nothing.
    Date.now() * 1000,
  );
  /** Every transition, numbered for cursors (the record keeps its actor's own `seq`). */
  readonly #inspections = new SequencedLog<{ readonly record: InspectionRecord }>(
    (entry) => entry.record.actorId,
    () => false,
    10_000,
    Date.now() * 1000,
  );
  #closed = false;

  constructor() {
    this.system.inspect$.subscribe((record) => this.#inspections.append({ record }));
  }

  /** False while the journal is replayed and reconciled: those transitions are this process's start. */
  #settled = false;

  /** Every transition of every sandbox actor (replayed ones included) and of the gateway routes. */
  get inspect$(): Observable<InspectionRecord> {
    return this.system.inspect$;
  }

  /**
   * The inspection feed with a cursor each: after `after` when given (as far back as the log holds),
   * else from each actor's latest transition; then live.
   */
  inspections(after?: number): Observable<InspectionRecord & { readonly cursor: number }> {
    return this.#inspections.stream({ after }).pipe(map(({ record, seq }) => ({ ...record, cursor: seq })));
  }

  /**
   * State changes with sequence numbers, of one sandbox or of every sandbox: after the cursor `after`
   * when given, else from each sandbox's current state; then live (see `SequencedLog.stream`).
   */
  events(options: {
    readonly sandboxId?: string | undefined;
    readonly after?: number | undefined;
  }): Observable<SandboxEvent> {
    return this.#events.stream({ key: options.sandboxId, after: options.after });
  }

  /** Logs every state of `actor` from now on, its current one first; the `ended` one with its reason. */
  track(actor: SandboxActor): void {
    actor.state$.subscribe((state) => {
      if (this.#closed || !this.#settled) return;
      const { endReason } = actor.snapshot.context;
      this.#events.append({
        sandboxId: actor.id,
        state,
        ...(state === 'ended' && endReason !== undefined ? { endReason } : {}),
      });
    });
  }

  /**
   * Recovery is over: each sandbox's state as this process found it is logged once (not the steps of
   * the replay), and from now on every change is.
   */
  settle(sandboxes: Iterable<SandboxActor>, tombstones: Iterable<SandboxInfo>): void {
    this.#settled = true;
    for (const actor of sandboxes) {
      const { endReason } = actor.snapshot.context;
      this.#events.append({
        sandboxId: actor.id,
        state: actor.state,
        ...(actor.state === 'ended' && endReason !== undefined ? { endReason } : {}),
      });
    }
    for (const info of tombstones) {
      this.#events.append({
        sandboxId: info.sandboxId,
        state: 'ended',
        ...(info.endReason === null ? {} : { endReason: info.endReason }),
      });
    }
  }

  /** A live sandbox's public facts, `seq` being its latest state event's. */
  info(actor: SandboxActor, facts: SandboxFacts, input: SandboxMachineInput): SandboxInfo {
    const { context } = actor.snapshot;
    return {
      sandboxId: actor.id,
      template: facts.template,
      isolation: facts.isolation ?? 'namespace',
      state: actor.state,
      allowInternetAccess: facts.allowInternetAccess,
      egress: facts.egress ?? policyOfInternetAccess(facts.allowInternetAccess),
      endReason: context.endReason ?? null,
      suspendReason: actor.state === 'suspended' ? (context.suspendReason ?? null) : null,
      deadlineAt: context.deadlineAt,
      startedAt: input.now,
      metadata: { ...(facts.metadata ?? {}) },
      seq: this.#events.latestSeq(actor.id),
    };
  }

  /** Gateway routes live in sandboxd: their transitions join the inspection feed from its stream. */
  recordDaemonTransition(sandboxId: string, transition: DaemonTransition): void {
    this.system.record({
      actorId: `${sandboxId}/${transition.actorId}`,
      kind: transition.kind,
      seq: transition.actorSeq,
      event: { type: transition.event },
      state: transition.state,
      at: transition.at,
      replayed: false,
    });
  }

  /** Ends every stream and the inspection feed; later state changes are not logged. */
  close(): void {
    this.#closed = true;
    this.#events.close();
    this.#inspections.close();
    this.system.close();
  }
}
