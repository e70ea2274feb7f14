/**
 * What sandboxd records of itself for its event stream beyond calls: commands started and ended, and
 * which endpoints the control plane's credential may call (its calls are never recorded).
 */
import { recordText, type DaemonRecord } from '../protocol/daemon-events.js';
import type { ProcessEvent } from '../protocol/process-events.js';

/**
 * What the control plane's credential may call: the event stream, the gateways' status, the agent's
 * executions and their abort (the operator may kill the whole sandbox anyway). Never a command, the
 * configuration, a prompt or a start.
 */
export const CONTROL_ENDPOINTS: ReadonlySet<string> = new Set([
  'GET /v1/events',
  'GET /v1/gateways',
  'GET /v1/agent/executions',
  'GET /v1/agent/executions/:id/events',
  'POST /v1/agent/executions/:id/abort',
]);

/** A command's start (its command line, cut to `MAX_RECORD_TEXT`) or end (how it ended) as a record. */
export function processRecord(
  pid: number,
  command: string,
  event: Extract<ProcessEvent, { type: 'start' | 'end' }>,
): DaemonRecord {
  const at = Date.now();
  return event.type === 'end'
    ? { at, type: 'process', pid, event: 'end', exitCode: event.exitCode, signal: event.signal }
    : { at, type: 'process', pid, event: 'start', command: recordText(command) };
}
