/**
 * The processes of one agent execution. Inside a sandbox each execution gets a memory cgroup of its own
 * under the commands' cgroup: every process the runtime starts is born in it, whatever session or
 * parent it takes, and none can leave it (its `cgroup.procs` belongs to sandboxd's root, not to the
 * sandbox user). So "the execution's tree" is exactly `cgroup.procs`, and nothing outside it is ever
 * signalled. Outside a sandbox (no commands' cgroup) the tree is the runtime and its descendants by
 * parent pid.
 */
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { descendantsOf } from './process-tree.js';

/** Rounds of SIGSTOP before the kill: a forking tree is caught within a few. */
const FREEZE_ROUNDS = 50;

/** One execution's processes. */
export class ExecutionTree {
  #root = 0;

  private constructor(
    /** The execution's cgroup folder, or undefined when none could be made. */
    readonly cgroupDir: string | undefined,
  ) {}

  /**
   * Makes the execution's cgroup under `commandCgroupDir` (the folder of the commands' cgroup). Outside
   * a sandbox (no such folder) the tree is the runtime and its descendants by parent pid.
   *
   * @throws Error when the cgroup cannot be made: inside a sandbox no execution runs without one
   */
  static create(commandCgroupDir: string | undefined, name: string): ExecutionTree {
    if (commandCgroupDir === undefined) return new ExecutionTree(undefined);
    const dir = join(commandCgroupDir, name);
    mkdirSync(dir);
    return new ExecutionTree(dir);
  }

  /** The `cgroup.procs` file the runtime joins before it becomes the sandbox user. */
  get procsFile(): string | undefined {
    return this.cgroupDir === undefined ? undefined : join(this.cgroupDir, 'cgroup.procs');
  }

  /** The runtime's pid, once started (the fallback tree hangs from it). */
  set root(pid: number) {
    this.#root = pid;
  }

  /** The pids of the tree now. */
  pids(): number[] {
    if (this.cgroupDir !== undefined) {
      try {
        return readFileSync(join(this.cgroupDir, 'cgroup.procs'), 'latin1')
          .split('\n')
          .filter((line) => line !== '')
          .map(Number);
      } catch {
        return [];
      }
    }
    if (this.#root === 0) return [];
    const alive = existsProcess(this.#root) ? [this.#root] : [];
    return [...alive, ...descendantsOf(this.#root).keys()];
  }

  /** True when no process of the tree remains. */
  get empty(): boolean {
    return this.pids().length === 0;
  }

  /** Sends `signal` to every process of the tree. */
  signal(signal: NodeJS.Signals): void {
    for (const pid of this.pids()) kill(pid, signal);
  }

  /** Stops every process (SIGSTOP until no new one appears), then SIGKILLs them all. */
  async freezeAndKill(): Promise<void> {
    const stopped = new Set<number>();
    for (let round = 0; round < FREEZE_ROUNDS; round++) {
      const fresh = this.pids().filter((pid) => !stopped.has(pid));
      if (fresh.length === 0) break;
      for (const pid of fresh) {
        kill(pid, 'SIGSTOP');
        stopped.add(pid);
      }
      await sleep(1);
    }
    this.signal('SIGKILL');
  }

  /** Removes the cgroup once empty; false while processes remain (left running by a normal end). */
  remove(): boolean {
    if (this.cgroupDir === undefined) return true;
    try {
      rmdirSync(this.cgroupDir);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
  }
}

function existsProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ended meanwhile
  }
}
