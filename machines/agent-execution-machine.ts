/**
 * One sandbox's agent executions, SPEC "States and transitions / Agent execution": idle and running,
 * with running split into `active`, `terminating` (SIGTERM sent, 5 s grace) and `stopping` (tree frozen
 * and killed, waiting for it to be empty). Effects are named actions the agent runner provides.
 */
import { assign, emit, setup } from 'xstate';
import type { AgentFailureReason } from '../rules/agent-reasons.js';
import { LIMITS } from '../rules/limits.js';
import { timeAfter, type ClockEvent } from './clock.js';

/** The limits one execution runs under. */
export interface ExecutionLimits {
  readonly timeoutMs: number;
  readonly maxSteps: number;
  readonly maxTotalTokens: number | null;
}

/** How the last execution ended. */
export type ExecutionOutcome =
  { readonly kind: 'done' } | { readonly kind: 'failed'; readonly reason: AgentFailureReason };

/** Reasons for which the machine itself stops the runtime. */
export type StopReason = 'aborted' | 'max_steps' | 'token_budget' | 'timeout';

/** The agent execution machine's context. */
export interface AgentExecutionContext {
  readonly now: number;
  readonly limits: ExecutionLimits;
  readonly steps: number;
  readonly totalTokens: number;
  /** When the run times out; null while none runs (contexts stay JSON: no Infinity). */
  readonly deadlineAt: number | null;
  /** When the grace after SIGTERM ends; null outside it. */
  readonly graceUntil: number | null;
  readonly stopReason: StopReason | undefined;
  readonly outcome: ExecutionOutcome | undefined;
}

/** What the machine emits for its host: a run refused as busy, the outcome to report. */
export type AgentExecutionEmitted =
  { readonly type: 'busy' } | { readonly type: 'outcome'; readonly outcome: ExecutionOutcome | undefined };

/** Events of the agent execution machine. */
export type AgentExecutionEvent =
  | ClockEvent
  /** A run: the id of the execution it starts rides along for those who watch (the control plane's table). */
  | { readonly type: 'run'; readonly limits: ExecutionLimits; readonly executionId?: string }
  | { readonly type: 'step_started' }
  | { readonly type: 'step_finished'; readonly totalTokens: number }
  | { readonly type: 'runtime_exited' }
  | { readonly type: 'runtime_failed'; readonly reason: AgentFailureReason }
  | { readonly type: 'abort' }
  | { readonly type: 'tree_empty' };

const abortNow = {
  target: '#agentExecution.running.stopping',
  actions: [{ type: 'stop', params: { reason: 'aborted' } }, 'freezeAndKillTree'],
} as const;

const failed = { target: '#agentExecution.idle', actions: ['fail', 'outcome'] } as const;

/**
 * The agent execution machine.
 *
 * @example
 * ```ts
 * const [s0] = initialTransition(agentExecutionMachine);
 * const [s1] = transition(agentExecutionMachine, s0, { type: 'run', limits: { timeoutMs: 600_000, maxSteps: 50, maxTotalTokens: 1e6 } });
 * ```
 */
