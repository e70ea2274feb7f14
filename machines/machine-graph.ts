/**
 * A machine's definition as a graph (states, nesting, transitions with their events, guards and
 * actions), read from the XState machine itself so the inspector draws what runs, never a picture
 * someone drew beside it.
 */
import type { AnyStateMachine } from 'xstate';

/** One state node: `id` is its dotted path from the root. */
export interface GraphState {
  readonly id: string;
  readonly key: string;
  readonly parent: string | null;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  readonly initial: string | null;
  /** Actions run on entering it (an effect such as `destroy` may live here rather than on a transition). */
  readonly entry: string[];
}

/** One transition as the definition declares it (`targets` empty: it stays, running actions only). */
export interface GraphTransition {
  readonly source: string;
  readonly targets: string[];
  readonly event: string;
  readonly guard: string | null;
  readonly actions: string[];
}

/** A machine as a graph. */
export interface MachineGraph {
  readonly id: string;
  readonly initial: string;
  readonly states: GraphState[];
  readonly transitions: GraphTransition[];
}

/** The parts of an XState state node this reads (xstate's own types are generic beyond use here). */
interface NodeView {
  readonly key: string;
  readonly path: readonly string[];
  readonly type: GraphState['type'];
  readonly states: Readonly<Record<string, NodeView>>;
  readonly initial?: { readonly target: readonly NodeView[] } | undefined;
  readonly transitions: ReadonlyMap<string, readonly TransitionView[]>;
  readonly entry: readonly unknown[];
  readonly always?: readonly TransitionView[] | undefined;
}

interface TransitionView {
  readonly eventType: string;
  readonly target?: readonly NodeView[] | undefined;
  readonly guard?: unknown;
  readonly actions: readonly unknown[];
}

const idOf = (node: NodeView): string => node.path.join('.');

/** A guard or action's name: a string, or an object's `type` (parameterised ones). */
function nameOf(item: unknown): string | null {
  if (typeof item === 'string') return item;
  if (typeof item === 'object' && item !== null && 'type' in item && typeof item.type === 'string') {
    return item.type;
  }
  if (typeof item === 'function') return item.name === '' ? 'inline' : item.name;
  return null;
}

const names = (items: readonly unknown[]): string[] =>
  items.map(nameOf).filter((name): name is string => name !== null);

/**
 * The graph of `machine`.
 *
 * @example
 * ```ts
 * const graph = machineGraph(sandboxMachine);
 * graph.transitions.filter((t) => t.event === 'pause'); // [{ source: 'running', targets: ['suspended'], … }]
 * ```
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const states: GraphState[] = [];
  const transitions: GraphTransition[] = [];
  const visit = (node: NodeView, parent: string | null): void => {
    const id = idOf(node);
    if (parent !== null || node.path.length > 0) {
      const first = node.initial?.target[0];
      states.push({
        id,
        key: node.key,
        parent,
        type: node.type,
        initial: first === undefined ? null : idOf(first),
        entry: names(node.entry),
      });
    }
    const declared = [...node.transitions.values()].flat().concat(node.always ?? []);
    for (const transition of declared) {
      transitions.push({
        source: id,
        targets: (transition.target ?? []).map(idOf),
        event: transition.eventType,
        guard: transition.guard === undefined ? null : nameOf(transition.guard),
        actions: names(transition.actions),
      });
    }
    for (const child of Object.values(node.states)) visit(child, node.path.length === 0 ? null : id);
  };
  // A state node's shape, read through the narrow view above.
  const root = machine.root as unknown as NodeView;
  visit(root, null);
  const initial = root.initial?.target[0];
  return {
    id: machine.id,
    initial: initial === undefined ? '' : idOf(initial),
    states,
    // Root-level transitions (none in our machines) would have source '' and are kept as such.
    transitions,
  };
}
