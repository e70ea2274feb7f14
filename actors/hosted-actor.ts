/**
 * The one actor runtime (DESIGN.md §5): an XState actor (`createActor`) of a machine whose effects are
 * actions the host provides. A transition only queues the effects it names; the host's typed effects
 * run them afterwards, in order. Two ways to feed an actor:
 *   - `send`: journaled. The event is written with the actor's next sequence number (only when the
 *     machine can take it) and applied once that resolved; an effect that fails comes back as its
 *     failure event, journaled and applied too, so the state never claims what did not happen.
 *   - `sendNow`: for actors that live and die with their process (a gateway route inside sandboxd):
 *     applied at once, effects run synchronously before it returns.
 * Every transition, replayed ones included, is reported to the actor system's inspection feed.
 */
import {
  createActor,
  type AnyActor,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';
import type { ActorKind, ActorSystem } from './actor-system.js';

/** Writes a journaled event durably; the event is applied only after it resolves. */
export type JournalWriter<TEvent> = (event: TEvent, seq: number) => Promise<void> | void;

/** An effect failed; its failure event was journaled and applied. */
export class EffectFailedError extends Error {
  constructor(readonly effect: string) {
    super(`the ${effect} effect failed`);
    this.name = 'EffectFailedError';
  }
}

/** How to host one actor. */
export interface HostedActorOptions<TMachine extends AnyStateMachine, TEffect extends string> {
  readonly id: string;
  readonly kind: ActorKind;
  /** The effect actions the machine names; running the machine queues them. */
  readonly effects: readonly TEffect[];
  /** The event that reports a failed effect; an effect without one rethrows its failure. */
  readonly failures?: Partial<Record<TEffect, EventFromLogic<TMachine>>>;
  readonly input?: InputFrom<TMachine>;
  /** Where transitions are reported. */
  readonly system?: ActorSystem | undefined;
  /** Wall-clock time for inspection records. */
  readonly now?: () => number;
  /** A persisted snapshot to continue from (after compaction), with the sequence number it holds. */
  readonly restore?: { readonly snapshot: unknown; readonly seq: number } | undefined;
  /** Called after every transition with the state value. */
  readonly onTransition?: (state: string) => void;
}

/** One hosted actor. Journaled events are handled one at a time. */
export class HostedActor<TMachine extends AnyStateMachine, TEffect extends string> {
  readonly id: string;
  readonly #options: HostedActorOptions<TMachine, TEffect>;
  readonly #actor: AnyActor;
  #pending: TEffect[] = [];
  #seq: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(machine: TMachine, options: HostedActorOptions<TMachine, TEffect>) {
    this.id = options.id;
    this.#options = options;
    this.#seq = options.restore?.seq ?? 0;
    const queued = Object.fromEntries(
      options.effects.map((effect) => [effect, () => void this.#pending.push(effect)]),
    );
    // The machine's own action map is typed per machine; the effect names are checked by `TEffect`.
    const provided = machine.provide({ actions: queued } as never) as AnyStateMachine;
    this.#actor = createActor(provided, {
      ...(options.input === undefined ? {} : { input: options.input }),
      ...(options.restore === undefined ? {} : { snapshot: options.restore.snapshot as never }),
    });
    this.#actor.start();
    this.#pending = [];
  }

  /** The current snapshot. */
  get snapshot(): SnapshotFrom<TMachine> {
    return this.#actor.getSnapshot() as SnapshotFrom<TMachine>;
  }

  /** The machine snapshot's own interface (`can`, `value`), whatever the machine. */
  get #machineSnapshot(): AnyMachineSnapshot {
    return this.#actor.getSnapshot() as AnyMachineSnapshot;
  }

  /** The sequence number of the last event applied. */
  get seq(): number {
    return this.#seq;
  }

  /** The persisted snapshot and its sequence number, for compaction (JSON-safe). */
  persisted(): { readonly snapshot: unknown; readonly seq: number } {
    return { snapshot: this.#actor.getPersistedSnapshot(), seq: this.#seq };
  }

  /**
   * Applies a journaled event without effects (replay). An event at or below the sequence number the
   * actor already holds (from a snapshot) is skipped; without a number it is the next one.
   */
  replay(event: EventFromLogic<TMachine>, seq = this.#seq + 1): void {
    if (seq <= this.#seq) return;
    this.#apply(event, seq, true);
    this.#pending = [];
  }

  /**
   * A journaled event (see the module comment). Resolves once its effects ran.
   *
   * @throws EffectFailedError when an effect with a failure event failed (the failure is applied)
   */
  send(
    event: EventFromLogic<TMachine>,
    journal: JournalWriter<EventFromLogic<TMachine>>,
    effects: Readonly<Record<TEffect, (id: string) => Promise<void>>>,
  ): Promise<void> {
    const run = this.#queue.then(() => this.#handle(event, journal, effects));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** An event applied at once, its effects run before this returns (see the module comment). */
  sendNow(event: EventFromLogic<TMachine>, effects: Readonly<Record<TEffect, (id: string) => void>>): void {
    if (!this.#machineSnapshot.can(event)) return;
    this.#apply(event, this.#seq + 1, false);
    for (const effect of this.#pending.splice(0)) effects[effect](this.id);
  }

  /** Stops the actor (its machine takes no more events). */
  stop(): void {
    this.#actor.stop();
  }

  async #handle(
    event: EventFromLogic<TMachine>,
    journal: JournalWriter<EventFromLogic<TMachine>>,
    effects: Readonly<Record<TEffect, (id: string) => Promise<void>>>,
  ): Promise<void> {
    if (!this.#machineSnapshot.can(event)) return;
    const seq = this.#seq + 1;
    await journal(event, seq);
    this.#apply(event, seq, false);
    for (const effect of this.#pending.splice(0)) {
      try {
        await effects[effect](this.id);
      } catch (error) {
        const failed = this.#options.failures?.[effect];
        if (failed === undefined) throw error;
        await this.#handle(failed, journal, effects);
        throw new EffectFailedError(effect);
      }
    }
  }

  #apply(event: EventFromLogic<TMachine>, seq: number, replayed: boolean): void {
    this.#actor.send(event);
    this.#seq = seq;
    const state = stateName(this.#machineSnapshot.value);
    this.#options.system?.record({
      actorId: this.id,
      kind: this.#options.kind,
      seq,
      event: event,
      state,
      at: (this.#options.now ?? Date.now)(),
      replayed,
    });
    this.#options.onTransition?.(state);
  }
}

/** `running` or `{ running: 'active' }` as `running.active`. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0] ?? ['', undefined];
  return child === undefined ? key : `${key}.${stateName(child)}`;
}
