/**
 * What sandboxd records of itself for its event stream beyond calls: commands started and ended, and
 * which endpoints the control plane's credential may call (its calls are not recorded, but for a terminal's).
 */
import { recordText, type DaemonRecord } from '../protocol/daemon-events.js';
import type { ProcessEvent } from '../protocol/process-events.js';
import { maskCredentials } from './credential-masking.js';

/**
 * What the control plane's credential may call: the event stream, the gateways' status, what a
 * snapshot's copy takes over, the egress policy, the agent's executions and their abort (the operator may kill the whole
 * sandbox anyway), and the operator's terminal (a login shell as the sandbox user, issue 28: the operator
 * holds every sandbox's lifecycle anyway). Never a command line, the configuration, a prompt or a start.
 */
export const CONTROL_ENDPOINTS: ReadonlySet<string> = new Set([
  'GET /v1/events',
  'GET /v1/gateways',
  'GET /v1/snapshot-carry',
  'PUT /v1/egress',
  'GET /v1/agent/executions',
  'GET /v1/agent/executions/:id/events',
  'POST /v1/agent/executions/:id/abort',
  // A login shell on a terminal for the operator (the inspector), recorded as activity.
  'POST /v1/terminals',
]);

/**
 * A terminal's calls (`/v1/processes/:pid/...`), admitted to the control plane's credential only for a
 * terminal it opened itself (`POST /v1/terminals`: the inspector's terminal panel), never for a command
 * the sandbox's token started. Unlike watching, they are the sandbox's activity and are recorded.
 */
export const TERMINAL_ENDPOINTS: ReadonlySet<string> = new Set([
  'GET /v1/processes/:pid/events',
  'POST /v1/processes/:pid/stdin',
  'POST /v1/processes/:pid/resize',
  'POST /v1/processes/:pid/signal',
]);

/**
 * What only the control plane's credential may call, never the sandbox's token: the egress policy, which
 * the control plane changes in the driver's tables in the same step.
 */
export const CONTROL_ONLY: ReadonlySet<string> = new Set(['PUT /v1/egress']);

/**
 * How much of a command line is read for credentials: far more than a record keeps (`MAX_RECORD_TEXT`),
 * and a bound on the reading (linear, about a second a megabyte; a command line may be megabytes).
 */
const MASKED_LENGTH = 16 * 1024;

/**
 * A command's start (its command line with credentials masked, `credential-masking.ts`, cut to
 * `MAX_RECORD_TEXT`) or end (how it ended) as a record.
 */
export function processRecord(
  pid: number,
  command: string,
  event: Extract<ProcessEvent, { type: 'start' | 'end' }>,
): DaemonRecord {
  const at = Date.now();
  if (event.type === 'end') {
    return { at, type: 'process', pid, event: 'end', exitCode: event.exitCode, signal: event.signal };
  }
  const masked = maskCredentials(command.slice(0, MASKED_LENGTH));
  return { at, type: 'process', pid, event: 'start', command: recordText(masked) };
}
