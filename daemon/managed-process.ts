/**
 * One command the daemon runs: `/bin/sh -c cmd` as the sandbox user or root, its output kept as process events
 * (bounded history, so a client that re-attaches gets what it missed) and pushed to every listener.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { PTY_HELPER_NAME, type ProcessEvent, type TerminalSize } from '../protocol/process-events.js';
import { inputFrames, resizeFrame } from './pty-frames.js';
import { RequestError } from './request-error.js';
import { quote } from '../rules/shell-quote.js';
import { passedOn } from './buffer-collection.js';
import { OutputLog, type LoggedEvent } from './output-log.js';
import type { ProcessSpace } from './process-space.js';
import { killTree } from './process-tree.js';
import { processSpaceOf, spawnInSandbox, type SandboxUser, type SpawnSpec } from './sandbox-spawn.js';

/** What to run: a process of sandbox code, and how it ends. */
export interface CommandSpec extends SpawnSpec {
  readonly timeoutMs: number | undefined;
  readonly killTree: boolean;
  /** On a new terminal of this size (`sbx.pty`): run by the terminal helper, its stdin framed. */
  readonly pty?: TerminalSize | undefined;
}

/** The terminal helper where every sandbox root sees sandboxd's runtime. */
const PTY_HELPER = `/opt/sdk/${PTY_HELPER_NAME}`;

/** The longest a SIGKILL's answer waits for the process to be gone (one in uninterruptible sleep lingers). */
const KILL_WAIT_MS = 2_000;

/** The spawn of a command: on a terminal, the helper runs the shell on it (`TERM` set unless given). */
function spawnSpecOf(spec: CommandSpec): SpawnSpec {
  if (spec.pty === undefined) return spec;
  const { cols, rows } = spec.pty;
  return {
    ...spec,
    cmd: `exec ${PTY_HELPER} ${String(cols)} ${String(rows)} /bin/sh -c ${quote(spec.cmd)}`,
    envs: { TERM: 'xterm-256color', ...spec.envs },
  };
}

/** Output a command keeps for clients that attach later or re-attach (base64 characters); older goes. */
export const COMMAND_OUTPUT_BYTES = 8 * 1024 * 1024;

/**
 * A running or ended command. Its output is read from its pipes only while no follower holds it back
 * (`hold`): a client that reads slowly slows the command, as a pipe would, instead of growing sandboxd.
 */
export class ManagedProcess {
  /** Its pid as sandbox code sees it; 0 until `started` settles (the table waits for that). */
  pid = 0;
  /** The root of its tree in sandboxd's view (`killTree`). */
  #tree = 0;
  readonly cmd: string;
  /** True for a terminal: its stdin takes frames (`pty-frames.ts`), which `writeStdin` writes. */
  readonly pty: boolean;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #log = new OutputLog(COMMAND_OUTPUT_BYTES);
  readonly #listeners = new Set<(event: ProcessEvent) => void>();
  readonly #followers = new Set<() => void>();
  readonly #holds = new Set<object>();
  readonly #killTree: boolean;
  /** Where its processes are (sandboxd's kernel's, or a gVisor box's). */
  readonly #space: ProcessSpace;
  /** True when signals go to its process as the box names it (a gVisor box), not through the helper. */
  readonly #signalInBox: boolean;
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
    this.pty = spec.pty !== undefined;
    this.#killTree = spec.killTree;
    this.#space = processSpaceOf(user);
    this.#signalInBox = user.box?.kind === 'gvisor';
    this.#onOutput = onOutput;
    const spawned = spawnInSandbox(spawnSpecOf(spec), user);
    const child = spawned.child;
    this.#child = child;
    // Listened to from the spawn on: a child that ends before its start is known would otherwise have
    // its unread output discarded by Node (it resumes unlistened pipes at exit). What arrives before the
    // start is known waits, so the start is always the first event.
    let waiting: (() => void)[] | undefined = [];
    const inOrder = (event: () => void): void => {
      if (waiting === undefined) event();
      else waiting.push(event);
    };
    child.stdout.on('data', (chunk: Buffer) => inOrder(() => this.#data('stdout', chunk)));
    child.stderr.on('data', (chunk: Buffer) => inOrder(() => this.#data('stderr', chunk)));
    child.stdin.on('error', () => undefined); // writing after the command closed its stdin
    child.on('close', (code, signal) => inOrder(() => this.#closed(code, signal)));
    this.started = spawned.started.then(({ pid, tree }) => {
      this.pid = pid;
      this.#tree = tree;
      this.#record({ type: 'start', pid });
      const early = waiting ?? [];
      waiting = undefined;
      for (const event of early) event();
      if (spec.timeoutMs !== undefined && spec.timeoutMs > 0 && this.running) {
        const onTimeout = (): Promise<void> =>
          this.kill(this.#killTree ? 'SIGTERM' : 'SIGKILL', this.#killTree);
        this.#timer = setTimeout(() => void onTimeout(), spec.timeoutMs);
      }
    });
    this.started.catch(() => undefined);
  }

  #closed(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#endedAt = Date.now();
    this.#record({ type: 'end', exitCode: code, signal });
    this.#listeners.clear();
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
    await this.#write(this.pty ? inputFrames(data) : data);
  }

  /**
   * Resizes a terminal.
   *
   * @throws RequestError `invalid_argument` for a command that is not a terminal
   */
  async resize(size: TerminalSize): Promise<void> {
    if (!this.pty) throw new RequestError('invalid_argument', 'this command has no terminal to resize');
    await this.#write(resizeFrame(size.cols, size.rows));
  }

  async #write(data: Buffer): Promise<void> {
    const stdin = this.#child.stdin;
    if (stdin.writableEnded || stdin.destroyed) return;
    passedOn(data.length);
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

  /**
   * Signals the command, or with `tree` ends its whole process tree. A SIGKILL answers once the process
   * is gone (a caller's `kill -0` right after finds nothing), or after `KILL_WAIT_MS` at most: its exit,
   * not the end of its output, which a child it left may hold open.
   */
  async kill(signal: NodeJS.Signals, tree: boolean): Promise<void> {
    if (!this.running) return;
    const exited = signal === 'SIGKILL' ? this.#exited() : undefined;
    if (tree) await killTree(this.#tree, signal === 'SIGKILL' ? 0 : 2_000, this.#space);
    // The helper that started it passes signals on, but cannot pass SIGKILL: the box delivers them.
    else if (this.#signalInBox) await this.#space.signal(this.#tree, signal);
    else this.#child.kill(signal);
    if (exited !== undefined) await Promise.race([exited, sleep(KILL_WAIT_MS)]);
  }

  /** Resolves when the process has exited. */
  #exited(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => this.#child.once('exit', () => resolve()));
  }

  #data(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    this.#record({ type: 'data', stream, data: chunk.toString('base64') });
    passedOn(chunk.length);
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
