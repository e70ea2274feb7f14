/**
 * Drives a pure XState machine with an event sequence and checks every step against its spec table:
 * the first row whose `from`, `trigger` and condition (judged by an independent oracle model) match
 * decides the next state and the effects it must request; with no row, the state stays. Terminal states
 * absorb everything. Every reachable context must survive a JSON round trip. Halfway, the snapshot is
 * persisted as JSON, restored, and both runs must continue identically.
 */
import { expect } from 'vitest';
import {
  createActor,
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type StateValue,
} from 'xstate';
import { effectName, type TransitionTable } from '../../../machines/transition-table.js';

/** The spec's meaning of each condition, over a model the oracle keeps itself. */
export interface Oracle<Model, Event extends { readonly type: string }, Condition extends string> {
  readonly conditions: Readonly<Record<Condition, (model: Model, event: Event) => boolean>>;
  /** The model after `event`, given the states the table says were left and reached. */
  update(model: Model, event: Event, from: string, to: string): Model;
  /** Extra checks on the snapshot after a step (outcomes, kept values). */
  check?(model: Model, event: Event, from: string, to: string, context: unknown): void;
}

/** `running` or `{ running: 'active' }` as `running.active`. */
export function stateKey(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value)[0] ?? ['', ''];
  return child === undefined ? key : `${key}.${stateKey(child)}`;
}

function persist(machine: AnyStateMachine, snapshot: unknown): unknown {
  return JSON.parse(JSON.stringify(machine.getPersistedSnapshot(snapshot as never)));
}

interface Step {
  readonly state: string;
  readonly actions: readonly string[];
}

/** Runs the sequence, checking each step; returns the trace and the final persisted snapshot. */
export function checkAgainstTable<Model, Event extends { readonly type: string }, C extends string>(
  machine: AnyStateMachine,
  input: unknown,
  table: TransitionTable<string, string, C>,
  oracle: Oracle<Model, Event, C>,
  initialModel: Model,
  events: readonly Event[],
  restoreAt: number,
): void {
  const run = (
    fromIndex: number,
    start: AnyMachineSnapshot,
    model0: Model,
  ): { trace: Step[]; last: AnyMachineSnapshot } => {
    let snapshot = start;
    let model = model0;
    const trace: Step[] = [];
    for (const event of events.slice(fromIndex)) {
      const from = stateKey(snapshot.value as StateValue);
      const [next, executed] = transition(machine, snapshot, event as never);
      const to = stateKey(next.value as StateValue);
      const actions = executed.map(effectName);
      if (table.terminal.includes(from)) {
        expect(persist(machine, next), `terminal ${from} must absorb ${event.type}`).toEqual(
          persist(machine, snapshot),
        );
        expect(actions).toEqual([]);
      } else {
        const row = table.rows.find(
          (r) =>
            r.from === from &&
            r.trigger === event.type &&
            (r.when === undefined || oracle.conditions[r.when](model, event)),
        );
        expect(to, `${from} --${event.type}--> (row: ${row?.spec ?? 'none'})`).toBe(row?.to ?? from);
        for (const effect of row?.effects ?? [])
          expect(actions, `${row?.spec ?? ''} requests ${effect}`).toContain(effect);
        if (row === undefined) {
          // No row: nothing observable may happen, not even an effect.
          expect(actions, `${from} --${event.type}--> no effect`).toEqual([]);
        }
      }
      model = oracle.update(model, event, from, to);
      oracle.check?.(model, event, from, to, next.context);
      // Every reachable context is JSON: it is journaled and persisted as JSON (no Infinity, NaN, Map…).
      expect(JSON.parse(JSON.stringify(next.context)), 'context survives JSON').toEqual(next.context);
      trace.push({ state: to, actions });
      snapshot = next;
    }
    return { trace, last: snapshot };
  };

  const [initial] = initialTransition(machine, input as never);
  const whole = run(0, initial, initialModel);

  // Persist mid-sequence, restore from JSON, and continue: the rest must be identical.
  const cut = restoreAt % (events.length + 1);
  let prefix = initial;
  let replayModel = initialModel;
  for (const event of events.slice(0, cut)) {
    const [next] = transition(machine, prefix, event as never);
    replayModel = oracle.update(
      replayModel,
      event,
      stateKey(prefix.value as StateValue),
      stateKey(next.value as StateValue),
    );
    prefix = next;
  }
  const persisted = persist(machine, prefix);
  const restored = createActor(machine, { snapshot: persisted as AnyMachineSnapshot }).getSnapshot();
  const resumed = run(cut, restored, replayModel);
  expect(resumed.trace).toEqual(whole.trace.slice(cut));
  expect(persist(machine, resumed.last)).toEqual(persist(machine, whole.last));
}

/** Turns clock steps carrying a `delta` into absolute, non-decreasing `now` values. */
export function withAbsoluteTime<E extends { readonly type: string }>(
  steps: readonly (E | { readonly type: 'clock'; readonly delta: number })[],
  start = 0,
): (E | { readonly type: 'clock'; readonly now: number })[] {
  let now = start;
  return steps.map((step) => {
    if (step.type === 'clock' && 'delta' in step) {
      now += step.delta;
      return { type: 'clock', now };
    }
    return step as E;
  });
}
