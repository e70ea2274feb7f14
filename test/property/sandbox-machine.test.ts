import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { sandboxMachine, type SandboxMachineEvent } from '../../machines/sandbox-machine.js';
import { SANDBOX_TABLE, type SandboxCondition } from '../../machines/sandbox-table.js';
import { LIMITS } from '../../rules/limits.js';
import { checkAgainstTable, withAbsoluteTime, type Oracle } from './support/table-checker.js';

interface Model {
  readonly now: number;
  readonly deadline: number;
  readonly maxIdleMs: number;
  readonly autoResume: boolean;
  readonly lastActivity: number;
}

const later = (m: Model, e: SandboxMachineEvent) => (e.type === 'clock' ? Math.max(m.now, e.now) : m.now);

// The spec's words, independently of the machine: total time since creation; no traffic for max idle.
const oracle: Oracle<Model, SandboxMachineEvent, SandboxCondition> = {
  conditions: {
    deadline_reached: (m, e) => later(m, e) >= m.deadline,
    idle_elapsed: (m, e) => later(m, e) - m.lastActivity >= m.maxIdleMs,
    auto_resume: (m) => m.autoResume,
  },
  update: (m, e, _from, to) => {
    const now = later(m, e);
    const active =
      to === 'running' && (e.type === 'sdk_call' || e.type === 'connect' || e.type === 'traffic');
    return { ...m, now, lastActivity: active ? now : m.lastActivity };
  },
  check: (m, e, from, to, context) => {
    const ctx = context as { endReason?: string; suspendReason?: string };
    if (to === 'suspended') expect(['paused', 'idle']).toContain(ctx.suspendReason);
    if (to === 'running') expect(ctx.suspendReason).toBeUndefined();
    if (to === 'ended' && m.now >= m.deadline)
      expect(['timeout', 'killed', 'failed']).toContain(ctx.endReason);
    if (from !== 'ended' && to === 'ended' && e.type === 'daemon_exited' && m.now < m.deadline)
      expect(ctx.endReason).toBe('failed');
  },
};

// Deltas land exactly on the idle limit and the lifetime often, so off-by-one guards are caught.
const event = (input: { timeoutMs: number; maxIdleMs: number }) => {
  const delta = fc.oneof(
    fc.integer({ min: 0, max: Math.ceil(Math.min(input.timeoutMs, input.maxIdleMs) * 0.6) }),
    fc.constantFrom(0, 1, input.maxIdleMs, input.maxIdleMs - 1, input.timeoutMs, input.timeoutMs - 1),
  );
  return fc.oneof(
    fc.constantFrom<SandboxMachineEvent>(
      { type: 'pause' },
      { type: 'connect' },
      { type: 'sdk_call' },
      { type: 'traffic' },
      { type: 'kill' },
      { type: 'daemon_exited' },
      { type: 'freeze_failed' },
      { type: 'thaw_failed' },
    ),
    { arbitrary: fc.record({ type: fc.constant('clock' as const), delta }), weight: 2 },
  );
};

const scenario = fc
  .record({
    start: fc.integer({ min: 0, max: 2 ** 40 }),
    timeoutMs: fc.oneof(
      fc.integer({ min: 1, max: LIMITS.sandboxMaxTimeoutMs }),
      fc.constantFrom(1_000, 600_000, LIMITS.sandboxTimeoutMs),
    ),
    maxIdleMs: fc.oneof(
      fc.integer({ min: 1_000, max: 3_600_000 }),
      fc.constantFrom(1_000, LIMITS.idleSeconds * 1000),
    ),
    autoResume: fc.boolean(),
  })
  .chain((input) =>
    fc.record({
      input: fc.constant(input),
      steps: fc.array(event(input), { maxLength: 60 }),
      restoreAt: fc.nat(),
    }),
  );

test.prop([scenario], { numRuns: 1000 })(
  'the sandbox machine follows the spec table',
  ({ input, steps, restoreAt }) => {
    const events = withAbsoluteTime<SandboxMachineEvent>(steps, input.start) as SandboxMachineEvent[];
    checkAgainstTable(
      sandboxMachine,
      {
        now: input.start,
        timeoutMs: input.timeoutMs,
        maxIdleMs: input.maxIdleMs,
        autoResume: input.autoResume,
      },
      SANDBOX_TABLE,
      oracle,
      {
        now: input.start,
        deadline: input.start + input.timeoutMs,
        maxIdleMs: input.maxIdleMs,
        autoResume: input.autoResume,
        lastActivity: input.start,
      },
      events,
      restoreAt,
    );
  },
);
