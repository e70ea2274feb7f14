/** The commands one daemon started, by pid; ended ones stay listed so clients can still read them. */
import { ManagedProcess, type CommandSpec, type SandboxUser } from './managed-process.js';

/** The daemon's commands. */
export class ProcessTable {
  readonly #processes = new Map<number, ManagedProcess>();

  constructor(readonly user: SandboxUser) {}

  /** Starts a command as the sandbox user; rejects when it cannot start. */
  async start(spec: CommandSpec): Promise<ManagedProcess> {
    const proc = new ManagedProcess(spec, this.user);
    await proc.started;
    this.#processes.set(proc.pid, proc);
    return proc;
  }

  /** The command with this pid, if this daemon started it. */
  get(pid: number): ManagedProcess | undefined {
    return this.#processes.get(pid);
  }

  /** Every command, running or ended. */
  list(): ManagedProcess[] {
    return [...this.#processes.values()];
  }

  /** Ends every running command's tree (the daemon is stopping). */
  async killAll(): Promise<void> {
    await Promise.all(this.list().map((proc) => proc.kill('SIGKILL', true)));
  }
}
