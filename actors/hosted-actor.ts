/**
 * The one actor runtime (DESIGN.md §5), as XState's pure API means it: each event goes through
 * `transition(machine, snapshot, event)`, which returns the next snapshot and the actions the
 * transition names with their parameters; the host runs those effects itself, in order, each with its
 * parameters, and hears what the machine emits (`emit`, delivered to `on` listeners). Two ways to feed
 * an actor:
 *   - `send`: journaled. The event is written with the actor's next sequence number (only when the
 *     machine can take it) and applied once that resolved; an effect that fails comes back as its
 *     failure event, journaled and applied too, so the state never claims what did not happen.
 *   - `sendNow`: for actors that live and die with their process (a gateway route inside sandboxd):
 *     applied at once, effects run synchronously before it returns.
 * Every transition, replayed ones included, is reported to the actor system's inspection feed.
 */
import {
  createActor,
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EmittedFrom,
  type EventFromLogic,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';
import type { ActorKind, ActorSystem } from './actor-system.js';

/** Writes a journaled event durably; the event is applied only after it resolves. */
export type JournalWriter<TEvent> = (event: TEvent, seq: number) => Promise<void> | void;

/** An effect's parameters, as the machine's transition gave them (none for most). */
export type EffectParams = Readonly<Record<string, unknown>> | undefined;

/** What the host runs for each effect the machine names: the actor's id and the effect's parameters. */
export type Effects<TEffect extends string, TResult> = Readonly<
  Record<TEffect, (id: string, params: EffectParams) => TResult>
>;

/** An event the machine emitted (`emit`). */
export interface EmittedEvent {
  readonly type: string;
  readonly [key: string]: unknown;
}

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
  /** The effect actions the machine names; a transition returns them for the host to run. */
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

/** An action `transition()` returned: a named effect, or one of XState's own (`xstate.emit`). */
interface ReturnedAction {
  readonly type: string;
  readonly params?: unknown;
}

const EMIT = 'xstate.emit';

/** One hosted actor. Journaled events are handled one at a time. */
export class HostedActor<TMachine extends AnyStateMachine, TEffect extends string> {
  readonly id: string;
  readonly #machine: TMachine;
  readonly #options: HostedActorOptions<TMachine, TEffect>;
  readonly #effectNames: ReadonlySet<string>;
  readonly #listeners = new Map<string, Set<(event: EmittedEvent) => void>>();
  #snapshot: AnyMachineSnapshot;
  #seq: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(machine: TMachine, options: HostedActorOptions<TMachine, TEffect>) {
    this.id = options.id;
    this.#machine = machine;
    this.#options = options;
    this.#effectNames = new Set(options.effects);
    this.#seq = options.restore?.seq ?? 0;
    // A persisted snapshot is restored by XState's own reading of it; a new actor starts from its input.
    // (The machine's own input and snapshot types are per machine; these are checked by `TMachine`.)
    const logic = machine as AnyStateMachine;
    this.#snapshot =
      options.restore === undefined
        ? (initialTransition(logic, options.input as never)[0] as AnyMachineSnapshot)
        : (createActor(logic, {
            snapshot: options.restore.snapshot as never,
          }).getSnapshot() as AnyMachineSnapshot);
  }

  /** The current snapshot. */
  get snapshot(): SnapshotFrom<TMachine> {
    return this.#snapshot as SnapshotFrom<TMachine>;
  }

  /** The sequence number of the last event applied. */
  get seq(): number {
    return this.#seq;
  }

  /** The persisted snapshot and its sequence number, for compaction (JSON-safe). */
  persisted(): { readonly snapshot: unknown; readonly seq: number } {
    return { snapshot: this.#machine.getPersistedSnapshot(this.#snapshot), seq: this.#seq };
  }

  /** Hears every event of `type` the machine emits (after the transition's effects ran); returns the stop. */
  on<K extends EmittedFrom<TMachine>['type']>(
    type: K,
    listener: (event: Extract<EmittedFrom<TMachine>, { type: K }>) => void,
  ): () => void {
    const listeners = this.#listeners.get(type) ?? new Set();
    this.#listeners.set(type, listeners);
    // Delivered by type: the event is the machine's emitted event of that type.
    const heard = listener as (event: EmittedEvent) => void;
    listeners.add(heard);
    return () => listeners.delete(heard);
  }

  /**
   * Applies a journaled event without effects (replay). An event at or below the sequence number the
   * actor already holds (from a snapshot) is skipped; without a number it is the next one.
   */
  replay(event: EventFromLogic<TMachine>, seq = this.#seq + 1): void {
    if (seq <= this.#seq) return;
    this.#apply(event, seq, true);
  }

  /**
   * A journaled event (see the module comment). Resolves once its effects ran.
   *
   * @throws EffectFailedError when an effect with a failure event failed (the failure is applied)
   */
  send(
    event: EventFromLogic<TMachine>,
    journal: JournalWriter<EventFromLogic<TMachine>>,
    effects: Effects<TEffect, Promise<void>>,
  ): Promise<void> {
    const run = this.#queue.then(() => this.#handle(event, journal, effects));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * An event applied at once, its effects run before this returns (see the module comment); returns
   * what the machine emitted (a refusal, an outcome), also given to the `on` listeners.
   */
  sendNow(event: EventFromLogic<TMachine>, effects: Effects<TEffect, void>): EmittedEvent[] {
    if (!this.#snapshot.can(event)) return [];
    const actions = this.#apply(event, this.#seq + 1, false);
    for (const action of actions) {
      if (this.#isEffect(action)) effects[action.type](this.id, action.params as EffectParams);
    }
    return this.#deliver(actions);
  }

  /**
   * What `event` would emit now, without applying it: the machine is asked (`transition()` is pure),
   * nothing changes and nothing is recorded. A host learns a refusal (`busy`) this way before it acts.
   */
  peek(event: EventFromLogic<TMachine>): EmittedEvent[] {
    if (this.#snapshot.status === 'stopped' || !this.#snapshot.can(event)) return [];
    return emittedOf(transition(this.#machine, this.#snapshot as never, event)[1]);
  }

  /** Stops the actor: it takes no more events. */
  stop(): void {
    this.#snapshot = { ...this.#snapshot, status: 'stopped' } as AnyMachineSnapshot;
  }

  async #handle(
    event: EventFromLogic<TMachine>,
    journal: JournalWriter<EventFromLogic<TMachine>>,
    effects: Effects<TEffect, Promise<void>>,
  ): Promise<void> {
    if (!this.#snapshot.can(event)) return;
    const seq = this.#seq + 1;
    await journal(event, seq);
    const actions = this.#apply(event, seq, false);
    for (const action of actions) {
      if (!this.#isEffect(action)) continue;
      try {
        await effects[action.type](this.id, action.params as EffectParams);
      } catch (error) {
        const failed = this.#options.failures?.[action.type];
        if (failed === undefined) throw error;
        await this.#handle(failed, journal, effects);
        throw new EffectFailedError(action.type);
      }
    }
    this.#deliver(actions);
  }

  #isEffect(action: ReturnedAction): action is ReturnedAction & { readonly type: TEffect } {
    return this.#effectNames.has(action.type);
  }

  /** The transition's emitted events, given to their listeners. */
  #deliver(actions: readonly ReturnedAction[]): EmittedEvent[] {
    const emitted = emittedOf(actions);
    for (const event of emitted)
      for (const listener of this.#listeners.get(event.type) ?? []) listener(event);
    return emitted;
  }

  /** The next snapshot and its actions; replayed, the actions are dropped by the caller. */
  #apply(event: EventFromLogic<TMachine>, seq: number, replayed: boolean): readonly ReturnedAction[] {
    if (this.#snapshot.status === 'stopped') return [];
    const [next, actions] = transition(this.#machine, this.#snapshot as never, event);
    this.#snapshot = next as AnyMachineSnapshot;
    this.#seq = seq;
    const state = stateName(this.#snapshot.value);
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
    return actions;
  }
}

/** The events among a transition's actions (`xstate.emit`). */
function emittedOf(actions: readonly ReturnedAction[]): EmittedEvent[] {
  return actions
    .filter((action) => action.type === EMIT)
    .map((action) => (action.params as { event: EmittedEvent }).event);
}

/** `running` or `{ running: 'active' }` as `running.active`. */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0] ?? ['', undefined];
  return child === undefined ? key : `${key}.${stateName(child)}`;
}
