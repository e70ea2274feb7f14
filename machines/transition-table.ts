/**
 * A spec state table written as data. A property test drives each machine with random events and checks
 * every step against its table: the first row whose `from`, `trigger` and condition match decides the
 * next state; with no such row the state must not change.
 */

/** One row of a state table. */
export interface TransitionRow<State extends string, Trigger extends string, Condition extends string> {
  /** State the row leaves (a dotted path for substates). */
  readonly from: State;
  /** Event type that fires it. */
  readonly trigger: Trigger;
  /** Named condition that must hold; the test supplies its meaning from the spec's text. */
  readonly when?: Condition;
  /** State it reaches. */
  readonly to: State;
  /**
   * What the step must ask of its host: named effects (machine actions, run with their parameters) and
   * the types of the events it emits (see `effectName`).
   */
  readonly effects?: readonly string[];
  /** The SPEC row this encodes, for the reader. */
  readonly spec: string;
}

/** A whole table. */
export interface TransitionTable<State extends string, Trigger extends string, Condition extends string> {
  readonly states: readonly State[];
  /** States that absorb every event. */
  readonly terminal: readonly State[];
  readonly rows: readonly TransitionRow<State, Trigger, Condition>[];
}

/**
 * How a row names an action `transition()` returned: an effect by its name, an emitted event
 * (`xstate.emit`) by the event's type.
 */
export function effectName(action: { readonly type: string; readonly params?: unknown }): string {
  if (action.type !== 'xstate.emit') return action.type;
  const emitted = (action.params as { readonly event?: { readonly type?: unknown } } | undefined)?.event;
  return typeof emitted?.type === 'string' ? emitted.type : action.type;
}
