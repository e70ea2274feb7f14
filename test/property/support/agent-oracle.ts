/**
 * The agent execution table's oracle (SPEC "States and transitions / Agent execution"): a model of the
 * run kept apart from the machine, which judges each row's condition and the outcome a run must end
 * with; the events fast-check draws. Shared by the pure machine's test and the live actor's.
 */
import { fc } from '@fast-check/vitest';
import { expect } from 'vitest';
import type {
  AgentExecutionEvent,
  ExecutionLimits,
  StopReason,
} from '../../../machines/agent-execution-machine.js';
import type { AgentExecutionCondition } from '../../../machines/agent-execution-table.js';
import { LIMITS } from '../../../rules/limits.js';
import type { Oracle } from './table-checker.js';

/** What the oracle keeps of a run. */
export interface AgentModel {
  readonly now: number;
  readonly limits: ExecutionLimits;
  readonly steps: number;
  readonly tokens: number;
  readonly deadline: number;
  readonly grace: number;
  readonly stopReason: StopReason | undefined;
}

const later = (m: AgentModel, e: AgentExecutionEvent) =>
  e.type === 'clock' ? Math.max(m.now, e.now) : m.now;

const STOP_BY_TRIGGER: Partial<Record<AgentExecutionEvent['type'], StopReason>> = {
  abort: 'aborted',
  step_started: 'max_steps',
  step_finished: 'token_budget',
  clock: 'timeout',
};

export const agentOracle: Oracle<AgentModel, AgentExecutionEvent, AgentExecutionCondition> = {
  conditions: {
    step_limit_reached: (m) => m.steps >= m.limits.maxSteps,
    token_budget_exceeded: (m, e) =>
      e.type === 'step_finished' &&
      m.limits.maxTotalTokens !== null &&
      m.tokens + e.totalTokens > m.limits.maxTotalTokens,
    timeout_elapsed: (m, e) => later(m, e) >= m.deadline,
    grace_elapsed: (m, e) => later(m, e) >= m.grace,
  },
  update: (m, e, from, to) => {
    const now = later(m, e);
    if (from === 'idle' && e.type === 'run') {
      return {
        ...m,
        now,
        limits: e.limits,
        steps: 0,
        tokens: 0,
        deadline: now + e.limits.timeoutMs,
        grace: Infinity,
        stopReason: undefined,
      };
    }
    if (from !== 'running.active') {
      const escalated = from === 'running.terminating' && to === 'running.stopping' && e.type === 'abort';
      return { ...m, now, stopReason: escalated ? 'aborted' : m.stopReason };
    }
    return {
      ...m,
      now,
      steps: e.type === 'step_started' && to === 'running.active' ? m.steps + 1 : m.steps,
      tokens: e.type === 'step_finished' ? m.tokens + e.totalTokens : m.tokens,
      grace: to === 'running.terminating' ? now + LIMITS.agentKillGraceMs : m.grace,
      stopReason: to === 'running.active' || to === 'idle' ? m.stopReason : STOP_BY_TRIGGER[e.type],
    };
  },
  check: (m, e, from, to, context) => {
    if (to !== 'idle' || from === 'idle') return;
    const { outcome } = context as { outcome: unknown };
    if (e.type === 'runtime_exited') expect(outcome).toEqual({ kind: 'done' });
    else if (e.type === 'runtime_failed') expect(outcome).toEqual({ kind: 'failed', reason: e.reason });
    else expect(outcome).toEqual({ kind: 'failed', reason: m.stopReason });
  },
};

// Small value sets make exact boundaries (steps, tokens, deadlines, grace) common.
export const limits = fc.record({
  timeoutMs: fc.constantFrom(1_000, 5_000, 30_000),
  maxSteps: fc.integer({ min: 1, max: 8 }),
  maxTotalTokens: fc.constantFrom(100, 1_000, null),
});

/** One event, clocks as steps (`withAbsoluteTime` makes them absolute). */
export const agentEvent = fc.oneof(
  { arbitrary: fc.record({ type: fc.constant('run' as const), limits }), weight: 2 },
  { arbitrary: fc.constant<AgentExecutionEvent>({ type: 'step_started' }), weight: 3 },
  {
    arbitrary: fc.record({
      type: fc.constant('step_finished' as const),
      totalTokens: fc.constantFrom(0, 50, 100, 900, 1_000),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      type: fc.constant('clock' as const),
      delta: fc.constantFrom(0, 1, 999, 1_000, 4_999, 5_000, 30_000),
    }),
    weight: 4,
  },
  { arbitrary: fc.constant<AgentExecutionEvent>({ type: 'tree_empty' }), weight: 2 },
  {
    arbitrary: fc.constantFrom<AgentExecutionEvent>({ type: 'abort' }, { type: 'runtime_exited' }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      type: fc.constant('runtime_failed' as const),
      reason: fc.constantFrom('runtime_missing' as const, 'runtime_error' as const),
    }),
    weight: 1,
  },
);

/** The model before any run. */
export const FIRST_MODEL: AgentModel = {
  now: 0,
  limits: {
    timeoutMs: LIMITS.agentTimeoutMs,
    maxSteps: LIMITS.agentMaxSteps,
    maxTotalTokens: LIMITS.agentMaxTotalTokens,
  },
  steps: 0,
  tokens: 0,
  deadline: Infinity,
  grace: Infinity,
  stopReason: undefined,
};
