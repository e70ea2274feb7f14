/**
 * SPEC "States and transitions / Agent execution", as data. The spec's `running` is split by its "Also"
 * column: `running.terminating` (SIGTERM sent, grace running) and `running.stopping` (tree frozen and
 * killed); both end in `idle` once the tree is empty, so a reason is reported only when none remain.
 */
import type { TransitionTable } from './transition-table.js';

/** Agent execution states. */
export type AgentExecutionState = 'idle' | 'running.active' | 'running.terminating' | 'running.stopping';

/** Conditions of the agent execution table. */
export type AgentExecutionCondition =
  'step_limit_reached' | 'token_budget_exceeded' | 'timeout_elapsed' | 'grace_elapsed';

type Trigger =
  | 'run'
  | 'runtime_exited'
  | 'runtime_failed'
  | 'abort'
  | 'step_started'
  | 'step_finished'
  | 'clock'
  | 'tree_empty';

const busy = (from: AgentExecutionState) =>
  ({
    from,
    trigger: 'run',
    to: from,
    effects: ['busy'],
    spec: 'run() while running: the new call ends with busy',
  }) as const;

/** The agent execution table. */
export const AGENT_EXECUTION_TABLE: TransitionTable<AgentExecutionState, Trigger, AgentExecutionCondition> = {
  states: ['idle', 'running.active', 'running.terminating', 'running.stopping'],
  terminal: [],
  rows: [
    {
      from: 'idle',
      trigger: 'run',
      to: 'running.active',
      effects: ['startRuntime'],
      spec: 'run(): runtime starts with tree kill',
    },
    busy('running.active'),
    busy('running.terminating'),
    busy('running.stopping'),
    {
      from: 'running.active',
      trigger: 'runtime_exited',
      to: 'idle',
      effects: ['outcome'],
      spec: 'normal end: done',
    },
    {
      from: 'running.active',
      trigger: 'runtime_failed',
      to: 'idle',
      effects: ['outcome'],
      spec: 'runtime fails: agent_failed',
    },
    {
      from: 'running.active',
      trigger: 'abort',
      to: 'running.stopping',
      effects: ['freezeAndKillTree'],
      spec: 'abort: frozen then killed without grace',
    },
    {
      from: 'running.terminating',
      trigger: 'abort',
      to: 'running.stopping',
      effects: ['freezeAndKillTree'],
      spec: 'abort during the grace',
    },
    {
      from: 'running.active',
      trigger: 'step_started',
      when: 'step_limit_reached',
      to: 'running.stopping',
      effects: ['freezeAndKillTree'],
      spec: 'max_steps: ends at the start of the next step',
    },
    {
      from: 'running.active',
      trigger: 'step_finished',
      when: 'token_budget_exceeded',
      to: 'running.stopping',
      effects: ['freezeAndKillTree'],
      spec: 'token budget, checked after step_finished',
    },
    {
      from: 'running.active',
      trigger: 'clock',
      when: 'timeout_elapsed',
      to: 'running.terminating',
      effects: ['terminateTree'],
      spec: 'timeout: SIGTERM to runtime and descendants',
    },
    {
      from: 'running.terminating',
      trigger: 'clock',
      when: 'grace_elapsed',
      to: 'running.stopping',
      effects: ['freezeAndKillTree'],
      spec: 'after 5 s: frozen and killed',
    },
    {
      from: 'running.terminating',
      trigger: 'tree_empty',
      to: 'idle',
      effects: ['outcome'],
      spec: 'timeout reported once none remain',
    },
    {
      from: 'running.stopping',
      trigger: 'tree_empty',
      to: 'idle',
      effects: ['outcome'],
      spec: 'reason reported once none remain',
    },
  ],
};
