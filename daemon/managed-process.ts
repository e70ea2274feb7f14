/**
 * One command the daemon runs: `/bin/sh -c cmd` as the sandbox user, its output kept as process events
 * (bounded history, so a client that re-attaches gets what it missed) and pushed to every listener.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ProcessEvent } from '../protocol/process-events.js';
import { killTree } from './process-tree.js';

/** The account commands run as, and where they run. */
export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
  /**
   * The `cgroup.procs` file of the memory cgroup every command joins before it becomes the user (inside a
   * sandbox: the cgroup whose memory runs out before sandboxd's does). Commands start as the user directly
   * when absent.
   */
  readonly cgroupProcs?: string;
}

/**
 * Run as the sandbox's root: join the commands' cgroup, be the first the OOM killer takes, then become
 * the user (real, effective and saved ids) with no groups and no capabilities, and run the command.
 * `sh -c SCRIPT sh <procs file> <uid> <gid> <command>`.
 */
const JOIN_THEN_BECOME_USER =
  'echo $$ > "$1" && echo 1000 > /proc/self/oom_score_adj && exec /usr/bin/setpriv --reuid="$2" --regid="$3" --clear-groups --inh-caps=-all -- /bin/sh -c "$4"';

/** What to run. */
export interface CommandSpec {
  readonly cmd: string;
  readonly envs: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
  readonly timeoutMs: number | undefined;
  readonly killTree: boolean;
}

/** Output kept for re-attaching clients; older output is dropped beyond this. */
const HISTORY_BYTES = 8 * 1024 * 1024;

/** A running or ended command. */
export class ManagedProcess {
  readonly pid: number;
  readonly cmd: string;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #history: ProcessEvent[] = [];
  #historyBytes = 0;
  readonly #listeners = new Set<(event: ProcessEvent) => void>();
  readonly #killTree: boolean;
  #end: ProcessEvent | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Settles once the command runs, or rejects with why it could not start. */
  readonly started: Promise<void>;

  constructor(spec: CommandSpec, user: SandboxUser) {
    this.cmd = spec.cmd;
    this.#killTree = spec.killTree;
    const [args, ids] =
      user.cgroupProcs === undefined
        ? [['-c', spec.cmd], { uid: user.uid, gid: user.gid }]
        : [
            [
              '-c',
              JOIN_THEN_BECOME_USER,
              'sh',
              user.cgroupProcs,
              String(user.uid),
              String(user.gid),
              spec.cmd,
            ],
            {},
          ];
    this.#child = spawn('/bin/sh', args, {
      ...ids,
      cwd: spec.cwd ?? user.home,
      // A clean environment: nothing of the daemon's own passes to sandbox code.
      env: {
        HOME: user.home,
        USER: 'user',
        LOGNAME: 'user',
        SHELL: '/bin/sh',
        PATH: '/usr/local/bin:/usr/bin:/bin',
        LANG: 'C.UTF-8',
        ...spec.envs,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pid = this.#child.pid ?? 0;
    this.started = new Promise((resolve, reject) => {
      this.#child.once('spawn', resolve);
      this.#child.once('error', (error: NodeJS.ErrnoException) =>
        reject(new Error(`the command could not start: ${error.code ?? 'unknown error'}`)),
      );
    });
    this.started.catch(() => undefined);
    if (this.pid === 0) return;
    this.#record({ type: 'start', pid: this.pid });
    this.#child.stdout.on('data', (chunk: Buffer) => this.#data('stdout', chunk));
    this.#child.stderr.on('data', (chunk: Buffer) => this.#data('stderr', chunk));
    this.#child.stdin.on('error', () => undefined); // writing after the command closed its stdin
    this.#child.on('close', (code, signal) => {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#record({ type: 'end', exitCode: code, signal });
      this.#listeners.clear();
    });
    if (spec.timeoutMs !== undefined && spec.timeoutMs > 0) {
      const onTimeout = (): Promise<void> =>
        this.kill(this.#killTree ? 'SIGTERM' : 'SIGKILL', this.#killTree);
      this.#timer = setTimeout(() => void onTimeout(), spec.timeoutMs);
    }
  }

  /** True until the command has ended and its output is complete. */
  get running(): boolean {
    return this.#end === undefined;
  }

  /** Calls `listener` with the kept history and then every new event; returns the unsubscribe. */
  follow(listener: (event: ProcessEvent) => void): () => void {
    for (const event of this.#history) listener(event);
    if (this.#end !== undefined) return () => undefined;
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Appends to the command's stdin. */
  writeStdin(data: Buffer): void {
    if (!this.#child.stdin.writableEnded) this.#child.stdin.write(data);
  }

  /** Closes the command's stdin. */
  closeStdin(): void {
    this.#child.stdin.end();
  }

  /** Signals the command, or with `tree` ends its whole process tree. */
  async kill(signal: NodeJS.Signals, tree: boolean): Promise<void> {
    if (!this.running) return;
    if (tree) await killTree(this.pid, signal === 'SIGKILL' ? 0 : 2_000);
    else this.#child.kill(signal);
  }

  #data(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    this.#record({ type: 'data', stream, data: chunk.toString('base64') });
  }

  #record(event: ProcessEvent): void {
    if (event.type === 'end') this.#end = event;
    this.#history.push(event);
    if (event.type === 'data') {
      this.#historyBytes += event.data.length;
      // Keep the start event; drop the oldest output beyond the bound.
      while (this.#historyBytes > HISTORY_BYTES && this.#history.length > 2) {
        const [dropped] = this.#history.splice(1, 1);
        if (dropped?.type === 'data') this.#historyBytes -= dropped.data.length;
      }
    }
    for (const listener of this.#listeners) listener(event);
  }
}
