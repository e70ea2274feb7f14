/**
 * The commands one daemon started, by pid. Ended ones stay listed, with their kept output, so clients can
 * still read them, within bounds: the sandbox's kept output as a whole stays within
 * `SANDBOX_OUTPUT_BUDGET` (the oldest output of ended commands goes first, then of running ones), and an
 * ended command is forgotten `FORGET_ENDED_AFTER_MS` after it ended or once `MAX_ENDED` newer ones ended.
 */
import { ManagedProcess, type CommandSpec } from './managed-process.js';
import type { SandboxUser } from './sandbox-spawn.js';

/** Kept output of all the sandbox's commands together (base64 characters, as kept). */
export const SANDBOX_OUTPUT_BUDGET = 16 * 1024 * 1024;

/** How long an ended command stays listed and readable. */
export const FORGET_ENDED_AFTER_MS = 10 * 60_000;

/** Ended commands remembered at most; the one that ended first is forgotten first. */
export const MAX_ENDED = 256;

/** The daemon's commands. */
export class ProcessTable {
  readonly #processes = new Map<number, ManagedProcess>();
  readonly #budget: number;
  #kept = 0;

  /** @param budget - the sandbox's output budget (tests make it small) */
  constructor(
    readonly user: SandboxUser,
    budget = SANDBOX_OUTPUT_BUDGET,
  ) {
    this.#budget = budget;
  }

  /**
   * Starts a command as the account `spec.account` names (the sandbox user by default; the caller has
   * checked that root is there to run as); rejects when it cannot start.
   */
  async start(spec: CommandSpec): Promise<ManagedProcess> {
    this.#forgetOld();
    const proc = new ManagedProcess(spec, this.user, (bytes) => this.#counted(bytes));
    try {
      await proc.started;
    } catch (error) {
      this.#kept -= proc.keptBytes;
      throw error;
    }
    this.#processes.set(proc.pid, proc);
    return proc;
  }

  /** The command with this pid, if this daemon started it and has not forgotten it. */
  get(pid: number): ManagedProcess | undefined {
    this.#forgetOld();
    return this.#processes.get(pid);
  }

  /** Every command it remembers, running or ended. */
  list(): ManagedProcess[] {
    this.#forgetOld();
    return [...this.#processes.values()];
  }

  /** Output kept by all commands now (base64 characters). */
  get keptBytes(): number {
    return this.#kept;
  }

  /** Ends every running command's tree (the daemon is stopping). */
  async killAll(): Promise<void> {
    await Promise.all(this.list().map((proc) => proc.kill('SIGKILL', true)));
  }

  #counted(bytes: number): void {
    this.#kept += bytes;
    if (bytes > 0 && this.#kept > this.#budget) this.#reclaim();
  }

  /** Drops the oldest output until the budget holds: ended commands' first, oldest ended first. */
  #reclaim(): void {
    const ended = this.#ended();
    const running = [...this.#processes.values()].filter((proc) => proc.running);
    for (const proc of [...ended, ...running]) {
      if (this.#kept <= this.#budget) return;
      proc.dropOldestOutput(this.#kept - this.#budget);
    }
  }

  /** Ended commands, the one that ended first first. */
  #ended(): ManagedProcess[] {
    return [...this.#processes.values()]
      .filter((proc) => proc.endedAt !== undefined)
      .sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
  }

  #forgetOld(): void {
    const ended = this.#ended();
    const now = Date.now();
    ended.forEach((proc, index) => {
      const old = now - (proc.endedAt ?? now) > FORGET_ENDED_AFTER_MS;
      if (!old && ended.length - index <= MAX_ENDED) return;
      proc.dropOldestOutput(Number.POSITIVE_INFINITY);
      if (this.#processes.get(proc.pid) === proc) this.#processes.delete(proc.pid);
    });
  }
}
