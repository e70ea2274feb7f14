/**
 * E2B's `sbx.pty` over the native terminals (`sdk/pty.ts`). `create` runs E2B's `/bin/bash -i -l` on a
 * terminal of `cols` x `rows` and `connect` reattaches by pid; both give E2B's `CommandHandle` (its bytes
 * to `onData`; `wait()` resolves with a `CommandResult` whose `stdout` and `stderr` are empty, throws
 * `CommandExitError` on a non-zero exit and `TimeoutError` past `timeoutMs`, E2B's 60 s by default).
 * `sendInput`, `resize` and `kill` act on a terminal by pid, whichever handle or process opened it, one
 * call each with no stream; a handle's `disconnect()` closes its stream (the terminal runs on).
 */
import { terminalSizeSchema } from '../../../protocol/process-events.js';
import { ACCOUNT_HOMES } from '../../../protocol/sandbox-accounts.js';
import type { Pty as NativePty, PtyHandle as NativePtyHandle } from '../../pty.js';
import { CommandHandle, CommandOutput, type NativeProcess } from './command-handle.js';
import { PTY_SHELL } from './command-line.js';
import {
  checkPid,
  timeoutOf,
  underHome,
  usernameOf,
  type CommandRequestOpts,
  type Commands,
  type Username,
} from './commands.js';
import { checkRequestOpts } from './connection.js';
import { e2bParse, invalidArgument } from './errors.js';

declare const ptyBrand: unique symbol;
/** A terminal's output bytes (E2B's branded `PtyOutput`). */
export type PtyOutput = Uint8Array & { readonly [ptyBrand]: 'pty' };

/** Options of `pty.create` (E2B's `PtyCreateOpts`). */
export interface PtyCreateOpts extends CommandRequestOpts {
  /** Columns of the terminal, 1 to 1000. */
  cols: number;
  /** Rows of the terminal, 1 to 1000. */
  rows: number;
  /** Gets what the terminal shows, as bytes, as they come. */
  onData: (data: Uint8Array) => void | Promise<void>;
  /** Ends the terminal after this long (`TimeoutError`); 0 for no deadline. Default 60 000, as E2B. */
  timeoutMs?: number;
  /** `'user'` (the default) or `'root'` (the sandbox's root, home `/root`), as `commands.run`. */
  user?: Username;
  /** Added to its environment, over E2B's `TERM`, `LANG` and `LC_ALL`. */
  envs?: Record<string, string>;
  /** Working directory; relative to the account's home when relative. Default: that home. */
  cwd?: string;
}

/** Options of `pty.connect` (E2B's `PtyConnectOpts`). */
export type PtyConnectOpts = Pick<PtyCreateOpts, 'onData' | 'timeoutMs'> & CommandRequestOpts;

/** A terminal's size (E2B's `pty.resize` argument). */
export interface PtySize {
  cols: number;
  rows: number;
}

/** What E2B's `pty.create` puts in a terminal's environment unless `envs` names them. */
const TERMINAL_ENVS: Readonly<Record<string, string>> = {
  TERM: 'xterm-256color',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
};

const CREATE_KEYS = ['cols', 'rows', 'onData', 'timeoutMs', 'user', 'envs', 'cwd', 'requestTimeoutMs'];
const CONNECT_KEYS = ['onData', 'timeoutMs', 'requestTimeoutMs'];

/** A native terminal as the process a shim `CommandHandle` stands on: no stdin, no text output. */
function asProcess(terminal: NativePtyHandle): NativeProcess {
  return {
    pid: terminal.pid,
    wait: async () => ({ ...(await terminal.wait()), stdout: '', stderr: '' }),
    kill: () => terminal.kill(),
    disconnect: () => {
      terminal.disconnect();
    },
  };
}

/** `onData`, a function when given (E2B's own runs without one). */
function dataCallback(call: string, onData: unknown): PtyCreateOpts['onData'] | undefined {
  if (onData === undefined || typeof onData === 'function') {
    return onData as PtyCreateOpts['onData'] | undefined;
  }
  throw invalidArgument(`${call}: onData must be a function`, 'onData');
}

/** Terminals of one sandbox (E2B's `Pty`). */
export class Pty {
  readonly #native: NativePty;
  readonly #commands: Commands;

  /** @internal Built by the shim's `Sandbox`, with its `Commands` (E2B's errors, `kill`). */
  constructor(native: NativePty, commands: Commands) {
    this.#native = native;
    this.#commands = commands;
  }

