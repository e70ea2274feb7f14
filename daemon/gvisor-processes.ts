/**
 * The processes of a gVisor box, reached through runsc's control socket (urpc: one JSON request, one
 * JSON reply; `sandbox-drivers/gvisor/README.md`). The box's kernel lists them (pid, parent, group) and
 * delivers signals; it has no call for a process group, so a group is signalled member by member.
 * Starting a process needs descriptors passed along, which Node cannot do: `gvisor-exec enter` does that
 * (`sandbox-spawn.ts`).
 */
import { constants } from 'node:os';
import { urpcCall } from '../sandbox-drivers/gvisor/urpc-call.js';
import type { ProcessInfo, ProcessSpace } from './process-space.js';

/** A process as the box's kernel reports it (`control.Process`). */
interface BoxProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly stime: string;
}

/** The processes of the box whose control socket is `socket` and container `container`. */
export class GvisorProcesses implements ProcessSpace {
  constructor(
    readonly socket: string,
    readonly container: string,
  ) {}

  async list(): Promise<ProcessInfo[]> {
    const found = (await urpcCall(this.socket, 'containerManager.Processes', this.container)) as
      BoxProcess[] | null;
    return (found ?? []).map((entry) => ({
      pid: entry.pid,
      parent: entry.ppid,
      group: entry.pgid,
      start: entry.stime,
    }));
  }

  async lookup(pids: readonly number[]): Promise<ProcessInfo[]> {
    const wanted = new Set(pids);
    return (await this.list()).filter((entry) => wanted.has(entry.pid));
  }

  async signal(pid: number, signal: NodeJS.Signals): Promise<void> {
    await urpcCall(this.socket, 'containerManager.Signal', {
      CID: this.container,
      Signo: constants.signals[signal],
      PID: pid,
      Mode: 0, // this process
    }).catch(() => undefined); // ended meanwhile
  }

  async signalGroup(group: number, signal: NodeJS.Signals): Promise<void> {
    const members = (await this.list()).filter((entry) => entry.group === group);
    await Promise.all(members.map((entry) => this.signal(entry.pid, signal)));
  }
}
