/**
 * The calls the control plane makes on a sandbox's sandboxd with its own credential (admitted there to
 * the execution list, an execution's events and its abort, the egress policy; the operator's terminals
 * are `daemon-terminals.ts`'): what the inspector and
 * an operator use without the sandbox's access token; what a memory snapshot's copies take over; and a
 * new egress policy. Only a running
 * sandbox is called (a frozen one would not answer, an ended one has no address left to call).
 */
import type { ServerResponse } from 'node:http';
import { request, type Dispatcher } from 'undici';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { executionListSchema, type ExecutionList } from '../protocol/agent-wire.js';
import { snapshotCarrySchema, type SnapshotCarry } from '../protocol/snapshot-carry.js';
import type { EgressPolicy } from '../rules/egress-policy.js';
import { SandboxError } from '../rules/errors.js';

/** Where sandboxd is and the control plane's credential for it. */
export interface DaemonTarget {
  readonly url: string;
  readonly token: string;
}

/** Time a call may wait for sandboxd's answer before it fails. */
const ANSWER_TIMEOUT_MS = 10_000;

const EXECUTION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** An execution id as it may appear in sandboxd's path. */
function executionPath(executionId: string): string {
  if (!EXECUTION_ID.test(executionId)) throw new SandboxError('no such execution', { code: 'not_found' });
  return `/v1/agent/executions/${executionId}`;
}

/** One call on sandboxd with the control plane's credential; an error answer is thrown as its SDK error. */
export async function callDaemon(
  target: DaemonTarget,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  options: {
    readonly stream?: boolean;
    readonly signal?: AbortSignal;
    readonly json?: unknown;
    /** A raw body (a terminal's input), instead of `json`. */
    readonly bytes?: Uint8Array;
  } = {},
): Promise<Dispatcher.ResponseData> {
  const body = options.bytes ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
  const res = await request(`${target.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${target.token}`,
      ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body }),
    headersTimeout: ANSWER_TIMEOUT_MS,
    bodyTimeout: options.stream === true ? 0 : ANSWER_TIMEOUT_MS,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (res.statusCode >= 300) {
    const body: unknown = await res.body.json().catch(() => undefined);
    throw errorFromEnvelope(body);
  }
  return res;
}

/** Resolves when `res` can take more, or has closed. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** What a memory snapshot's copies take over from the sandbox's sandboxd (asked as it is taken). */
export async function snapshotCarry(target: DaemonTarget): Promise<SnapshotCarry> {
  const res = await callDaemon(target, 'GET', '/v1/snapshot-carry');
  return snapshotCarrySchema.parse(await res.body.json());
}

/** Gives sandboxd a new egress policy for its resolver and name checks (the driver has the tables). */
export async function putEgress(target: DaemonTarget, policy: EgressPolicy): Promise<void> {
  const res = await callDaemon(target, 'PUT', '/v1/egress', { json: policy });
  await res.body.dump();
}

/** The sandbox's agent executions (the running one, if any, as `current`). */
export async function listExecutions(target: DaemonTarget): Promise<ExecutionList> {
  const res = await callDaemon(target, 'GET', '/v1/agent/executions');
  return executionListSchema.parse(await res.body.json());
}

/** Aborts an execution (SPEC: no grace); a finished one is left as it ended. */
export async function abortExecution(target: DaemonTarget, executionId: string): Promise<void> {
  const res = await callDaemon(target, 'POST', `${executionPath(executionId)}/abort`);
  await res.body.dump();
}

/**
 * Relays an execution's NDJSON event stream (`?after=`) to `res` as sandboxd sends it, until either side
 * ends; the caller's leaving ends the call to sandboxd.
 */
export async function relayExecutionEvents(
  target: DaemonTarget,
  executionId: string,
  after: number | undefined,
  res: ServerResponse,
): Promise<void> {
  await relayDaemonStream(target, `${executionPath(executionId)}/events`, after, res);
}

/** Relays one of sandboxd's NDJSON streams at `path` (`?after=`) to `res`, until either side ends. */
export async function relayDaemonStream(
  target: DaemonTarget,
  path: string,
  after: number | undefined,
  res: ServerResponse,
): Promise<void> {
  const abort = new AbortController();
  res.once('close', () => abort.abort());
  const query = after === undefined ? '' : `?after=${String(after)}`;
  const upstream = await callDaemon(target, 'GET', `${path}${query}`, {
    stream: true,
    signal: abort.signal,
  });
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  res.flushHeaders();
  try {
    for await (const chunk of upstream.body) {
      if (!res.write(chunk as Buffer)) await drained(res);
    }
    res.end();
  } catch {
    res.destroy();
  }
}