export const agentExecutionMachine = setup({
  types: {
    context: {} as AgentExecutionContext,
    events: {} as AgentExecutionEvent,
    emitted: {} as AgentExecutionEmitted,
  },
  actions: {
    /** Start the runtime of execution `executionId` as a command with tree kill (the host runs it). */
    // eslint-disable-next-line @typescript-eslint/no-unused-vars -- declares the parameters the host gets
    startRuntime: (_, params: { executionId: string | undefined }) => undefined,
    /** Emits `busy`: the new call ends with that reason; the running execution is untouched. */
    busy: emit({ type: 'busy' }),
    /** SIGTERM to the runtime and its descendants. */
    terminateTree: () => undefined,
    /** Freeze the execution's tree (SIGSTOP), then SIGKILL all of it, without grace. */
    freezeAndKillTree: () => undefined,
    /** Emits `outcome`: the final event (`done`, or `agent_failed` with its reason) is the host's to send. */
    outcome: emit(({ context }) => ({ type: 'outcome', outcome: context.outcome })),
    advance: assign({
      now: ({ context, event }) => timeAfter(context.now, event),
    }),
    begin: assign(({ context, event }) => {
      const limits = event.type === 'run' ? event.limits : context.limits;
      return {
        limits,
        steps: 0,
        totalTokens: 0,
        deadlineAt: context.now + limits.timeoutMs,
        graceUntil: null,
        stopReason: undefined,
        outcome: undefined,
      };
    }),
    stop: assign((_, params: { reason: StopReason }) => ({ stopReason: params.reason })),
    countStep: assign({ steps: ({ context }) => context.steps + 1 }),
    addTokens: assign({
      totalTokens: ({ context, event }) =>
        context.totalTokens + (event.type === 'step_finished' ? event.totalTokens : 0),
    }),
    startGrace: assign({
      graceUntil: ({ context }) => context.now + LIMITS.agentKillGraceMs,
      stopReason: 'timeout',
    }),
    succeed: assign({ outcome: { kind: 'done' } }),
    fail: assign({
      outcome: ({ context, event }): ExecutionOutcome => ({
        kind: 'failed',
        reason: event.type === 'runtime_failed' ? event.reason : (context.stopReason ?? 'runtime_error'),
      }),
    }),
  },
  guards: {
    stepLimitReached: ({ context }) => context.steps >= context.limits.maxSteps,
    tokenBudgetExceeded: ({ context, event }) =>
      event.type === 'step_finished' &&
      context.limits.maxTotalTokens !== null &&
      context.totalTokens + event.totalTokens > context.limits.maxTotalTokens,
    timeoutElapsed: ({ context, event }) =>
      context.deadlineAt !== null && timeAfter(context.now, event) >= context.deadlineAt,
    graceElapsed: ({ context, event }) =>
      context.graceUntil !== null && timeAfter(context.now, event) >= context.graceUntil,
  },
}).createMachine({
  id: 'agentExecution',
  context: {
    now: 0,
    limits: {
      timeoutMs: LIMITS.agentTimeoutMs,
      maxSteps: LIMITS.agentMaxSteps,
      maxTotalTokens: LIMITS.agentMaxTotalTokens,
    },
    steps: 0,
    totalTokens: 0,
    deadlineAt: null,
    graceUntil: null,
    stopReason: undefined,
    outcome: undefined,
  },
  initial: 'idle',
  on: { clock: { actions: 'advance' } },
  states: {
    idle: {
      on: {
        run: {
          target: 'running',
          actions: [
            'begin',
            { type: 'startRuntime', params: ({ event }) => ({ executionId: event.executionId }) },
          ],
        },
      },
    },
    running: {
      initial: 'active',
      on: { run: { actions: 'busy' } },
      states: {
        active: {
          on: {
            runtime_exited: { target: '#agentExecution.idle', actions: ['succeed', 'outcome'] },
            runtime_failed: failed,
            abort: abortNow,
            step_started: [
              {
                guard: 'stepLimitReached',
                target: 'stopping',
                actions: [{ type: 'stop', params: { reason: 'max_steps' } }, 'freezeAndKillTree'],
              },
              { actions: 'countStep' },
            ],
            step_finished: [
              {
                guard: 'tokenBudgetExceeded',
                target: 'stopping',
                actions: [
                  'addTokens',
                  { type: 'stop', params: { reason: 'token_budget' } },
                  'freezeAndKillTree',
                ],
              },
              { actions: 'addTokens' },
            ],
            clock: [
              {
                guard: 'timeoutElapsed',
                target: 'terminating',
                actions: ['advance', 'startGrace', 'terminateTree'],
              },
              { actions: 'advance' },
            ],
          },
        },
        terminating: {
          on: {
            abort: abortNow,
            clock: [
              { guard: 'graceElapsed', target: 'stopping', actions: ['advance', 'freezeAndKillTree'] },
              { actions: 'advance' },
            ],
            tree_empty: failed,
          },
        },
        stopping: {
          on: { tree_empty: failed },
        },
      },
    },
  },
});

/** When the actor system must next send `clock`: the run's deadline, then the end of the grace. */
export function agentNextDueAt(snapshot: {
  readonly context: AgentExecutionContext;
  matches(state: { running: 'active' | 'terminating' }): boolean;
}): number | undefined {
  if (snapshot.matches({ running: 'active' })) return snapshot.context.deadlineAt ?? undefined;
  if (snapshot.matches({ running: 'terminating' })) return snapshot.context.graceUntil ?? undefined;
  return undefined;
}