  /**
   * Opens a terminal running E2B's `/bin/bash -i -l` as the sandbox user (or `user: 'root'`), in the
   * account's home unless `cwd` says otherwise, with `TERM=xterm-256color` and `LANG` / `LC_ALL`
   * `C.UTF-8` under `envs`. It ends after `timeoutMs` (60 s by default, as in E2B; 0 for none).
   *
   * @example
   * ```ts
   * const terminal = await sbx.pty.create({ cols: 80, rows: 24, onData: (d) => process.stdout.write(d), timeoutMs: 0 });
   * await sbx.pty.sendInput(terminal.pid, new TextEncoder().encode('ls -la\n'));
   * await sbx.pty.resize(terminal.pid, { cols: 120, rows: 40 });
   * ```
   * @throws InvalidArgumentError for a malformed option (`cols` and `rows` are whole numbers, 1 to
   *   1000), before any call
   */
  async create(opts: PtyCreateOpts): Promise<CommandHandle> {
    if (typeof opts !== 'object' || (opts as unknown) === null) {
      throw invalidArgument('pty.create: options must be an object', 'opts');
    }
    checkRequestOpts('pty.create', opts, CREATE_KEYS);
    const size = e2bParse(terminalSizeSchema, { cols: opts.cols, rows: opts.rows }, 'pty.create');
    const onData = dataCallback('pty.create', opts.onData);
    const timeoutMs = timeoutOf('pty.create', opts.timeoutMs);
    const user = usernameOf('pty.create', opts.user);
    if (opts.cwd !== undefined && typeof opts.cwd !== 'string') {
      throw invalidArgument('pty.create: cwd must be a path', 'cwd');
    }
    const { envs } = opts;
    if (
      envs !== undefined &&
      (typeof envs !== 'object' || (envs as unknown) === null || Array.isArray(envs))
    ) {
      throw invalidArgument('pty.create: envs must be an object of strings', 'envs');
    }
    const output = new CommandOutput(undefined, undefined, onData);
    // Taken before the call: sandboxd's timer starts after, so an end by signal at or past it is the deadline.
    const deadline = { startedAt: Date.now(), timeoutMs };
    const native = await this.#commands.call(() =>
      this.#native.create({
        ...size,
        cmd: PTY_SHELL,
        envs: { ...TERMINAL_ENVS, ...envs },
        cwd: underHome(opts.cwd ?? ACCOUNT_HOMES[user], user),
        user,
        timeoutMs,
        onData: output.onData,
      }),
    );
    return new CommandHandle(asProcess(native), output, this.#commands, deadline);
  }

  /**
   * Reattaches to a terminal by pid, from this or another process (with the sandbox's token): `onData`
   * gets the screen's recent output first (what sandboxd kept, up to 8 MiB), then the rest as it comes.
   * `timeoutMs` is checked; the terminal keeps the deadline it was opened with.
   *
   * @throws NotFoundError when the sandbox has no such terminal
   */
  async connect(pid: number, opts?: PtyConnectOpts): Promise<CommandHandle> {
    checkRequestOpts('pty.connect', opts, CONNECT_KEYS);
    const checked = checkPid('pty.connect', pid);
    const onData = dataCallback('pty.connect', opts?.onData);
    if (opts?.timeoutMs !== undefined) timeoutOf('pty.connect', opts.timeoutMs);
    const output = new CommandOutput(undefined, undefined, onData);
    const native = await this.#commands.call(() => this.#native.connect(checked, { onData: output.onData }));
    return new CommandHandle(asProcess(native), output, this.#commands);
  }

  /**
   * Types into a terminal: keys, pasted text, control characters (`\x03` for Ctrl-C).
   *
   * @throws NotFoundError when the sandbox has no such terminal
   */
  async sendInput(pid: number, data: Uint8Array | string, opts?: CommandRequestOpts): Promise<void> {
    const checked = checkPid('pty.sendInput', pid);
    if (!(data instanceof Uint8Array) && typeof data !== 'string') {
      throw invalidArgument('pty.sendInput: data must be a Uint8Array', 'data');
    }
    checkRequestOpts('pty.sendInput', opts);
    await this.#commands.call(() => this.#native.sendInput(checked, data));
  }

  /**
   * Resizes a terminal (its program gets SIGWINCH).
   *
   * @throws InvalidArgumentError for a size out of 1 to 1000, before any call, or a pid that is not a
   *   terminal
   * @throws NotFoundError when the sandbox has no such terminal
   */
  async resize(pid: number, size: PtySize, opts?: CommandRequestOpts): Promise<void> {
    const checked = checkPid('pty.resize', pid);
    const checkedSize = e2bParse(terminalSizeSchema, size, 'pty.resize', ['size']);
    checkRequestOpts('pty.resize', opts);
    await this.#commands.call(() => this.#native.resize(checked, checkedSize));
  }

  /**
   * Ends a terminal and everything it started (E2B sends SIGKILL to its shell alone): true, or false
   * when no such terminal runs.
   */
  async kill(pid: number, opts?: CommandRequestOpts): Promise<boolean> {
    const checked = checkPid('pty.kill', pid);
    checkRequestOpts('pty.kill', opts);
    return this.#commands.end(checked, { kill: () => this.#native.kill(checked) });
  }
}
