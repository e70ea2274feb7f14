/**
 * A running command of the shim (E2B's `CommandHandle`) and what it is made of: the native output
 * callbacks made before the handle exists (`CommandOutput`), the E2B result of a native one (exit code
 * -1 and Go's signal text for a signal), and the deadline that turns an end by signal into a timeout.
 * A terminal (`pty.ts`) is such a handle too, as in E2B: its bytes go to `onData`, none to `stdout`.
 */
import type { CommandResult as NativeCommandResult } from '../../commands.js';
import { signalError } from './command-line.js';
import { checkRequestOpts } from './connection.js';
import { CommandExitError, SandboxError, TimeoutError, type CommandResult } from './errors.js';
import type { CommandRequestOpts, Commands } from './commands.js';

/** When a command started (before it was asked for) and the deadline sandboxd ends it at. */
export interface CommandDeadline {
  readonly startedAt: number;
  readonly timeoutMs: number;
}

/**
 * What a handle stands on: a native command, or a native terminal seen as one (`pty.ts`). Without
 * `sendStdin` / `closeStdin` the handle refuses them, as E2B's terminal handle does.
 */
export interface NativeProcess {
  readonly pid: number;
  wait(): Promise<NativeCommandResult>;
  kill(): Promise<void>;
  readonly sendStdin?: (data: string | Uint8Array) => Promise<void>;
  readonly closeStdin?: () => Promise<void>;
  /** Stops following it (a terminal's stream closes; the program runs on). */
  readonly disconnect?: () => void;
}

/** An output callback of E2B's (`onStdout`, `onStderr`: text; a terminal's `onData`: bytes). */
type OutputCallback<T> = ((data: T) => void | Promise<void>) | undefined;

const ranPast = ({ startedAt, timeoutMs }: CommandDeadline): boolean =>
  timeoutMs > 0 && Date.now() - startedAt >= timeoutMs;

/** The E2B result of a native one: E2B's exit code -1 and error text for a signal. */
function e2bResult(result: NativeCommandResult): CommandResult {
  const { stdout, stderr } = result;
  // `error: undefined` spelled out: E2B's result prints as `{ exitCode: 0, error: undefined, … }`.
  if (result.exitCode === 0) return { exitCode: 0, error: undefined, stdout, stderr };
  if (result.exitCode !== null)
    return { exitCode: result.exitCode, error: `exit status ${String(result.exitCode)}`, stdout, stderr };
  return { exitCode: -1, error: signalError(result.signal), stdout, stderr };
}

/**
 * A running command (E2B's `CommandHandle`): `wait()` resolves with its result or throws
 * `CommandExitError` / `TimeoutError`; `stdout`/`stderr` grow as output comes.
 */
export class CommandHandle {
  /** The command's process id in the sandbox. */
  readonly pid: number;
  readonly #native: NativeProcess;
  readonly #commands: Commands;
  readonly #result: Promise<CommandResult>;
  #stdout = '';
  #stderr = '';
  #ended: CommandResult | undefined;
  #disconnected = false;
  #callbackError: unknown;

