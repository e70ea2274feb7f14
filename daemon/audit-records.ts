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

/**
 * Credentials people type into command lines, masked before a line is recorded: a URL's user and
 * password, header values of credential headers, bearer tokens, and `NAME=value` where the name says
 * token, secret, password or key.
 */
const CREDENTIAL_PATTERNS: readonly (readonly [RegExp, (match: string, ...groups: string[]) => string])[] = [
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, (_, scheme = '') => `${scheme}***@`],
  [
    /((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|cookie)(\s*[:=]\s*)(?:(bearer|basic|token)\s+)?[^\s'"]+/gi,
    (_, name = '', separator = '', scheme?: string) =>
      `${name}${separator}${scheme === undefined ? '' : `${scheme} `}***`,
  ],
  [/\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, (_, word = '') => `${word} ***`],
  [
    /\b([A-Za-z0-9_]*(?:token|secret|passw(?:or)?d|api_?key|access_?key)[A-Za-z0-9_]*)=[^\s'"]+/gi,
    (_, name = '') => `${name}=***`,
  ],
];

/** `command` with the credentials it shows masked (see `CREDENTIAL_PATTERNS`). */
export function maskCredentials(command: string): string {
  return CREDENTIAL_PATTERNS.reduce((text, [pattern, mask]) => text.replace(pattern, mask), command);
}

/**
 * A command's start (its command line with credentials masked, cut to `MAX_RECORD_TEXT`) or end (how it
 * ended) as a record.
 */
export function processRecord(
  pid: number,
  command: string,
  event: Extract<ProcessEvent, { type: 'start' | 'end' }>,
): DaemonRecord {
  const at = Date.now();
  return event.type === 'end'
    ? { at, type: 'process', pid, event: 'end', exitCode: event.exitCode, signal: event.signal }
    : { at, type: 'process', pid, event: 'start', command: recordText(maskCredentials(command)) };
}
