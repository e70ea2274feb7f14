/**
 * The sandbox table's oracle (SPEC "States and transitions / Sandbox"): the spec's words kept apart
 * from the machine (total time since creation; no traffic for max idle), which judge each row's
 * condition. Shared by the pure machine's test and the live actor's.
 */
import { expect } from 'vitest';
import type { SandboxMachineEvent } from '../../../machines/sandbox-machine.js';
import type { SandboxCondition } from '../../../machines/sandbox-table.js';
import type { Oracle } from './table-checker.js';

/** The events a caller or sandboxd sends a sandbox (time and effect failures are drawn apart). */
export const SANDBOX_CALL_EVENTS = [
  { type: 'pause' },
  { type: 'connect' },
  { type: 'sdk_call' },
  { type: 'traffic' },
  { type: 'kill' },
  { type: 'daemon_exited' },
] as const satisfies readonly SandboxMachineEvent[];

/** What the oracle keeps of a sandbox. */
export interface SandboxModel {
  readonly now: number;
  readonly deadline: number;
  readonly maxIdleMs: number;
  readonly autoResume: boolean;
  readonly lastActivity: number;
}

const later = (m: SandboxModel, e: SandboxMachineEvent) =>
  e.type === 'clock' ? Math.max(m.now, e.now) : m.now;

// The spec's words, independently of the machine: total time since creation; no traffic for max idle.
export const sandboxOracle: Oracle<SandboxModel, SandboxMachineEvent, SandboxCondition> = {
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
