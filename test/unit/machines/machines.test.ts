import { describe, expect, it } from 'vitest';
import { initialTransition, transition, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import {
  agentExecutionMachine,
  agentNextDueAt,
  type AgentExecutionEvent,
} from '../../../machines/agent-execution-machine.js';
import { gatewayRouteMachine } from '../../../machines/gateway-route-machine.js';
import { effectName } from '../../../machines/transition-table.js';
import {
  sandboxMachine,
  sandboxNextDueAt,
  type SandboxMachineEvent,
} from '../../../machines/sandbox-machine.js';

interface Driven {
  readonly snapshot: Omit<AnyMachineSnapshot, 'context'> & { readonly context: Record<string, unknown> };
  readonly effects: string[];
}

function drive(machine: AnyStateMachine, input: unknown, events: readonly object[]): Driven {
  let [snapshot, actions] = initialTransition(machine, input as never) as [
    AnyMachineSnapshot,
    { type: string }[],
  ];
  const effects: string[] = actions.map(effectName);
  for (const event of events) {
    [snapshot, actions] = transition(machine, snapshot, event as never) as [
      AnyMachineSnapshot,
      { type: string }[],
    ];
    effects.push(...actions.map(effectName));
  }
  return { snapshot, effects };
}

const sandboxInput = { now: 0, timeoutMs: 3_600_000, maxIdleMs: 300_000, autoResume: true };
const sandbox = (events: SandboxMachineEvent[], input = sandboxInput) => drive(sandboxMachine, input, events);

describe('sandbox machine', () => {
  it('suspends after exactly max_idle_seconds without traffic, not a millisecond earlier', () => {
    expect(sandbox([{ type: 'clock', now: 299_999 }]).snapshot.value).toBe('running');
    const idle = sandbox([{ type: 'clock', now: 300_000 }]);
    expect(idle.snapshot.value).toBe('suspended');
    expect(idle.snapshot.context.suspendReason).toBe('idle');
    expect(idle.effects).toEqual(['freeze']);
  });

  it('counts idle time from the last SDK call or traffic', () => {
    const events: SandboxMachineEvent[] = [
      { type: 'clock', now: 200_000 },
      { type: 'traffic' },
      { type: 'clock', now: 499_999 },
    ];
    expect(sandbox(events).snapshot.value).toBe('running');
    expect(sandbox([...events, { type: 'clock', now: 500_000 }]).snapshot.value).toBe('suspended');
  });

  it('resumes on an SDK call only with autoResume, and always on connect', () => {
    const paused: SandboxMachineEvent[] = [{ type: 'pause' }];
    expect(sandbox([...paused, { type: 'sdk_call' }]).snapshot.value).toBe('running');
    const noAuto = { ...sandboxInput, autoResume: false };
    expect(sandbox([...paused, { type: 'sdk_call' }], noAuto).snapshot.value).toBe('suspended');
    const resumed = sandbox([...paused, { type: 'connect' }], noAuto);
    expect(resumed.snapshot.value).toBe('running');
    expect(resumed.effects).toEqual(['freeze', 'thaw']);
  });

  it('ends when running plus suspended time reaches the timeout, and destroys once', () => {
    const events: SandboxMachineEvent[] = [{ type: 'pause' }, { type: 'clock', now: 3_599_999 }];
    expect(sandbox(events).snapshot.value).toBe('suspended');
    const ended = sandbox([
      ...events,
      { type: 'clock', now: 3_600_000 },
      { type: 'kill' },
      { type: 'clock', now: 9e9 },
    ]);
    expect(ended.snapshot.value).toBe('ended');
    expect(ended.snapshot.context.endReason).toBe('timeout');
    expect(ended.effects.filter((e) => e === 'destroy')).toHaveLength(1);
  });

  it('tells the actor system when to send the next clock', () => {
    const { snapshot } = sandbox([{ type: 'clock', now: 10_000 }, { type: 'sdk_call' }]);
    expect(sandboxNextDueAt(snapshot as never)).toBe(310_000);
    expect(sandboxNextDueAt(sandbox([{ type: 'pause' }]).snapshot as never)).toBe(3_600_000);
    expect(sandboxNextDueAt(sandbox([{ type: 'kill' }]).snapshot as never)).toBeUndefined();
  });
});

const limits = { timeoutMs: 600_000, maxSteps: 2, maxTotalTokens: 1_000 };
const agent = (events: AgentExecutionEvent[]) => drive(agentExecutionMachine, undefined, events);
const run: AgentExecutionEvent = { type: 'run', limits };

describe('agent execution machine', () => {
  it('ends at the start of the step after max_steps, stopped like abort', () => {
    const two: AgentExecutionEvent[] = [run, { type: 'step_started' }, { type: 'step_started' }];
    expect(agent(two).snapshot.value).toEqual({ running: 'active' });
    const third = agent([...two, { type: 'step_started' }, { type: 'tree_empty' }]);
    expect(third.effects).toContain('freezeAndKillTree');
    expect(third.snapshot.context.outcome).toEqual({ kind: 'failed', reason: 'max_steps' });
  });

  it('checks the token budget after step_finished, allowing the total to reach it exactly', () => {
    const atBudget = agent([run, { type: 'step_started' }, { type: 'step_finished', totalTokens: 1_000 }]);
    expect(atBudget.snapshot.value).toEqual({ running: 'active' });
    const over = agent([
      run,
      { type: 'step_finished', totalTokens: 1_000 },
      { type: 'step_finished', totalTokens: 1 },
    ]);
    expect(over.snapshot.value).toEqual({ running: 'stopping' });
    const unlimited: AgentExecutionEvent = { type: 'run', limits: { ...limits, maxTotalTokens: null } };
    expect(agent([unlimited, { type: 'step_finished', totalTokens: 10 ** 9 }]).snapshot.value).toEqual({
      running: 'active',
    });
  });

  it('on timeout sends SIGTERM, waits 5 s, then freezes and kills, and reports timeout only when none remain', () => {
    const terminating = agent([run, { type: 'clock', now: 600_000 }]);
    expect(terminating.snapshot.value).toEqual({ running: 'terminating' });
    expect(terminating.effects).toEqual(['startRuntime', 'terminateTree']);
    expect(agentNextDueAt(terminating.snapshot as never)).toBe(605_000);
    const stillGrace = agent([run, { type: 'clock', now: 600_000 }, { type: 'clock', now: 604_999 }]);
    expect(stillGrace.snapshot.value).toEqual({ running: 'terminating' });
    const killed = agent([run, { type: 'clock', now: 600_000 }, { type: 'clock', now: 605_000 }]);
    expect(killed.effects).toEqual(['startRuntime', 'terminateTree', 'freezeAndKillTree']);
    expect(killed.snapshot.context.outcome).toBeUndefined();
    const done = agent([
      run,
      { type: 'clock', now: 600_000 },
      { type: 'clock', now: 605_000 },
      { type: 'tree_empty' },
    ]);
    expect(done.snapshot.value).toBe('idle');
    expect(done.snapshot.context.outcome).toEqual({ kind: 'failed', reason: 'timeout' });
  });

  it('answers a second run with busy and leaves the first untouched', () => {
    const busy = agent([run, { type: 'step_started' }, run]);
    expect(busy.effects).toEqual(['startRuntime', 'busy']);
    expect(busy.snapshot.context.steps).toBe(1);
  });

  it('a normal end reports done and kills nothing', () => {
    const done = agent([run, { type: 'runtime_exited' }]);
    expect(done.effects).toEqual(['startRuntime', 'outcome']);
    expect(done.snapshot.context.outcome).toEqual({ kind: 'done' });
  });
});

describe('gateway route machine', () => {
  it('keeps its first port across refreshes and keeps the previous config on a rejection', () => {
    const { snapshot, effects } = drive(gatewayRouteMachine, undefined, [
      { type: 'configure', version: 1, included: true },
      { type: 'listening', port: 40_001 },
      { type: 'configure', version: 2, included: true },
      { type: 'listening', port: 40_002 },
      { type: 'configure_rejected', errorClass: 'InvalidHeaderValue' },
    ]);
    expect(snapshot.value).toBe('open');
    expect(snapshot.context).toEqual({
      port: 40_001,
      configVersion: 2,
      lastErrorClass: 'InvalidHeaderValue',
    });
    expect(effects).toEqual(['openListener', 'swapValues']);
  });

  it('closes when a configuration leaves it out, and stays closed', () => {
    const { snapshot, effects } = drive(gatewayRouteMachine, undefined, [
      { type: 'configure', version: 1, included: true },
      { type: 'configure', version: 2, included: false },
      { type: 'configure', version: 3, included: true },
    ]);
    expect(snapshot.value).toBe('closed');
    expect(effects).toEqual(['openListener', 'closeListener']);
  });
});
