/**
 * What the inspector page reads from the control plane (beside `GET /v1/inspect` and the agent
 * proxies): the machine definitions as graphs, the sandbox table, sandboxd's records per sandbox and a
 * sandbox's history replayed from the journal. Every endpoint takes the operator key; none carries a
 * header value, a body, a secret or command output.
 */
import { z } from 'zod';
import { sandboxInfoSchema } from './control-plane-api.js';

/** One state node of a machine: `id` is its dotted path from the root (`running`, `running.step`). */
export const machineStateNodeSchema = z.strictObject({
  id: z.string(),
  key: z.string(),
  /** The parent's `id`; null for the machine's top-level states. */
  parent: z.string().nullable(),
  type: z.enum(['atomic', 'compound', 'parallel', 'final', 'history']),
  /** The initial child's `id` of a compound state. */
  initial: z.string().nullable(),
  /** Actions run on entering it. */
  entry: z.array(z.string()),
});

/** One transition of a machine, as its definition declares it. */
export const machineTransitionSchema = z.strictObject({
  source: z.string(),
  /** Target state ids; empty for a transition that stays (actions only). */
  targets: z.array(z.string()),
  event: z.string(),
  /** The guard's name, when the transition is guarded. */
  guard: z.string().nullable(),
  /** The actions' names (the effects the step requests). */
  actions: z.array(z.string()),
});

/** A machine drawn from its definition: `GET /v1/machines` gives one per actor kind. */
export const machineGraphSchema = z.strictObject({
  id: z.string(),
  /** The top-level initial state's id. */
  initial: z.string(),
  states: z.array(machineStateNodeSchema),
  transitions: z.array(machineTransitionSchema),
});

/** A machine drawn from its definition. */
export type MachineGraph = z.infer<typeof machineGraphSchema>;

/** `GET /v1/machines`. */
export const machineGraphsSchema = z.strictObject({
  sandbox: machineGraphSchema,
  gateway_route: machineGraphSchema,
  agent_execution: machineGraphSchema,
});

/** `GET /v1/machines`. */
export type MachineGraphs = z.infer<typeof machineGraphsSchema>;

/** A gateway route as the control plane last heard of it from sandboxd. */
export const routeSummarySchema = z.strictObject({
  name: z.string(),
  /** The route actor's state (`opening`, `open`, `failed`, `closed`, …). */
  state: z.string(),
  port: z.number().int().nullable(),
  lastErrorClass: z.string().nullable(),
});

/** One row of the sandbox table. */
export const inspectorSandboxSchema = sandboxInfoSchema.extend({
  /** Creation time, ms. */
  createdAt: z.number(),
  /** Last activity the idle policy counted, ms. */
  lastActivityAt: z.number(),
  maxIdleMs: z.number(),
  autoResume: z.boolean(),
  /** Bytes of memory the sandbox uses now; null when the driver cannot tell (or it has ended). */
  memoryBytes: z.number().nullable(),
  /** Its memory limit, bytes. */
  memoryLimitBytes: z.number().nullable(),
  routes: z.array(routeSummarySchema),
  /** The agent execution running now, if any. */
  execution: z.strictObject({ executionId: z.string(), state: z.string() }).nullable(),
});

/** One row of the sandbox table. */
export type InspectorSandbox = z.infer<typeof inspectorSandboxSchema>;

/** `GET /v1/inspector/sandboxes`: live sandboxes and the most recently ended ones. */
export const inspectorSandboxesSchema = z.strictObject({
  /** The control plane's clock when the table was read (countdowns are relative to it). */
  now: z.number(),
  sandboxes: z.array(inspectorSandboxSchema),
});

/** `GET /v1/inspector/sandboxes`. */
export type InspectorSandboxes = z.infer<typeof inspectorSandboxesSchema>;

/**
 * One line of `GET /v1/sandboxes/:id/records?after=<cursor>`: one of sandboxd's records (see
 * `daemon-events.ts`; `seq` is sandboxd's own) as the control plane received it, with the control
 * plane's `cursor` for `?after=`.
 */
export const sandboxRecordLineSchema = z.looseObject({
  cursor: z.number().int().positive(),
  sandboxId: z.string(),
  type: z.string(),
  at: z.number(),
});

/** One entry of a sandbox's history: the journaled event with the actor's sequence number. */
export const historyEntrySchema = z.strictObject({
  seq: z.number().int().nonnegative(),
  /** The journaled event (clock events carry their time). */
  event: z.looseObject({ type: z.string() }),
  /** The state after it, and the context that matters to a reader. */
  state: z.string(),
  context: z.strictObject({
    now: z.number(),
    deadlineAt: z.number(),
    lastActivityAt: z.number(),
    suspendReason: z.string().nullable(),
    endReason: z.string().nullable(),
  }),
});

/** `GET /v1/sandboxes/:id/history`: a sandbox's journaled events replayed, state by state. */
export const sandboxHistorySchema = z.strictObject({
  sandboxId: z.string(),
  /**
   * `created`: from the sandbox's creation; `snapshot`: from a compaction's snapshot (earlier events
   * are no longer in the journal); the first entry is then that snapshot's state.
   */
  from: z.enum(['created', 'snapshot']),
  entries: z.array(historyEntrySchema),
});

/** `GET /v1/sandboxes/:id/history`. */
export type SandboxHistory = z.infer<typeof sandboxHistorySchema>;
