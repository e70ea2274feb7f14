/**
 * The sandbox lifecycle of SPEC "States and transitions / Sandbox": running, suspended, ended. Pure: the
 * effects (`freeze`, `thaw`, `destroy`) are named actions the actor system provides.
 */
import { assign, setup } from 'xstate';
import { timeAfter, type ClockEvent } from './clock.js';

/** Why a sandbox is suspended. */
export type SuspendReason = 'paused' | 'idle';

/** Why a sandbox ended: `failed` when its sandboxd died (the sandbox cannot serve any more). */
export type EndReason = 'killed' | 'timeout' | 'failed';

/** What a sandbox machine starts from. */
export interface SandboxMachineInput {
  /** Creation time on the journaled clock. */
  readonly now: number;
  /** Lifetime counting running plus suspended time. */
  readonly timeoutMs: number;
  /** Idle time before auto-suspend. */
  readonly maxIdleMs: number;
  /** Whether an SDK call resumes a suspended sandbox. */
  readonly autoResume: boolean;
}

/** The sandbox machine's context. */
export interface SandboxMachineContext {
  readonly now: number;
  readonly deadlineAt: number;
  readonly maxIdleMs: number;
  readonly autoResume: boolean;
  readonly lastActivityAt: number;
  readonly suspendReason: SuspendReason | undefined;
  readonly endReason: EndReason | undefined;
}

/** Events of the sandbox machine, named after the spec's triggers. */
export type SandboxMachineEvent =
  | ClockEvent
  | { readonly type: 'pause' }
  | { readonly type: 'connect' }
  | { readonly type: 'sdk_call' }
  | { readonly type: 'traffic' }
  /** `setTimeout` (issue 28): the sandbox now ends at `deadlineAt` (the caller checked SPEC's cap). */
  | { readonly type: 'set_deadline'; readonly deadlineAt: number }
  | { readonly type: 'kill' }
  | { readonly type: 'daemon_exited' }
  /** Outcomes of effects that failed, fed back so the state never claims what did not happen. */
  | { readonly type: 'freeze_failed' }
  | { readonly type: 'thaw_failed' };

const deadline = {
  guard: 'deadlineReached',
  target: 'ended',
  actions: ['advance', { type: 'end', params: { reason: 'timeout' } }],
} as const;

const resume = { target: 'running', actions: ['thaw', 'touch', 'resumed'] } as const;

const killed = { target: 'ended', actions: { type: 'end', params: { reason: 'killed' } } } as const;

const failed = { target: 'ended', actions: { type: 'end', params: { reason: 'failed' } } } as const;

/**
 * The sandbox machine.
 *
 * @example
 * ```ts
 * const input = { now: 0, timeoutMs: 3_600_000, maxIdleMs: 300_000, autoResume: true };
 * const [s0] = initialTransition(sandboxMachine, input);
 * const [s1] = transition(sandboxMachine, s0, { type: 'clock', now: 300_000 }); // suspended (idle)
 * ```
 */
export const sandboxMachine = setup({
  types: {
    input: {} as SandboxMachineInput,
    context: {} as SandboxMachineContext,
    events: {} as SandboxMachineEvent,
  },
  actions: {
    /** Freeze the whole tree, memory kept. */
    freeze: () => undefined,
    /** Thaw the tree. */
    thaw: () => undefined,
    /** Remove the tree and every resource. */
    destroy: () => undefined,
    advance: assign({
      now: ({ context, event }) => timeAfter(context.now, event),
    }),
    touch: assign({ lastActivityAt: ({ context }) => context.now }),
    resumed: assign({ suspendReason: undefined }),
    setDeadline: assign({
      deadlineAt: ({ context, event }) =>
        event.type === 'set_deadline' ? event.deadlineAt : context.deadlineAt,
    }),
    suspend: assign((_, params: { reason: SuspendReason }) => ({ suspendReason: params.reason })),
    end: assign((_, params: { reason: EndReason }) => ({ endReason: params.reason })),
  },
  guards: {
    deadlineReached: ({ context, event }) => timeAfter(context.now, event) >= context.deadlineAt,
    idleElapsed: ({ context, event }) =>
      timeAfter(context.now, event) - context.lastActivityAt >= context.maxIdleMs,
    autoResume: ({ context }) => context.autoResume,
  },
}).createMachine({
  id: 'sandbox',
  context: ({ input }) => ({
    now: input.now,
    deadlineAt: input.now + input.timeoutMs,
    maxIdleMs: input.maxIdleMs,
    autoResume: input.autoResume,
    lastActivityAt: input.now,
    suspendReason: undefined,
    endReason: undefined,
  }),
  initial: 'running',
  states: {
    // No root-level handlers: they would stay live in the final state and destroy twice.
    running: {
      on: {
        kill: killed,
        daemon_exited: failed,
        clock: [
          deadline,
          {
            guard: 'idleElapsed',
            target: 'suspended',
            actions: ['advance', { type: 'suspend', params: { reason: 'idle' } }, 'freeze'],
          },
          { actions: 'advance' },
        ],
        pause: {
          target: 'suspended',
          actions: [{ type: 'suspend', params: { reason: 'paused' } }, 'freeze'],
        },
        // A resume whose thaw failed: the tree is still frozen.
        thaw_failed: { target: 'suspended', actions: { type: 'suspend', params: { reason: 'paused' } } },
        connect: { actions: 'touch' },
        sdk_call: { actions: 'touch' },
        traffic: { actions: 'touch' },
        set_deadline: { actions: 'setDeadline' },
      },
    },
    suspended: {
      on: {
        kill: killed,
        daemon_exited: failed,
        // A suspend whose freeze failed: the tree still runs.
        freeze_failed: { target: 'running', actions: 'resumed' },
        clock: [deadline, { actions: 'advance' }],
        connect: resume,
        sdk_call: { ...resume, guard: 'autoResume' },
        set_deadline: { actions: 'setDeadline' },
      },
    },
    ended: { type: 'final', entry: 'destroy' },
  },
});

/** When the actor system must next send `clock`: the deadline, or the idle limit while running. */
export function sandboxNextDueAt(snapshot: {
  readonly status: string;
  readonly context: SandboxMachineContext;
  matches(state: 'running'): boolean;
}): number | undefined {
  if (snapshot.status === 'done') return undefined;
  const { deadlineAt, lastActivityAt, maxIdleMs } = snapshot.context;
  return snapshot.matches('running') ? Math.min(deadlineAt, lastActivityAt + maxIdleMs) : deadlineAt;
}
