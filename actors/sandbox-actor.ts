/**
 * One sandbox as an event-sourced actor of the sandbox machine: an event is journaled, then applied with
 * `transition()`, then its effects run (freeze, thaw, destroy) in order. Replay folds the journaled
 * events without running effects; reconciliation afterwards makes the world match.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import {
  sandboxMachine,
  sandboxNextDueAt,
  type SandboxMachineEvent,
  type SandboxMachineInput,
} from '../machines/sandbox-machine.js';

/** The sandbox machine's snapshot. */
export type SandboxSnapshot = SnapshotFrom<typeof sandboxMachine>;

/** Sandbox states as the API reports them. */
export type SandboxStateName = 'running' | 'suspended' | 'ended';

/** The effects a sandbox machine names, provided by the control plane. */
export interface SandboxEffects {
  freeze(id: string): Promise<void>;
  thaw(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
}

const EFFECTS = new Set(['freeze', 'thaw', 'destroy']);

/** One sandbox actor. Events are handled one at a time. */
export class SandboxActor {
  readonly id: string;
  #snapshot: SandboxSnapshot;
  readonly #state$: BehaviorSubject<SandboxStateName>;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(id: string, input: SandboxMachineInput) {
    this.id = id;
    [this.#snapshot] = initialTransition(sandboxMachine, input);
    this.#state$ = new BehaviorSubject(this.state);
  }

  /** The current state. */
  get state(): SandboxStateName {
    return this.#snapshot.value;
  }

  /** The machine's snapshot (context included). */
  get snapshot(): SandboxSnapshot {
    return this.#snapshot;
  }

  /** Every state, the current one first. */
  get state$(): Observable<SandboxStateName> {
    return this.#state$.asObservable();
  }

  /** When the control plane must next send `clock`, or undefined once ended. */
  get nextDueAt(): number | undefined {
    return sandboxNextDueAt(this.#snapshot);
  }

  /** Applies a journaled event without effects (replay). */
  replay(event: SandboxMachineEvent): void {
    [this.#snapshot] = transition(sandboxMachine, this.#snapshot, event);
    this.#publish();
  }

  /**
   * Handles a live event: `journal` is called with it before it is applied (only when the machine takes
   * it), then the effects run. Resolves with the state afterwards.
   */
  send(
    event: SandboxMachineEvent,
    journal: (event: SandboxMachineEvent) => void,
    effects: SandboxEffects,
  ): Promise<SandboxStateName> {
    const run = this.#queue.then(async () => {
      const [next, actions] = transition(sandboxMachine, this.#snapshot, event);
      const named = actions.map((action) => action.type).filter((type) => EFFECTS.has(type));
      // An event that changes neither state nor context and runs no effect was not taken: no record.
      const same = next.value === this.#snapshot.value && !changed(this.#snapshot, next);
      if (same && named.length === 0) return this.state;
      journal(event);
      this.#snapshot = next;
      for (const effect of named) await effects[effect as keyof SandboxEffects](this.id);
      this.#publish();
      return this.state;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #publish(): void {
    if (this.#state$.value !== this.state) this.#state$.next(this.state);
    if (this.state === 'ended') this.#state$.complete();
  }
}

function changed(a: SandboxSnapshot, b: SandboxSnapshot): boolean {
  return JSON.stringify(a.context) !== JSON.stringify(b.context);
}
