/**
 * The inspector draws each statechart from `machineGraph(machine)`: the graph must be the machine the
 * spec table describes. Every row of each table is a declared transition of the graph (same event, from
 * the row's state or an ancestor, to the row's state, requesting the row's effects), and every
 * state-changing transition of the graph is a row.
 */
import { describe, expect, it } from 'vitest';
import { AGENT_EXECUTION_TABLE } from '../../machines/agent-execution-table.js';
import { agentExecutionMachine } from '../../machines/agent-execution-machine.js';
import { GATEWAY_ROUTE_TABLE } from '../../machines/gateway-route-table.js';
import { gatewayRouteMachine } from '../../machines/gateway-route-machine.js';
import { machineGraph, type MachineGraph } from '../../machines/machine-graph.js';
import { SANDBOX_TABLE } from '../../machines/sandbox-table.js';
import { sandboxMachine } from '../../machines/sandbox-machine.js';
import type { TransitionTable } from '../../machines/transition-table.js';

type AnyTable = TransitionTable<string, string, string>;

/** The leaf a transition to `target` enters: its initial child, down to an atomic state. */
function enteredLeaf(graph: MachineGraph, target: string): string {
  const node = graph.states.find((state) => state.id === target);
  expect(node, `state ${target} is in the graph`).toBeDefined();
  return node?.initial === null || node?.initial === undefined ? target : enteredLeaf(graph, node.initial);
}

/** Entry actions of `state` and of the states entered on the way down to it. */
function entryOf(graph: MachineGraph, state: string): string[] {
  return graph.states
    .filter((node) => state === node.id || state.startsWith(`${node.id}.`))
    .flatMap((node) => node.entry);
}

/** `state` and every ancestor, the root ('') last. */
function selfAndAncestors(state: string): string[] {
  const parts = state.split('.');
  return [...parts.map((_, i) => parts.slice(0, parts.length - i).join('.')), ''];
}

const cases: readonly (readonly [string, MachineGraph, AnyTable])[] = [
  ['sandbox', machineGraph(sandboxMachine), SANDBOX_TABLE],
  ['gateway route', machineGraph(gatewayRouteMachine), GATEWAY_ROUTE_TABLE],
  ['agent execution', machineGraph(agentExecutionMachine), AGENT_EXECUTION_TABLE],
];

describe.each(cases)('the %s machine as a graph', (_, graph, table) => {
  it('has every state of the table, and starts where the machine starts', () => {
    const ids = graph.states.map((state) => state.id);
    for (const state of table.states) expect(ids).toContain(state);
    expect(ids).toContain(graph.initial);
    for (const state of graph.states) {
      if (state.parent !== null) expect(ids).toContain(state.parent);
    }
  });

  it('declares each row of the table as a transition with its effects', () => {
    for (const row of table.rows) {
      const found = graph.transitions.some(
        (transition) =>
          transition.event === row.trigger &&
          selfAndAncestors(row.from).includes(transition.source) &&
          (transition.targets.length === 0
            ? row.to === row.from
            : transition.targets.length === 1 &&
              enteredLeaf(graph, transition.targets[0] ?? '') === row.to) &&
          (row.effects ?? []).every(
            (effect) => transition.actions.includes(effect) || entryOf(graph, row.to).includes(effect),
          ),
      );
      expect(found, `${row.from} --${row.trigger}--> ${row.to} (${row.spec})`).toBe(true);
    }
  });

  it('changes state only where a row of the table says so', () => {
    for (const transition of graph.transitions.filter((t) => t.targets.length > 0)) {
      const to = enteredLeaf(graph, transition.targets[0] ?? '');
      const row = table.rows.find(
        (candidate) =>
          candidate.trigger === transition.event &&
          selfAndAncestors(candidate.from).includes(transition.source) &&
          candidate.to === to,
      );
      expect(row, `${transition.source} --${transition.event}--> ${to}`).toBeDefined();
    }
  });
});
