/**
 * The processes of one agent execution. Inside a namespace sandbox each execution gets a memory cgroup
 * of its own under the commands' cgroup: every process the runtime starts is born in it, whatever
 * session or parent it takes, and none can leave it (its `cgroup.procs` belongs to sandboxd's root, not
 * to the sandbox user). So "the execution's tree" is exactly `cgroup.procs`, and nothing outside it is
 * ever signalled. Without a commands' cgroup (on a host, or beside a gVisor box, whose processes are no
 * host processes) the tree is the runtime and its descendants by parent pid in the sandbox's process
 * space; in a gVisor box the runtime is its tree's subreaper (`gvisor-exec start --subreaper`), so an
 * orphan of the tree stays in it while the runtime lives. Once the runtime has exited (on SIGTERM, at a
 * timeout) its children go to the box's pid 1: every process once read in the tree stays the tree's
 * while it runs (the same pid and start time), with its descendants.
 */
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostProcesses, type ProcessSpace } from './process-space.js';
import { descendantsIn } from './process-tree.js';

/** Rounds of SIGSTOP before the kill: a forking tree is caught within a few. */
const FREEZE_ROUNDS = 50;

/** Reads of a process space that did not answer before a signal gives up. */
const READ_ATTEMPTS = 20;

/** One execution's processes. */
export class ExecutionTree {
  #root = 0;
  /** Without a cgroup: the processes read in the tree last time (pid → start time). */
  #members = new Map<number, string>();
  #rootStart: string | undefined;

  private constructor(
    /** The execution's cgroup folder, or undefined when none could be made. */
    readonly cgroupDir: string | undefined,
    readonly space: ProcessSpace,
  ) {}

  /**
   * Makes the execution's cgroup under `commandCgroupDir` (the folder of the commands' cgroup). Without
   * such a folder the tree is the runtime and its descendants by parent pid in `space`.
   *
   * @throws Error when the cgroup cannot be made: inside a sandbox no execution runs without one
   */
  static create(
    commandCgroupDir: string | undefined,
    name: string,
    space: ProcessSpace = hostProcesses,
  ): ExecutionTree {
    if (commandCgroupDir === undefined) return new ExecutionTree(undefined, space);
    const dir = join(commandCgroupDir, name);
    mkdirSync(dir);
    return new ExecutionTree(dir, space);
  }

  /** The `cgroup.procs` file the runtime joins before it becomes the sandbox user. */
  get procsFile(): string | undefined {
    return this.cgroupDir === undefined ? undefined : join(this.cgroupDir, 'cgroup.procs');
  }

  /** The runtime's pid (as its process space names it), once started: the tree hangs from it. */
  set root(pid: number) {
    this.#root = pid;
  }

  /** The pids of the tree now; rejects when its process space cannot be read. */
  async pids(): Promise<number[]> {
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
    // A box that does not answer (busy, frozen) tells nothing: never taken as an empty tree.
    const processes = await this.space.list();
    const starts = new Map(processes.map((entry) => [entry.pid, entry.start]));
    const tree = new Map<number, string>();
    // The root by pid until its start time is known (a fresh runtime), by both after.
    this.#rootStart ??= starts.get(this.#root);
    if (this.#rootStart !== undefined && starts.get(this.#root) === this.#rootStart)
      tree.set(this.#root, this.#rootStart);
    for (const [pid, start] of this.#members) if (starts.get(pid) === start) tree.set(pid, start);
    for (const pid of [...tree.keys()])
      for (const [child, start] of descendantsIn(processes, pid)) tree.set(child, start);
    this.#members = tree;
    return [...tree.keys()];
  }

  /** True when no process of the tree remains. */
  async isEmpty(): Promise<boolean> {
    return (await this.pids()).length === 0;
  }

  /** The pids of the tree, read again when its process space did not answer (a busy box). */
  async #pidsPatiently(): Promise<number[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pids();
      } catch (error) {
        if (attempt >= READ_ATTEMPTS) throw error;
        await sleep(50);
      }
    }
  }

  /** Sends `signal` to every process of the tree. */
  async signal(signal: NodeJS.Signals): Promise<void> {
    const pids = await this.#pidsPatiently();
    await Promise.all(pids.map((pid) => this.space.signal(pid, signal)));
  }

  /** Stops every process (SIGSTOP until no new one appears), then SIGKILLs them all. */
  async freezeAndKill(): Promise<void> {
    const stopped = new Set<number>();
    for (let round = 0; round < FREEZE_ROUNDS; round++) {
      const fresh = (await this.#pidsPatiently()).filter((pid) => !stopped.has(pid));
      if (fresh.length === 0) break;
      await Promise.all(fresh.map((pid) => this.space.signal(pid, 'SIGSTOP')));
      for (const pid of fresh) stopped.add(pid);
      await sleep(1);
    }
    await this.signal('SIGKILL');
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
