/**
 * Time in the machines: only a `clock` event carries it. The actor system sends `clock { now }` before
 * any other event and when a machine's next deadline falls due, and journals it like any event, so a
 * replay never reads the wall clock.
 */

/** Time passes: `now` in milliseconds on the journaled clock. An earlier `now` than seen is ignored. */
export interface ClockEvent {
  readonly type: 'clock';
  readonly now: number;
}

/** The later of the time a machine has seen and the time an event brings. */
export function laterOf(seen: number, event: ClockEvent): number {
  return Math.max(seen, event.now);
}
