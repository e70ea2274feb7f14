/**
 * One command the daemon runs: `/bin/sh -c cmd` as the sandbox user, its output kept as process events
 * (bounded history, so a client that re-attaches gets what it missed) and pushed to every listener.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { ProcessEvent } from '../protocol/process-events.js';
import { OutputLog, type LoggedEvent } from './output-log.js';
import { killTree } from './process-tree.js';

/** The account commands run as, and where they run. */
export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
  /**
   * The `cgroup.procs` file of the memory cgroup sandboxd moves every command into before it runs (inside
   * a sandbox: the cgroup whose memory runs out before sandboxd's does). Without it commands run at once.
   */
  readonly cgroupProcs?: string;
}

/**
 * Open files of every process of sandbox code inside a sandbox (RLIMIT_NOFILE, soft and hard: the user
 * cannot raise it). sandboxd keeps the limit it was started with. Where the host's hard limit is lower,
 * that one stays.
 */
export const COMMAND_OPEN_FILES = 4096;

/**
 * Inside a sandbox a command starts as the sandbox's root with a fixed environment (nothing the caller
 * chose: an `LD_PRELOAD` there would run as root), joins the commands' cgroup and raises its OOM score
 * (cgroup v1 lets a process move only itself, or one of its own uid), sets its open-files limit
 * (`COMMAND_OPEN_FILES`), becomes the user with `setpriv` (real, effective and saved ids, no groups, no
 * capabilities), and only then takes the caller's environment, read as `export` lines from fd 3, and
 * runs the command.
 * `sh -c SCRIPT sh <procs file> <uid> <gid> <command>`.
 */
const JOIN_THEN_BECOME_USER = `echo $$ > "$1" && echo 1000 > /proc/self/oom_score_adj && { ulimit -n ${String(COMMAND_OPEN_FILES)} 2>/dev/null || :; } && exec /usr/bin/setpriv --reuid="$2" --regid="$3" --clear-groups --inh-caps=-all -- /bin/sh -c 'eval "$(cat <&3)" && exec 3<&- && exec /bin/sh -c "$1"' sh "$4"`;

/** `export 'NAME'='value'` lines for the user stage; names are checked by the wire schema. */
function exportLines(envs: Readonly<Record<string, string>>): string {
  const quote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;
  return Object.entries(envs)
    .map(([name, value]) => {
      if (value.includes('\0')) throw new Error('an environment value holds a NUL byte');
      return `export ${name}=${quote(value)}\n`;
    })
    .join('');
}

/** What to run. */
export interface CommandSpec {
  readonly cmd: string;
  readonly envs: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
  readonly timeoutMs: number | undefined;
  readonly killTree: boolean;
}

/**
 * Spawns `spec.cmd` the way every command of the sandbox starts: as the user, in the commands' cgroup
 * (`JOIN_THEN_BECOME_USER`) inside a sandbox, with a clean environment plus `spec.envs`, in a session and
 * process group of its own (so `killTree` reaches a child forked while it walks the tree). The caller owns
 * the child's stdin, stdout and stderr (a command's events, or a byte stream such as the home archive).
 */
export function spawnAsUser(
  spec: Pick<CommandSpec, 'cmd' | 'envs' | 'cwd'>,
  user: SandboxUser,
): ChildProcessWithoutNullStreams {
  // A clean environment: nothing of the daemon's own passes to sandbox code.
  const base = {
    HOME: user.home,
    USER: 'user',
    LOGNAME: 'user',
    SHELL: '/bin/sh',
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
  };
  const procs = user.cgroupProcs;
  const child =
    procs === undefined
      ? spawn('/bin/sh', ['-c', spec.cmd], {
          uid: user.uid,
          gid: user.gid,
          cwd: spec.cwd ?? user.home,
          env: { ...base, ...spec.envs },
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        })
      : spawn(
          '/bin/sh',
          ['-c', JOIN_THEN_BECOME_USER, 'sh', procs, String(user.uid), String(user.gid), spec.cmd],
          {
            cwd: spec.cwd ?? user.home,
            env: base,
            stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
            detached: true,
          },
        );
  const environment = child.stdio[3] as Writable | null | undefined;
  if (environment) {
    environment.on('error', () => undefined);
    try {
      environment.end(exportLines(spec.envs));
    } catch {
      environment.end();
      child.kill('SIGKILL');
    }
  }
  return child;
}

