/**
 * E2B's `sbx.commands` over the native `sbx.commands`: `run` (foreground → `CommandResult`, throwing
 * `CommandExitError` on a non-zero exit; background → `CommandHandle`), `connect`, `list`, `kill`,
 * `sendStdin`, with E2B's defaults: a 60 s deadline (0 for none) and stdin closed unless `stdin: true`.
 * The handle itself is in `command-handle.ts`; terminals (`sbx.pty`) in `pty.ts`.
 */
import { posix } from 'node:path';
import { ACCOUNT_HOMES } from '../../../protocol/sandbox-accounts.js';
import type { Commands as NativeCommands } from '../../commands.js';
import { bashCommand, processInfoOf, type ProcessInfo } from './command-line.js';
import { CommandHandle, CommandOutput, type NativeProcess } from './command-handle.js';
import { DEFAULT_COMMAND_TIMEOUT_MS, checkRequestOpts, givenKeys, unknownOption } from './connection.js';
import {
  SandboxError,
  invalidArgument,
  sandboxCall,
  sandboxCallError,
  type CommandResult,
  type SandboxProbe,
} from './errors.js';

/** The sandbox user's home: where E2B resolves a relative path, and a command's default `cwd`. */
export const HOME = ACCOUNT_HOMES.user;

/** E2B's `user`: the sandbox user (the default) or the sandbox's root, as E2B's SDK takes it. */
export type Username = 'user' | 'root';

/**
 * A relative path as E2B's envd reads it: under the home of the account the call acts as
 * (`/home/user`, or `/root` for `root`).
 */
export function underHome(path: string, user: Username = 'user'): string {
  return path.startsWith('/') ? path : posix.join(ACCOUNT_HOMES[user], path);
}

/**
 * E2B's `user` option checked before any call: `'user'` (the default, also when absent) or `'root'`.
 *
 * @throws InvalidArgumentError for anything else
 */
export function usernameOf(call: string, user: unknown): Username {
  if (user === undefined) return 'user';
  if (user === 'user' || user === 'root') return user;
  throw invalidArgument(`${call}: user must be 'user' or 'root'`, 'user');
}

/** Options of one request (E2B's `CommandRequestOpts`). */
export interface CommandRequestOpts {
  /** Accepted; the native SDK's own call deadline applies. */
  requestTimeoutMs?: number;
}

/** Options of `commands.run` (E2B's `CommandStartOpts`). */
export interface CommandStartOpts extends CommandRequestOpts {
  background?: boolean;
  /** Working directory; relative to the account's home when relative. Default: that home. */
  cwd?: string;
  /**
   * The account it runs as: `'user'` (the default; it has `sudo` without a password, as in E2B) or
   * `'root'` (the sandbox's root, home `/root`).
   */
  user?: Username;
  envs?: Record<string, string>;
  onStdout?: (data: string) => void | Promise<void>;
  onStderr?: (data: string) => void | Promise<void>;
  /** Keep stdin open for `sendStdin` (else it is closed at once, as in E2B). */
  stdin?: boolean;
  /** Ends the command after this long (`TimeoutError`); 0 for no deadline. Default 60 000. */
  timeoutMs?: number;
}

/** Options of `commands.connect` (E2B's `CommandConnectOpts`). */
export type CommandConnectOpts = Pick<CommandStartOpts, 'onStdout' | 'onStderr' | 'timeoutMs'> &
  CommandRequestOpts;

const START_KEYS = [
  'background',
  'cwd',
  'user',
  'envs',
  'onStdout',
  'onStderr',
  'stdin',
  'timeoutMs',
  'requestTimeoutMs',
];
const CONNECT_KEYS = ['onStdout', 'onStderr', 'timeoutMs', 'requestTimeoutMs'];

function checkKeys(call: string, options: object, allowed: readonly string[]): void {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw invalidArgument(`${call}: options must be an object`, 'opts');
  }
  for (const key of givenKeys(options)) {
    if (!allowed.includes(key)) throw unknownOption(call, key);
  }
}

/** A `timeoutMs` as E2B takes it (0 for none), E2B's 60 s when absent; checked before any call. */
export function timeoutOf(call: string, timeoutMs: unknown): number {
  if (timeoutMs === undefined) return DEFAULT_COMMAND_TIMEOUT_MS;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 0) {
    throw invalidArgument(
      `${call}: timeoutMs must be a whole number of milliseconds, 0 (none) or more`,
      'timeoutMs',
    );
  }
  return timeoutMs;
}

/** Commands of one sandbox (E2B's `Commands`). */
export class Commands {
  readonly #native: NativeCommands;
  readonly #probe: SandboxProbe;

  /** @internal */
  constructor(native: NativeCommands, probe: SandboxProbe) {
    this.#native = native;
    this.#probe = probe;
  }

