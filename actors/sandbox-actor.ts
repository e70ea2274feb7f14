/**
 * One sandbox as a hosted actor (`hosted-actor.ts`) of the sandbox machine: its effects (`freeze`,
 * `thaw`, `destroy`) are the control plane's, run after each transition; a failed `freeze` or `thaw`
 * comes back as `freeze_failed` / `thaw_failed`. Adds what the control plane reads: the state as the API
 * names it, its changes as an observable, and when the next `clock` is due.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import type { SnapshotFrom } from 'xstate';
import {
  sandboxMachine,
  sandboxNextDueAt,
  type SandboxMachineEvent,
  type SandboxMachineInput,
} from '../machines/sandbox-machine.js';
import type { SandboxState } from '../machines/sandbox-table.js';
import type { ActorSystem } from './actor-system.js';
import { EffectFailedError, HostedActor, type JournalWriter as Writer } from './hosted-actor.js';

export { EffectFailedError };

/** The sandbox machine's snapshot. */
export type SandboxSnapshot = SnapshotFrom<typeof sandboxMachine>;

/** Sandbox states as the API reports them: the table's. */
export type SandboxStateName = SandboxState;

/** The effects a sandbox machine names, provided by the host (the control plane, with its driver). */
export interface SandboxEffects {
  freeze(id: string): Promise<void>;
  thaw(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
}

/** Writes a journaled sandbox event durably; the event is applied only after it resolves. */
export type JournalWriter = Writer<SandboxMachineEvent>;

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
  readonly #hosted: HostedActor<typeof sandboxMachine, keyof SandboxEffects>;
  readonly #state$: BehaviorSubject<SandboxStateName>;

  constructor(id: string, input: SandboxMachineInput, options: SandboxActorOptions = {}) {
    this.id = id;
    this.#hosted = new HostedActor(sandboxMachine, {
      id,
      kind: 'sandbox',
      effects: ['freeze', 'thaw', 'destroy'],
      failures: { freeze: { type: 'freeze_failed' }, thaw: { type: 'thaw_failed' } },
      input,
      system: options.system,
      ...(options.now === undefined ? {} : { now: options.now }),
      restore: options.restore,
      onTransition: () => this.#publish(),
    });
    this.#state$ = new BehaviorSubject(this.state);
    if (this.state === 'ended') this.#state$.complete();
  }

  /** The current state. */
  get state(): SandboxStateName {
    return this.#hosted.snapshot.value;
  }

  /** The machine's snapshot (context included). */
  get snapshot(): SandboxSnapshot {
    return this.#hosted.snapshot;
  }

  /** The sequence number of the last event this actor applied. */
  get seq(): number {
    return this.#hosted.seq;
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
    return this.#hosted.persisted();
  }

  /** Applies a journaled event without effects (replay); see `HostedActor.replay`. */
  replay(event: SandboxMachineEvent, seq?: number): void {
    this.#hosted.replay(event, seq);
  }

  /**
   * Handles a live event (journaled, applied, effects run); resolves with the state afterwards.
   *
   * @throws EffectFailedError when `freeze` or `thaw` failed (their outcome is journaled and applied)
   */
  async send(
    event: SandboxMachineEvent,
    journal: JournalWriter,
    effects: SandboxEffects,
  ): Promise<SandboxStateName> {
    await this.#hosted.send(event, journal, effects);
    return this.state;
  }

  #publish(): void {
    if (this.#state$.value === 'ended') return; // completed
    if (this.#state$.value !== this.state) this.#state$.next(this.state);
    if (this.state === 'ended') this.#state$.complete();
  }
}