  /** @internal Built by `Commands.run` and `Commands.connect`, and by `Pty.create` and `Pty.connect`. */
  constructor(native: NativeProcess, output: CommandOutput, commands: Commands, deadline?: CommandDeadline) {
    this.pid = native.pid;
    this.#native = native;
    this.#commands = commands;
    output.attach(this);
    this.#result = native.wait().then(
      (result) => {
        const e2b = e2bResult(result);
        this.#ended = e2b;
        // The daemon ended it at its deadline: E2B reports that as a timeout, not an exit.
        if (result.signal !== null && deadline !== undefined && ranPast(deadline)) {
          throw new TimeoutError(
            `command ${String(this.pid)} ran past timeoutMs (${String(deadline.timeoutMs)} ms) and was ended; pass timeoutMs: 0 for no deadline`,
          );
        }
        return e2b;
      },
      async (error: unknown) => {
        // A stream broken because the sandbox ended is E2B's TimeoutError (its health-checked answer).
        throw await commands.failure(error);
      },
    );
    this.#result.catch(() => undefined); // observed through wait()
  }

  /** Output so far. */
  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** The exit code once the command has ended, else undefined. */
  get exitCode(): number | undefined {
    return this.#ended?.exitCode;
  }

  /** Why the command failed, once it has ended. */
  get error(): string | undefined {
    return this.#ended?.error;
  }

  /** @internal Output of the command, before the callbacks. */
  received(stream: 'stdout' | 'stderr', data: string, callback: OutputCallback<string>): void {
    if (stream === 'stdout') this.#stdout += data;
    else this.#stderr += data;
    this.#dispatch(callback, data);
  }

  /** @internal A terminal's output: to its callback only (E2B keeps none of it in `stdout`). */
  receivedPty(data: Uint8Array, callback: OutputCallback<Uint8Array>): void {
    this.#dispatch(callback, data);
  }

  #dispatch<T>(callback: OutputCallback<T>, data: T): void {
    if (this.#disconnected || callback === undefined) return;
    try {
      // An async callback's failure is kept and thrown by wait(), as E2B does.
      void Promise.resolve(callback(data)).catch((error: unknown) => {
        this.#callbackError ??= error;
      });
    } catch (error) {
      this.#callbackError ??= error;
    }
  }

  /**
   * Waits for the end of the command.
   *
   * @throws CommandExitError when it exits with a non-zero code (or a signal ends it)
   * @throws TimeoutError when it ran past its `timeoutMs`
   */
  async wait(): Promise<CommandResult> {
    const result = await this.#result;
    const failed = this.#callbackError;
    if (failed !== undefined)
      throw failed instanceof Error
        ? failed
        : new SandboxError('an output callback failed', { cause: failed });
    if (result.exitCode !== 0) throw new CommandExitError(result);
    return result;
  }

  /** Stops calling this handle's callbacks; the command goes on (re-attach with `commands.connect`). */
  async disconnect(): Promise<void> {
    this.#disconnected = true;
    this.#native.disconnect?.();
    await Promise.resolve();
  }

  /**
   * Ends the command and its whole process tree (sandboxd sends SIGTERM, then SIGKILL; E2B sends SIGKILL
   * to the command alone); false when it was not running.
   */
  async kill(): Promise<boolean> {
    return this.#commands.end(this.pid, this.#native);
  }

  /**
   * Writes to the command's stdin (start it with `stdin: true`).
   *
   * @throws SandboxError on a terminal's handle, as in E2B (type with `sbx.pty.sendInput`)
   */
  async sendStdin(data: string | Uint8Array, opts?: CommandRequestOpts): Promise<void> {
    checkRequestOpts('CommandHandle.sendStdin', opts);
    const native = this.#native;
    const send = native.sendStdin;
    if (send === undefined) throw new SandboxError('Sending stdin is not supported for this command handle.');
    await this.#commands.call(() => send.call(native, data));
  }

  /**
   * Closes the command's stdin (EOF).
   *
   * @throws SandboxError on a terminal's handle, as in E2B
   */
  async closeStdin(opts?: CommandRequestOpts): Promise<void> {
    checkRequestOpts('CommandHandle.closeStdin', opts);
    const native = this.#native;
    const close = native.closeStdin;
    if (close === undefined)
      throw new SandboxError('Closing stdin is not supported for this command handle.');
    await this.#commands.call(() => close.call(native));
  }
}

/** Output of a command (text) or of a terminal (bytes), in the order it came. */
type Output = readonly ['stdout' | 'stderr', string] | readonly ['pty', Uint8Array];

/**
 * The native output callbacks of one command, made before its handle exists (the native call delivers
 * output from the start): what arrives before `attach` is kept and replayed. A terminal's bytes come
 * through `onData` (to `onPty`, E2B's `onData`).
 */
export class CommandOutput {
  #handle: CommandHandle | undefined;
  readonly #early: Output[] = [];

  constructor(
    private readonly onStdout: OutputCallback<string>,
    private readonly onStderr: OutputCallback<string>,
    private readonly onPty?: OutputCallback<Uint8Array>,
  ) {}

  readonly callbacks = {
    onStdout: (data: string): void => this.#deliver(['stdout', data]),
    onStderr: (data: string): void => this.#deliver(['stderr', data]),
  };

  /** The native terminal's `onData`. */
  readonly onData = (data: Uint8Array): void => this.#deliver(['pty', data]);

  attach(handle: CommandHandle): void {
    this.#handle = handle;
    for (const output of this.#early.splice(0)) this.#deliver(output);
  }

  #deliver(output: Output): void {
    const handle = this.#handle;
    if (handle === undefined) {
      this.#early.push(output);
      return;
    }
    if (output[0] === 'pty') handle.receivedPty(output[1], this.onPty);
    else handle.received(output[0], output[1], output[0] === 'stdout' ? this.onStdout : this.onStderr);
  }
}