  /** @internal A native call to the sandbox, its failure as E2B's (a gone sandbox: `TimeoutError`). */
  call<T>(call: () => Promise<T>): Promise<T> {
    return sandboxCall(call, this.#probe);
  }

  /** @internal The E2B error of a failed native call to the sandbox. */
  failure(error: unknown): Promise<unknown> {
    return sandboxCallError(error, this.#probe);
  }

  /**
   * Runs `cmd` with `/bin/bash -l -c` (as E2B does) as the sandbox user (or with `user: 'root'` as the
   * sandbox's root, in `/root`) and waits for it, or with `background: true` returns its handle once
   * it runs. The sandbox's `envs` (of `Sandbox.create`, with E2B's `E2B_SANDBOX=true`,
   * `E2B_SANDBOX_ID` and `E2B_TEMPLATE_ID` under them) are in its environment, under its own `envs`.
   *
   * @example
   * ```ts
   * const { stdout } = await sbx.commands.run('echo "Hello, World!"');
   * const server = await sbx.commands.run('python3 -m http.server 8000', { background: true, timeoutMs: 0 });
   * await sbx.commands.run('apt-get install -y jq', { user: 'root' });
   * ```
   * @throws CommandExitError when the command exits with a non-zero code (foreground)
   * @throws TimeoutError when it runs past `timeoutMs` (60 s by default)
   * @throws InvalidArgumentError for a malformed option (a `user` other than `'user'` or `'root'`
   *   included), before any call
   */
  run(cmd: string, opts?: CommandStartOpts & { background?: false }): Promise<CommandResult>;
  run(cmd: string, opts: CommandStartOpts & { background: true }): Promise<CommandHandle>;
  run(cmd: string, opts?: CommandStartOpts): Promise<CommandHandle | CommandResult>;
  async run(cmd: string, opts: CommandStartOpts = {}): Promise<CommandHandle | CommandResult> {
    if (typeof cmd !== 'string' || cmd === '') {
      throw invalidArgument('commands.run: cmd must be a non-empty string', 'cmd');
    }
    checkKeys('commands.run', opts, START_KEYS);
    if (opts.stdin !== undefined && typeof opts.stdin !== 'boolean') {
      throw invalidArgument('commands.run: stdin must be a boolean', 'stdin');
    }
    const timeoutMs = timeoutOf('commands.run', opts.timeoutMs);
    if (opts.cwd !== undefined && typeof opts.cwd !== 'string') {
      throw invalidArgument('commands.run: cwd must be a path', 'cwd');
    }
    const user = usernameOf('commands.run', opts.user);
    const output = new CommandOutput(opts.onStdout, opts.onStderr);
    // Taken before the call: sandboxd's timer starts after, so an end by signal at or past it is the deadline.
    const deadline = { startedAt: Date.now(), timeoutMs };
    const native = await this.call(() =>
      // E2B's stdin closed unless asked is `</dev/null` in the line: a command reading it sees end of file.
      this.#native.run(bashCommand(cmd, opts.stdin === true), {
        background: true,
        envs: opts.envs ?? {},
        cwd: underHome(opts.cwd ?? ACCOUNT_HOMES[user], user),
        timeoutMs,
        user,
        ...output.callbacks,
      } as Parameters<NativeCommands['run']>[1] & { background: true }),
    );
    const handle = new CommandHandle(native, output, this, deadline);
    return opts.background === true ? handle : handle.wait();
  }

  /**
   * Re-attaches to a running command by pid: its output from its start, then the rest.
   *
   * @throws NotFoundError when the sandbox has no such command
   */
  async connect(pid: number, opts: CommandConnectOpts = {}): Promise<CommandHandle> {
    checkKeys('commands.connect', opts, CONNECT_KEYS);
    // E2B's connect `timeoutMs` bounds its own connection; the command keeps the deadline it started with.
    if (opts.timeoutMs !== undefined) timeoutOf('commands.connect', opts.timeoutMs);
    const output = new CommandOutput(opts.onStdout, opts.onStderr);
    const native = await this.call(() =>
      this.#native.connect(checkPid('commands.connect', pid), output.callbacks),
    );
    return new CommandHandle(native, output, this);
  }

  /** The commands running now. */
  async list(opts?: CommandRequestOpts): Promise<ProcessInfo[]> {
    checkRequestOpts('commands.list', opts);
    const all = await this.call(() => this.#native.list());
    return all.filter((p) => p.running).map((p) => processInfoOf(p.pid, p.cmd));
  }

  /**
   * Ends a command and its whole process tree (sandboxd sends SIGTERM, then SIGKILL; E2B sends SIGKILL
   * to the command alone); false when no such command runs.
   */
  async kill(pid: number, opts?: CommandRequestOpts): Promise<boolean> {
    checkRequestOpts('commands.kill', opts);
    return this.end(checkPid('commands.kill', pid));
  }

  /**
   * @internal `kill` of a command or terminal and of its handle: false when it is not running (or ends
   * meanwhile).
   */
  async end(pid: number, handle?: Pick<NativeProcess, 'kill'>): Promise<boolean> {
    if (!(await this.list()).some((p) => p.pid === pid)) return false;
    try {
      await (handle ?? (await this.#native.connect(pid))).kill();
    } catch (error) {
      const e2b = await this.failure(error);
      if (e2b instanceof SandboxError && e2b.code === 'process_not_found') return false;
      throw e2b;
    }
    return true;
  }

  /** Writes to a running command's stdin. */
  async sendStdin(pid: number, data: string | Uint8Array, opts?: CommandRequestOpts): Promise<void> {
    checkRequestOpts('commands.sendStdin', opts);
    const native = await this.call(() => this.#native.connect(checkPid('commands.sendStdin', pid)));
    await this.call(() => native.sendStdin(data));
  }

  /** Closes a running command's stdin. */
  async closeStdin(pid: number, opts?: CommandRequestOpts): Promise<void> {
    checkRequestOpts('commands.closeStdin', opts);
    const native = await this.call(() => this.#native.connect(checkPid('commands.closeStdin', pid)));
    await this.call(() => native.closeStdin());
  }
}

/** A pid, checked before any call. */
export function checkPid(call: string, pid: unknown): number {
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) {
    throw invalidArgument(`${call}: pid must be a positive whole number`, 'pid');
  }
  return pid;
}