/** Output a command keeps for clients that attach later or re-attach (base64 characters); older goes. */
export const COMMAND_OUTPUT_BYTES = 8 * 1024 * 1024;

/**
 * A running or ended command. Its output is read from its pipes only while no follower holds it back
 * (`hold`): a client that reads slowly slows the command, as a pipe would, instead of growing sandboxd.
 */
export class ManagedProcess {
  readonly pid: number;
  readonly cmd: string;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #log = new OutputLog(COMMAND_OUTPUT_BYTES);
  readonly #listeners = new Set<(event: ProcessEvent) => void>();
  readonly #followers = new Set<() => void>();
  readonly #holds = new Set<object>();
  readonly #killTree: boolean;
  readonly #onOutput: (bytes: number) => void;
  #end: ProcessEvent | undefined;
  #endedAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Settles once the command runs, or rejects with why it could not start. */
  readonly started: Promise<void>;

  /**
   * @param onOutput - hears how much the kept output grew or shrank (base64 characters): the process
   *   table keeps the sandbox's total within its budget with it
   */
  constructor(spec: CommandSpec, user: SandboxUser, onOutput: (bytes: number) => void = () => undefined) {
    this.cmd = spec.cmd;
    this.#killTree = spec.killTree;
    this.#onOutput = onOutput;
    this.#child = spawnAsUser(spec, user);
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
      this.#endedAt = Date.now();
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

  /** When the command ended (`Date.now()`), once it has. */
  get endedAt(): number | undefined {
    return this.#endedAt;
  }

  /** Output kept now (base64 characters). */
  get keptBytes(): number {
    return this.#log.bytes;
  }

  /**
   * Calls `listener` with the kept history and then every new event, at once, whatever the output
   * rate: for sandboxd's own readers (records, the agent's parser), never a client's socket.
   */
  follow(listener: (event: ProcessEvent) => void): () => void {
    for (let entry = this.#log.after(0); entry !== undefined; entry = this.#log.after(entry.seq)) {
      listener(entry.event);
    }
    if (this.#end !== undefined) return () => undefined;
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The first kept event after number `seq` (see `OutputLog.after`), for a client reading at its pace. */
  after(seq: number): LoggedEvent | undefined {
    return this.#log.after(seq);
  }

  /** Calls `wake` after each new event, until the returned function is called. */
  watch(wake: () => void): () => void {
    this.#followers.add(wake);
    return () => this.#followers.delete(wake);
  }

  /** Stops reading the command's output while `holder` holds it (a client's socket is full). */
  hold(holder: object): void {
    this.#holds.add(holder);
    this.#child.stdout.pause();
    this.#child.stderr.pause();
  }

  /** Lets go of a `hold`; the output flows again once nobody holds it. */
  release(holder: object): void {
    if (!this.#holds.delete(holder) || this.#holds.size > 0) return;
    this.#child.stdout.resume();
    this.#child.stderr.resume();
  }

  /** Drops at least `bytes` of the oldest kept output (the sandbox's budget ran short); returns how much. */
  dropOldestOutput(bytes: number): number {
    const dropped = this.#log.dropOldestOutput(bytes);
    this.#onOutput(-dropped);
    return dropped;
  }

  /**
   * Appends to the command's stdin, resolving once the pipe has taken it (at once while it has room):
   * a command that does not read holds the caller back, not sandboxd's memory.
   */
  async writeStdin(data: Buffer): Promise<void> {
    const stdin = this.#child.stdin;
    if (stdin.writableEnded || stdin.destroyed) return;
    if (stdin.write(data)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off('drain', done);
        stdin.off('close', done);
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
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
    const added = event.type === 'data' ? event.data.length : 0;
    const dropped = this.#log.append(event);
    if (added !== dropped) this.#onOutput(added - dropped);
    for (const listener of this.#listeners) listener(event);
    for (const wake of this.#followers) wake();
  }
}
