/**
 * Commands and terminals (`protocol/process-events.ts`): a command started as the sandbox user or root
 * (with `?stream=true` its answer is its event stream, so a foreground command is one call), the
 * operator's terminal (a login shell as the sandbox user, for the inspector's panel), and the calls by
 * pid: events from a cursor, stdin, resize, signal. Every command gets the broker's proxy and trust
 * variables, then the sandbox's secrets, then its own environment.
 */
import type { ServerResponse } from 'node:http';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import {
  LOGIN_SHELL,
  signalCommandSchema,
  startCommandSchema,
  terminalSizeSchema,
  type ProcessEvent,
} from '../protocol/process-events.js';
import { DEFAULT_ACCOUNT } from '../protocol/sandbox-accounts.js';
import type { SequencedLog } from '../actors/sequenced-log.js';
import { processRecord } from './audit-records.js';
import { afterOf, ok, readJson, type DaemonRoutes } from './daemon-call.js';
import type { StreamQuota } from './event-streams.js';
import type { ManagedProcess } from './managed-process.js';
import { streamProcessEvents } from './process-stream.js';
import type { ProcessTable } from './process-table.js';
import { RequestError } from './request-error.js';
import { checkedAccount } from './sandbox-account.js';

/** What the command routes need. */
export interface ProcessRoutesOptions {
  readonly processes: ProcessTable;
  /** Where a command's start and end are recorded. */
  readonly audit: SequencedLog<DaemonRecord>;
  /** The environment every command starts with, under its own: the broker's, then the secrets. */
  readonly environment: (own: Readonly<Record<string, string>>) => Record<string, string>;
  /** Open command event streams at most. */
  readonly quota: StreamQuota;
  readonly keepaliveMs: number;
  /** How long a command's event stream may leave its socket full before it is cut. */
  readonly streamStallMs?: number;
  /** Terminals the control plane's credential opened, while they run (its calls by pid are theirs). */
  readonly operatorTerminals: Set<number>;
}

/** The command and terminal routes. */
export function processRoutes(options: ProcessRoutesOptions): DaemonRoutes {
  const { processes, audit, quota, keepaliveMs, operatorTerminals } = options;

  const find = (pid: string | undefined): ManagedProcess => {
    const found = processes.get(Number(pid));
    if (found === undefined) throw new RequestError('process_not_found', 'no such process');
    return found;
  };
  /** A command's events after `?after=` (from its start without) at the client's pace. */
  const streamEvents = (res: ServerResponse, proc: ManagedProcess, url: URL): void => {
    const after = afterOf(url);
    quota.take(res);
    streamProcessEvents(res, proc, after ?? 0, keepaliveMs, options.streamStallMs);
  };
  const recordStartAndEnd = (proc: ManagedProcess, command: string) => (event: ProcessEvent) => {
    if (event.type === 'start' || event.type === 'end') audit.append(processRecord(proc.pid, command, event));
  };
  const couldNotStart = (error: unknown): never => {
    throw new RequestError('sandbox_error', error instanceof Error ? error.message : 'could not start');
  };

  return {
    'POST /v1/processes': async ({ req, res, url }) => {
      const { user, ...spec } = await readJson(req, startCommandSchema);
      // Root outside a sandbox is refused (`invalid_argument`) before the command starts.
      const account = checkedAccount('commands.run', user, processes.user);
      const streamed = url.searchParams.get('stream') === 'true';
      if (streamed) quota.check(); // refused before the command starts
      const proc = await processes
        .start({
          ...spec,
          account,
          envs: options.environment(spec.envs),
          cwd: spec.cwd,
          timeoutMs: spec.timeoutMs,
        })
        .catch(couldNotStart);
      proc.follow(recordStartAndEnd(proc, spec.cmd));
      if (streamed) {
        streamEvents(res, proc, url);
        return 'streamed';
      }
      return ok({ pid: proc.pid });
    },
    'POST /v1/terminals': async ({ req }) => {
      const size = await readJson(req, terminalSizeSchema);
      const proc = await processes
        .start({
          cmd: LOGIN_SHELL,
          pty: size,
          account: checkedAccount('terminal', DEFAULT_ACCOUNT, processes.user),
          envs: options.environment({}),
          cwd: undefined,
          timeoutMs: undefined,
          killTree: true,
        })
        .catch(couldNotStart);
      operatorTerminals.add(proc.pid);
      const record = recordStartAndEnd(proc, LOGIN_SHELL);
      proc.follow((event) => {
        record(event);
        if (event.type === 'end') operatorTerminals.delete(proc.pid);
      });
      return ok({ pid: proc.pid });
    },
    'GET /v1/processes': () =>
      ok(
        processes
          .list()
          .map((p) => ({ pid: p.pid, cmd: p.cmd, running: p.running, ...(p.pty ? { pty: true } : {}) })),
      ),
    'GET /v1/processes/:pid/events': ({ res, url, params }) => {
      streamEvents(res, find(params['pid']), url);
      return 'streamed';
    },
    'POST /v1/processes/:pid/stdin': async ({ req, params }) => {
      const proc = find(params['pid']);
      // One chunk at a time, each once the pipe took it: a command that does not read holds the body.
      for await (const chunk of req) await proc.writeStdin(chunk as Buffer);
      return ok();
    },
    'POST /v1/processes/:pid/stdin/close': ({ params }) => {
      find(params['pid']).closeStdin();
      return ok();
    },
    'POST /v1/processes/:pid/resize': async ({ req, params }) => {
      await find(params['pid']).resize(await readJson(req, terminalSizeSchema));
      return ok();
    },
    'POST /v1/processes/:pid/signal': async ({ req, params }) => {
      const proc = find(params['pid']);
      const { signal, tree } = await readJson(req, signalCommandSchema);
      await proc.kill(signal, tree);
      return ok();
    },
  };
}
