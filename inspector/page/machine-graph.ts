/**
 * Reading a machine graph: target ids as the definition writes them resolved to state ids, and the
 * transition a recorded step took (for its effects).
 */
import type { MachineGraph } from '../../protocol/inspector-api.js';

type Transition = MachineGraph['transitions'][number];

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `state` is `ancestor` or inside it (`running.active` is within `running`). */
export const isWithin = (state: string, ancestor: string): boolean =>
  state === ancestor || state.startsWith(`${ancestor}.`);

/** A target as the definition names it (`#machine.a.b`, `a.b`, a sibling's key) to a state id. */
export function resolveTarget(
  target: string,
  source: string,
  ids: ReadonlySet<string>,
  machineId: string,
): string | null {
  if (ids.has(target)) return target;
  const absolute = target.replace(new RegExp(`^#${escapeRegExp(machineId)}\\.`), '');
  if (ids.has(absolute)) return absolute;
  const withoutHash = target.replace(/^#[^.]*\./, '');
  if (ids.has(withoutHash)) return withoutHash;
  const parent = source.includes('.') ? source.slice(0, source.lastIndexOf('.')) : '';
  const sibling = parent === '' ? target : `${parent}.${target}`;
  return ids.has(sibling) ? sibling : null;
}

/**
 * The transition that took an actor from `from` to `to` on `event`, as far as the definition tells
 * (guards are not re-evaluated: the one whose target matches wins). `from` null: the step is unknown.
 */
export function transitionTaken(
  graph: MachineGraph,
  from: string | null,
  event: string,
  to: string,
): Transition | undefined {
  const ids = new Set(graph.states.map((state) => state.id));
  const candidates = graph.transitions.filter(
    (transition) =>
      transition.event === event &&
      // A root-level handler's source is the machine itself ('' or its id).
      (from === null ||
        isWithin(from, transition.source) ||
        transition.source === '' ||
        transition.source === graph.id),
  );
  const reaches = (transition: Transition): boolean =>
    transition.targets.length === 0
      ? from === to
      : transition.targets.some((target) => {
          const id = resolveTarget(target, transition.source, ids, graph.id);
          return id !== null && isWithin(to, id);
        });
  return candidates.find(reaches) ?? (from === null ? undefined : candidates[0]);
}

/**
 * The effects a recorded step requested: the taken transition's actions, then the entry actions of the
 * states it entered (a final state's `destroy`, for one).
 */
export function effectsOf(graph: MachineGraph, from: string | null, event: string, to: string): string[] {
  const actions = [...(transitionTaken(graph, from, event, to)?.actions ?? [])];
  if (from === to) return actions;
  for (const state of graph.states) {
    const entered = isWithin(to, state.id) && (from === null || !isWithin(from, state.id));
    if (entered) actions.push(...state.entry);
  }
  return actions;
}

/** How a state reads in colour: good (green), warn (amber), done (grey), bad (red), calm (blue). */
export type Tone = 'good' | 'warn' | 'done' | 'bad' | 'calm';

/** The tone of a state of any of the three machines (the wire's sandbox states included). */
export function toneOf(state: string): Tone {
  const leaf = state.slice(state.lastIndexOf('.') + 1);
  if (leaf === 'failed' || state.endsWith('_failed')) return 'bad';
  if (state === 'running' || leaf === 'active' || leaf === 'open' || state === 'done') return 'good';
  if (leaf === 'suspended' || leaf === 'terminating' || leaf === 'stopping' || leaf === 'opening')
    return 'warn';
  if (leaf === 'idle') return 'calm';
  if (state.startsWith('running')) return 'good';
  return 'done';
}

/** Whether a recorded event is the outcome of an effect that failed or was refused. */
export function isFailure(event: string, state: string): boolean {
  return (
    event.endsWith('_failed') ||
    event.endsWith('_rejected') ||
    event === 'daemon_exited' ||
    state === 'failed' ||
    state.endsWith('.failed')
  );
}
