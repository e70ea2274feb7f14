/**
 * sandboxd's own event stream (`GET /v1/events`, NDJSON, resumable with `?after=<seq>`): what the
 * daemon saw, pushed to the control plane, which feeds it to the sandbox's actor (the idle policy counts
 * this traffic, never what a client claims). Audit records only: no header value, body, query or output;
 * a gateway response's path (without its query) and a command's line, truncated, for the inspector.
 */
import { z } from 'zod';

/** Longest path or command line a record carries; longer ones are cut and end with `…`. */
export const MAX_RECORD_TEXT = 512;

/**
 * Longest name a record carries (a method, an endpoint's pattern, a route, an actor, a machine event or
 * state, an error class, a signal). The control plane keeps what sandboxd sends, and a sandboxd taken
 * over by sandbox code must not make it keep large strings: an event with a longer one is not an event.
 */
export const MAX_RECORD_NAME = 128;

const name = z.string().max(MAX_RECORD_NAME);
const text = z.string().max(MAX_RECORD_TEXT);
const base = { seq: z.number().int().positive(), at: z.number() };

/** One event of sandboxd's stream; every string in it is bounded (`MAX_RECORD_NAME`, `MAX_RECORD_TEXT`). */
export const daemonEventSchema = z.discriminatedUnion('type', [
  /** An authenticated call to sandboxd's API. */
  z.strictObject({ ...base, type: z.literal('call'), method: name, endpoint: name }),
  /** A request a gateway route received. */
  z.strictObject({ ...base, type: z.literal('gateway_request'), route: name, method: name }),
  /**
   * A gateway route's answer to one request, once it is over: `path` without its query (at most
   * `MAX_RECORD_TEXT` characters), the status the sandbox saw, the time from request to the end of the
   * response, and the response's bytes (head and body) written to the sandbox.
   */
  z.strictObject({
    ...base,
    type: z.literal('gateway_response'),
    route: name,
    method: name,
    path: text,
    status: z.number().int(),
    latencyMs: z.number().nonnegative(),
    bytes: z.number().int().nonnegative(),
  }),
  /**
   * A command started (with its command line, at most `MAX_RECORD_TEXT` characters) or ended (with its
   * exit code, or the signal that ended it).
   */
  z.strictObject({
    ...base,
    type: z.literal('process'),
    pid: z.number().int(),
    event: z.enum(['start', 'end']),
    command: text.optional(),
    exitCode: z.number().int().nullable().optional(),
    signal: name.nullable().optional(),
  }),
  /** A gateway route opened (on `port`), closed or failed (with its error class). */
  z.strictObject({
    ...base,
    type: z.literal('route'),
    route: name,
    event: z.enum(['opened', 'closed', 'failed']),
    port: z.number().int().optional(),
    errorClass: name.optional(),
  }),
  /**
   * A decision of the egress filter (issue 27): a DNS question, TLS or HTTP connection, or a request
   * to the egress proxy, refused (the name, the port, the rule: an entry, the mode, or the class of a
   * forbidden answer such as `loopback`), or a connection it let through, once it ended (the upstream
   * address and port it was connected to, its bytes both ways); `credential`: a connection the
   * credential broker terminated and injected a host's headers into. Never a header, a path or a body.
   */
  z.strictObject({
    ...base,
    type: z.literal('egress'),
    event: z.enum(['allowed', 'refused']),
    via: z.enum(['dns', 'tls', 'http', 'proxy', 'credential']),
    name: text,
    address: name.optional(),
    port: z.number().int().optional(),
    rule: text,
    bytes: z.number().int().nonnegative().optional(),
  }),
  /**
   * Preview traffic (issue 28): a tunnel to a port of the sandbox's loopback opened (`bytes` 0), or
   * moved `bytes` (both ways) since its last record; at most one a second per tunnel.
   */
  z.strictObject({
    ...base,
    type: z.literal('preview'),
    port: z.number().int(),
    bytes: z.number().int().nonnegative(),
  }),
  /**
   * A transition of an actor sandboxd hosts (a gateway route, the agent): its machine event's type and
   * new state; the agent's `run` names the execution it starts.
   */
  z.strictObject({
    ...base,
    type: z.literal('transition'),
    actorId: name,
    kind: z.enum(['gateway_route', 'agent_execution']),
    actorSeq: z.number().int().positive(),
    event: name,
    state: name,
    executionId: name.optional(),
  }),
]);

/** `text` as a record carries it: at most `MAX_RECORD_TEXT` characters, a cut one ending in `…` (never half a surrogate pair). */
export function recordText(text: string): string {
  if (text.length <= MAX_RECORD_TEXT) return text;
  const end = MAX_RECORD_TEXT - 1 - (/[\uD800-\uDBFF]/.test(text.charAt(MAX_RECORD_TEXT - 2)) ? 1 : 0);
  return `${text.slice(0, end)}…`;
}

/** One event of sandboxd's stream. */
export type DaemonEvent = z.infer<typeof daemonEventSchema>;

/** An event before the log numbers it. */
export type DaemonRecord = DaemonEvent extends infer E
  ? E extends DaemonEvent
    ? Omit<E, 'seq'>
    : never
  : never;

/** Event types that count as traffic for the idle policy. */
export const TRAFFIC_EVENTS: ReadonlySet<DaemonEvent['type']> = new Set([
  'call',
  'gateway_request',
  'preview',
]);
