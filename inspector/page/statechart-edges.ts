/**
 * What a statechart draws between its states: transitions grouped into one edge per (source, target)
 * pair (a loop where a transition stays), and their labels' text and size.
 */
import type { MachineGraph } from '../../protocol/inspector-api.js';
import { resolveTarget } from './machine-graph.js';

type Transition = MachineGraph['transitions'][number];

/** Width of one label character, px. */
export const LABEL_CHAR = 6.3;
/** Height of one label line, px. */
export const LINE = 13;
/** Characters on one line of a loop's label before it wraps. */
const LOOP_LINE_CHARS = 26;

/** Width of a label of `lines`, px. */
export const labelWidth = (lines: readonly string[]): number =>
  Math.max(0, ...lines.map((line) => line.length * LABEL_CHAR));

/** A transition's label line: its event, and its guard in brackets. */
export const lineOf = (transition: Transition): string =>
  transition.guard === null ? transition.event : `${transition.event} [${transition.guard}]`;

/** Event names joined and wrapped for a loop's label. */
export function loopLines(transitions: readonly Transition[]): string[] {
  const events = [...new Set(transitions.map((transition) => transition.event))];
  const lines: string[] = [];
  let line = '';
  for (const event of events) {
    const next = line === '' ? event : `${line}, ${event}`;
    if (next.length > LOOP_LINE_CHARS && line !== '') {
      lines.push(`${line},`);
      line = event;
    } else {
      line = next;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** `id`'s ancestor (or itself) that is a child of `container` (null: the top level). */
export function childOf(
  id: string,
  container: string | null,
  parents: ReadonlyMap<string, string | null>,
): string | null {
  let current: string | null = id;
  while (current !== null) {
    const parent: string | null = parents.get(current) ?? null;
    if (parent === container) return current;
    current = parent;
  }
  return null;
}

/** One drawn edge: the transitions from `source` to `target`. */
export interface Edge {
  readonly source: string;
  readonly target: string;
  readonly transitions: Transition[];
}

/** The edges of a graph: transitions grouped by (source, resolved target); targetless ones are loops. */
export function edgesOf(graph: MachineGraph, ids: ReadonlySet<string>): Edge[] {
  const byPair = new Map<string, Edge>();
  for (const transition of graph.transitions) {
    if (!ids.has(transition.source)) continue; // a root-level handler: no state to draw it on
    const targets =
      transition.targets.length === 0
        ? [transition.source]
        : transition.targets
            .map((target) => resolveTarget(target, transition.source, ids, graph.id))
            .filter((target) => target !== null);
    for (const target of targets) {
      const key = `${transition.source}\u0000${target}`;
      const edge = byPair.get(key) ?? { source: transition.source, target, transitions: [] };
      edge.transitions.push(transition);
      byPair.set(key, edge);
    }
  }
  return [...byPair.values()];
}
