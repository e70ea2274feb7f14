/**
 * One sandbox as an XState actor of the sandbox machine (`createActor`). The machine's effects
 * (`freeze`, `thaw`, `destroy`) are actions this actor provides: running the machine only queues them;
 * after the transition the host's typed effects run them, in order, and a failed `freeze` or `thaw`
 * comes back as an event (`freeze_failed`, `thaw_failed`), journaled like any other, so the state never
 * claims what did not happen. Every event the machine can take is journaled with the actor's own
 * sequence number before it is applied; replay applies journaled events without effects.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import { createActor, type Actor, type SnapshotFrom } from 'xstate';
import {
  sandboxMachine,
  sandboxNextDueAt,
  type SandboxMachineEvent,
  type SandboxMachineInput,
} from '../machines/sandbox-machine.js';
import type { ActorSystem } from './actor-system.js';

/** The sandbox machine's snapshot. */
export type SandboxSnapshot = SnapshotFrom<typeof sandboxMachine>;

/** Sandbox states as the API reports them. */
export type SandboxStateName = 'running' | 'suspended' | 'ended';

/** The effects a sandbox machine names, provided by the host (the control plane, with its driver). */
export interface SandboxEffects {
  freeze(id: string): Promise<void>;
  thaw(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
}

type Effect = keyof SandboxEffects;

/** The event that reports a failed effect; `destroy` has none (the sandbox has ended either way). */
const FAILED: Readonly<Record<Effect, SandboxMachineEvent | undefined>> = {
  freeze: { type: 'freeze_failed' },
  thaw: { type: 'thaw_failed' },
  destroy: undefined,
};

/** Writes a journaled event durably; the event is applied only after it resolves. */
export type JournalWriter = (event: SandboxMachineEvent, seq: number) => Promise<void> | void;

/** An effect failed; its outcome event was journaled and applied. */
export class EffectFailedError extends Error {
  constructor(readonly effect: Effect) {
    super(`the sandbox's ${effect} failed`);
    this.name = 'EffectFailedError';
  }
}

/** What an actor needs from its host besides the machine input. */
export interface SandboxActorOptions {
  /** Where transitions are reported. */
  readonly system?: ActorSystem;
  /** Wall-clock time for inspection records. */
  readonly now?: () => number;
  /** A persisted snapshot to continue from (after compaction), with the sequence number it holds. */
  readonly restore?: { readonly snapshot: unknown; readonly seq: number };
}

/** One sandbox actor. Events are handled one at a time. */
export class SandboxActor {
  readonly id: string;
  readonly #actor: Actor<typeof sandboxMachine>;
  readonly #system: ActorSystem | undefined;
  readonly #now: () => number;
  readonly #state$: BehaviorSubject<SandboxStateName>;
  /** Effects the last transition asked for, in order. */
  #pending: Effect[] = [];
  #seq: number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(id: string, input: SandboxMachineInput, options: SandboxActorOptions = {}) {
    this.id = id;
    this.#system = options.system;
    this.#now = options.now ?? Date.now;
    this.#seq = options.restore?.seq ?? 0;
    const queue = (effect: Effect) => (): void => {
      this.#pending.push(effect);
    };
    const machine = sandboxMachine.provide({
      actions: { freeze: queue('freeze'), thaw: queue('thaw'), destroy: queue('destroy') },
    });
    this.#actor = createActor(machine, {
      input,
      ...(options.restore === undefined ? {} : { snapshot: options.restore.snapshot as SandboxSnapshot }),
    });
    this.#actor.start();
    this.#pending = [];
    this.#state$ = new BehaviorSubject(this.state);
    if (this.state === 'ended') this.#state$.complete();
  }

  /** The current state. */
  get state(): SandboxStateName {
    return this.#actor.getSnapshot().value;
  }

  /** The machine's snapshot (context included). */
  get snapshot(): SandboxSnapshot {
    return this.#actor.getSnapshot();
  }

  /** The sequence number of the last event this actor applied. */
  get seq(): number {
    return this.#seq;
  }

  /** Every state, the current one first. */
  get state$(): Observable<SandboxStateName> {
    return this.#state$.asObservable();
  }

  /** When the host must next send `clock`, or undefined once ended. */
  get nextDueAt(): number | undefined {
    return sandboxNextDueAt(this.snapshot);
  }

  /** The persisted snapshot and its sequence number, for compaction (JSON-safe). */
  persisted(): { readonly snapshot: unknown; readonly seq: number } {
    return { snapshot: this.#actor.getPersistedSnapshot(), seq: this.#seq };
  }

  /**
   * Applies a journaled event without effects (replay). An event at or below the sequence number the
   * actor already holds (from a snapshot) is skipped; without a number it is the next one.
   */
  replay(event: SandboxMachineEvent, seq = this.#seq + 1): void {
    if (seq <= this.#seq) return;
    this.#apply(event, seq, true);
    this.#pending = [];
  }

  /**
   * Handles a live event: when the machine can take it, `journal` writes it with the next sequence
   * number and the event is applied once that resolved; then the effects run, and a failed one is fed
   * back as its event. Resolves with the state afterwards.
   *
   * @throws EffectFailedError when `freeze` or `thaw` failed (their outcome is journaled and applied)
   */
  send(
    event: SandboxMachineEvent,
    journal: JournalWriter,
    effects: SandboxEffects,
  ): Promise<SandboxStateName> {
    const run = this.#queue.then(() => this.#handle(event, journal, effects));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #handle(
    event: SandboxMachineEvent,
    journal: JournalWriter,
    effects: SandboxEffects,
  ): Promise<SandboxStateName> {
    if (!this.snapshot.can(event)) return this.state;
    const seq = this.#seq + 1;
    await journal(event, seq);
    this.#apply(event, seq, false);
    for (const effect of this.#pending.splice(0)) {
      try {
        await effects[effect](this.id);
      } catch (error) {
        const failed = FAILED[effect];
        if (failed === undefined) throw error;
        await this.#handle(failed, journal, effects);
        throw new EffectFailedError(effect);
      }
    }
    return this.state;
  }

  #apply(event: SandboxMachineEvent, seq: number, replayed: boolean): void {
    this.#actor.send(event);
    this.#seq = seq;
    this.#system?.record({
      actorId: this.id,
      kind: 'sandbox',
      seq,
      event,
      state: this.state,
      at: this.#now(),
      replayed,
    });
    if (this.#state$.value !== this.state) this.#state$.next(this.state);
    if (this.state === 'ended') this.#state$.complete();
  }
}
