/**
 * The processes of a gVisor box, reached through runsc's control socket (urpc: one JSON request, one
 * JSON reply; `sandbox-drivers/gvisor/README.md`). The box's kernel lists them (pid, parent, group) and
 * delivers signals; it has no call for a process group, so a group is signalled member by member.
 * Starting a process needs descriptors passed along, which Node cannot do: `gvisor-exec enter` does that
 * (`sandbox-spawn.ts`).
 */
import { connect } from 'node:net';
import { constants } from 'node:os';
import type { ProcessInfo, ProcessSpace } from './process-space.js';

/** A process as the box's kernel reports it (`control.Process`). */
interface BoxProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly stime: string;
}

/** Longest one call may take: the box's kernel answers at once unless it is frozen (a paused sandbox). */
const CALL_TIMEOUT_MS = 10_000;

/** One urpc call on a connection of its own; rejects with the kernel's error. */
export function urpcCall(socket: string, method: string, arg: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const connection = connect(socket);
    let reply = '';
    const timer = setTimeout(() => {
      connection.destroy();
      reject(new Error(`${method}: no answer from the box`));
    }, CALL_TIMEOUT_MS);
    const settle = (outcome: () => void): void => {
      clearTimeout(timer);
      connection.destroy();
      outcome();
    };
    connection.setEncoding('utf8');
    connection.once('error', (error) => settle(() => reject(error)));
    connection.once('connect', () => connection.write(JSON.stringify({ method, arg })));
    connection.on('data', (chunk: string) => {
      reply += chunk;
      let parsed: { success?: boolean; err?: string; result?: unknown };
      try {
        parsed = JSON.parse(reply) as typeof parsed;
      } catch {
        return; // more to come
      }
      settle(() =>
        parsed.success === true
          ? resolve(parsed.result)
          : reject(new Error(`${method}: ${parsed.err ?? ''}`)),
      );
    });
    connection.once('end', () => settle(() => reject(new Error(`${method}: the box closed the call`))));
  });
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
