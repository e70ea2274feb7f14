/**
 * A runtime started ahead of its execution by `prepare()` (SPEC: "starts warm-up steps in the
 * background"): opencode initialises before it reads its prompt from stdin, so a process started early
 * with the last configuration reaches its first model request about half a second sooner once a run
 * adopts it (measured in bench:agent). Only a run it fits adopts it: same configuration and working
 * directory, a new session, the configuration's model, no reasoning. Anything else ends it first, so
 * two runtimes never share the sandbox's memory; unused, it ends after `STANDBY_MS`. Beside a gVisor box a
 * memory snapshot holds it too: the copy's sandboxd adopts it (`carried`, `protocol/snapshot-carry.ts`).
 */
import { createReadStream } from 'node:fs';
import type { StartExecution } from '../protocol/agent-wire.js';
import type { CarriedStandby } from '../protocol/snapshot-carry.js';
import type { ExecutionTree } from './execution-tree.js';
import type { ManagedProcess } from './managed-process.js';

/** How long a prepared runtime waits for a run before it is ended. */
export const STANDBY_MS = 10 * 60_000;

/** A prepared runtime. */
interface StandbyRuntime {
  readonly configHash: string;
  readonly workdir: string;
  readonly process: ManagedProcess;
  readonly tree: ExecutionTree;
  readonly expiry: NodeJS.Timeout;
}

/** True when `start` can adopt `standby` as its runtime. */
function standbyFits(standby: StandbyRuntime, start: StartExecution): boolean {
  return (
    standby.process.running &&
    standby.configHash === start.configHash &&
    standby.workdir === start.workdir &&
    start.sessionId === undefined &&
    start.model === undefined &&
    !start.reasoning
  );
}

/** The one prepared runtime a sandbox may hold. */
export class StandbySlot {
  #held: StandbyRuntime | undefined;

  /** @param retire - where a dropped runtime's tree goes (killed here, its cgroup removed later) */
  constructor(private readonly retire: (tree: ExecutionTree) => void) {}

  /** True while a prepared runtime is alive. */
  get running(): boolean {
    return this.#held?.process.running === true;
  }

  /** Holds `process` (in `tree`, for `configHash` in `workdir`), ending any runtime held before. */
  hold(configHash: string, workdir: string, process: ManagedProcess, tree: ExecutionTree): void {
    this.drop();
    const expiry = setTimeout(() => this.drop(), STANDBY_MS);
    this.#held = { configHash, workdir, process, tree, expiry };
    process.started.catch(() => this.drop());
  }

  /** The prepared runtime as a snapshot's copy adopts it, while one runs. */
  carried(): CarriedStandby | undefined {
    const held = this.#held;
    if (held === undefined || !held.process.running || held.process.pid === 0) return undefined;
    const { configHash, workdir, process } = held;
    return { configHash, workdir, pid: process.pid, cmd: process.cmd };
  }

  /** The prepared runtime if `start` fits it, handed over; any other is ended first. */
  take(
    start: StartExecution,
  ): { readonly process: ManagedProcess; readonly tree: ExecutionTree } | undefined {
    const held = this.#held;
    if (held === undefined) return undefined;
    if (!standbyFits(held, start)) {
      this.drop();
      return undefined;
    }
    clearTimeout(held.expiry);
    this.#held = undefined;
    return held;
  }

  /** Ends the prepared runtime, if any: its whole tree, which only it ever used. */
  drop(): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    clearTimeout(held.expiry);
    void held.tree.freezeAndKill().catch(() => undefined);
    this.retire(held.tree);
  }
}

/** Reads a runtime's binary into the page cache, one read at a time (a second `prepare` meanwhile adds none). */
export class Prefetch {
  #reading = false;

  /** Reads `path` to its end in the background; errors are ignored (the run reads it anyway). */
  read(path: string): void {
    if (this.#reading) return;
    this.#reading = true;
    const done = (): void => void (this.#reading = false);
    createReadStream(path, { highWaterMark: 1 << 20 })
      .on('error', done)
      .on('close', done)
      .resume();
  }
}
