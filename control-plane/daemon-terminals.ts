/**
 * The operator's terminals (issue 28: the inspector's terminal panel): a login shell on a terminal in the
 * sandbox, as the sandbox user, opened and driven on sandboxd with the control plane's credential, which
 * sandboxd admits by pid only to the terminals it opened that way (daemon/audit-records.ts); each call is
 * the sandbox's activity there. The SDK's `sbx.pty` goes to sandboxd directly with the sandbox's token.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { TerminalSize } from '../protocol/process-events.js';
import { SandboxError } from '../rules/errors.js';
import { callDaemon, relayDaemonStream, type DaemonTarget } from './daemon-agent.js';

const pidAnswer = z.strictObject({ pid: z.number().int().positive() });

/** A pid as it may appear in sandboxd's path. */
function terminalPath(pid: number): string {
  if (!Number.isSafeInteger(pid) || pid <= 0)
    throw new SandboxError('no such process', { code: 'process_not_found' });
  return `/v1/processes/${String(pid)}`;
}

/** Opens a terminal of `size` running a login shell; its pid. */
export async function openTerminal(target: DaemonTarget, size: TerminalSize): Promise<number> {
  const res = await callDaemon(target, 'POST', '/v1/terminals', { json: size });
  return pidAnswer.parse(await res.body.json()).pid;
}

/** Relays the terminal's event stream (its output replayed from `after`, then live) to `res`. */
export async function relayTerminalEvents(
  target: DaemonTarget,
  pid: number,
  after: number | undefined,
  res: ServerResponse,
): Promise<void> {
  await relayDaemonStream(target, `${terminalPath(pid)}/events`, after, res);
}

/** Types `bytes` into the terminal. */
export async function typeInto(target: DaemonTarget, pid: number, bytes: Uint8Array): Promise<void> {
  const res = await callDaemon(target, 'POST', `${terminalPath(pid)}/stdin`, { bytes });
  await res.body.dump();
}

/** Resizes the terminal (its program gets SIGWINCH). */
export async function resizeTerminal(target: DaemonTarget, pid: number, size: TerminalSize): Promise<void> {
  const res = await callDaemon(target, 'POST', `${terminalPath(pid)}/resize`, { json: size });
  await res.body.dump();
}

/** Ends the terminal's program and everything it started. */
export async function closeTerminal(target: DaemonTarget, pid: number): Promise<void> {
  const res = await callDaemon(target, 'POST', `${terminalPath(pid)}/signal`, {
    json: { signal: 'SIGKILL', tree: true },
  });
  await res.body.dump();
}
