/**
 * A runtime started ahead of its execution by `prepare()` (SPEC: "starts warm-up steps in the
 * background"): opencode initialises before it reads its prompt from stdin, so a process started early
 * with the last configuration reaches its first model request about half a second sooner once a run
 * adopts it (measured in bench:agent). Only a run it fits adopts it: same configuration and working
 * directory, a new session, the configuration's model, no reasoning. Anything else ends it first, so
 * two runtimes never share the sandbox's memory; unused, it ends after `STANDBY_MS`.
 */
import type { StartExecution } from '../protocol/agent-wire.js';
import type { ExecutionTree } from './execution-tree.js';
import type { ManagedProcess } from './managed-process.js';

/** How long a prepared runtime waits for a run before it is ended. */
export const STANDBY_MS = 10 * 60_000;

/** A prepared runtime. */
export interface StandbyRuntime {
  readonly configHash: string;
  readonly workdir: string;
  readonly process: ManagedProcess;
  readonly tree: ExecutionTree;
  readonly expiry: NodeJS.Timeout;
}

/** True when `start` can adopt `standby` as its runtime. */
export function standbyFits(standby: StandbyRuntime, start: StartExecution): boolean {
  return (
    standby.process.running &&
    standby.configHash === start.configHash &&
    standby.workdir === start.workdir &&
    start.sessionId === undefined &&
    start.model === undefined &&
    !start.reasoning
  );
}
