/**
 * sandboxd's own event stream (`GET /v1/events`, NDJSON, resumable with `?after=<seq>`): what the
 * daemon saw, pushed to the control plane, which feeds it to the sandbox's actor (the idle policy counts
 * this traffic, never what a client claims). Audit records only: no header, body, path, query or output.
 */
import { z } from 'zod';

const base = { seq: z.number().int().positive(), at: z.number() };

/** One event of sandboxd's stream. */
export const daemonEventSchema = z.discriminatedUnion('type', [
  /** An authenticated call to sandboxd's API. */
  z.strictObject({ ...base, type: z.literal('call'), method: z.string(), endpoint: z.string() }),
  /** A request a gateway route received. */
  z.strictObject({ ...base, type: z.literal('gateway_request'), route: z.string(), method: z.string() }),
  /** A command started or ended. */
  z.strictObject({
    ...base,
    type: z.literal('process'),
    pid: z.number().int(),
    event: z.enum(['start', 'end']),
  }),
  /** A gateway route opened, closed or failed. */
  z.strictObject({
    ...base,
    type: z.literal('route'),
    route: z.string(),
    event: z.enum(['opened', 'closed', 'failed']),
  }),
  /**
   * A transition of an actor sandboxd hosts (a gateway route, the agent): its machine event's type and
   * new state.
   */
  z.strictObject({
    ...base,
    type: z.literal('transition'),
    actorId: z.string(),
    kind: z.enum(['gateway_route', 'agent_execution']),
    actorSeq: z.number().int().positive(),
    event: z.string(),
    state: z.string(),
  }),
]);

/** One event of sandboxd's stream. */
export type DaemonEvent = z.infer<typeof daemonEventSchema>;

/** An event before the log numbers it. */
export type DaemonRecord = DaemonEvent extends infer E
  ? E extends DaemonEvent
    ? Omit<E, 'seq'>
    : never
  : never;

/** Event types that count as traffic for the idle policy. */
export const TRAFFIC_EVENTS: ReadonlySet<DaemonEvent['type']> = new Set(['call', 'gateway_request']);
