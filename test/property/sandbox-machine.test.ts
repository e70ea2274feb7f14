import { fc, test } from '@fast-check/vitest';
import { sandboxMachine, type SandboxMachineEvent } from '../../machines/sandbox-machine.js';
import { SANDBOX_TABLE } from '../../machines/sandbox-table.js';
import { LIMITS } from '../../rules/limits.js';
import { SANDBOX_CALL_EVENTS, sandboxOracle } from './support/sandbox-oracle.js';
import { checkAgainstTable, withAbsoluteTime } from './support/table-checker.js';

// Deltas land exactly on the idle limit and the lifetime often, so off-by-one guards are caught.
const event = (input: { timeoutMs: number; maxIdleMs: number }) => {
  const delta = fc.oneof(
    fc.integer({ min: 0, max: Math.ceil(Math.min(input.timeoutMs, input.maxIdleMs) * 0.6) }),
    fc.constantFrom(0, 1, input.maxIdleMs, input.maxIdleMs - 1, input.timeoutMs, input.timeoutMs - 1),
  );
  return fc.oneof(
    fc.constantFrom<SandboxMachineEvent>(
      ...SANDBOX_CALL_EVENTS,
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
      sandboxOracle,
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
