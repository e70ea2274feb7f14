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

/** The machine's time after `event`: a later `clock` moves it forward, anything else leaves it. */
export function timeAfter(seen: number, event: { readonly type: string }): number {
  return event.type === 'clock' ? Math.max(seen, (event as ClockEvent).now) : seen;
}
