/** SPEC "States and transitions / Sandbox", as data. Rows are in priority order. */
import type { TransitionTable } from './transition-table.js';

/** Sandbox states: declared here once; the machine, the actor and the wire (`sandboxStateSchema`) take them. */
export const SANDBOX_STATES = ['running', 'suspended', 'ended'] as const;

/** A sandbox state. */
export type SandboxState = (typeof SANDBOX_STATES)[number];

/** Conditions of the sandbox table. */
export type SandboxCondition = 'deadline_reached' | 'idle_elapsed' | 'auto_resume';

/** The sandbox table. */
export const SANDBOX_TABLE: TransitionTable<
  SandboxState,
  'pause' | 'clock' | 'connect' | 'sdk_call' | 'kill' | 'daemon_exited' | 'freeze_failed' | 'thaw_failed',
  SandboxCondition
> = {
  states: SANDBOX_STATES,
  terminal: ['ended'],
  rows: [
    {
      from: 'running',
      trigger: 'clock',
      when: 'deadline_reached',
      to: 'ended',
      effects: ['destroy'],
      spec: 'total time reaches timeout',
    },
    {
      from: 'suspended',
      trigger: 'clock',
      when: 'deadline_reached',
      to: 'ended',
      effects: ['destroy'],
      spec: 'total time reaches timeout',
    },
    {
      from: 'running',
      trigger: 'pause',
      to: 'suspended',
      effects: ['freeze'],
      spec: 'pause(): memory preserved',
    },
    {
      from: 'running',
      trigger: 'clock',
      when: 'idle_elapsed',
      to: 'suspended',
      effects: ['freeze'],
      spec: 'idle policy: no traffic for max_idle_seconds',
    },
    {
      from: 'suspended',
      trigger: 'connect',
      to: 'running',
      effects: ['thaw'],
      spec: 'connect() on the same handle',
    },
    {
      from: 'suspended',
      trigger: 'sdk_call',
      when: 'auto_resume',
      to: 'running',
      effects: ['thaw'],
      spec: 'any SDK call with auto_resume',
    },
    { from: 'running', trigger: 'kill', to: 'ended', effects: ['destroy'], spec: 'kill()' },
    { from: 'suspended', trigger: 'kill', to: 'ended', effects: ['destroy'], spec: 'kill()' },
    {
      from: 'suspended',
      trigger: 'freeze_failed',
      to: 'running',
      effects: [],
      spec: 'issue 10: a failed effect comes back as an event; a suspend whose freeze failed is running',
    },
    {
      from: 'running',
      trigger: 'thaw_failed',
      to: 'suspended',
      effects: [],
      spec: 'issue 10: a resume whose thaw failed is still suspended',
    },
    {
      from: 'running',
      trigger: 'daemon_exited',
      to: 'ended',
      effects: ['destroy'],
      spec: 'issue 9: a sandbox whose sandboxd dies ends as failed',
    },
    {
      from: 'suspended',
      trigger: 'daemon_exited',
      to: 'ended',
      effects: ['destroy'],
      spec: 'issue 9: a sandbox whose sandboxd dies ends as failed',
    },
  ],
};
