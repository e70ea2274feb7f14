/**
 * `sbx.pty` (issue 28): terminals in the sandbox. A terminal is a command sandboxd runs on a
 * pseudo-terminal of the sandbox's own (a login shell by default): it outlives the client that opened it
 * (and a pause and resume), so `connect(pid)` from this or another process (with the sandbox's token)
 * reattaches, the screen's recent output replayed first (sandboxd keeps the last 8 MiB).
 */
import { firstValueFrom, lastValueFrom, type Observable, share, Subject, takeUntil, tap } from 'rxjs';
import { z } from 'zod';
import type { ProcessEvent, TerminalSize } from '../protocol/process-events.js';
import { LOGIN_SHELL, terminalSizeSchema } from '../protocol/process-events.js';
import { DEFAULT_ACCOUNT, accountField, sandboxAccountSchema } from '../protocol/sandbox-accounts.js';
import { ENV_NAME, ENV_NAME_RULE } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import { SandboxError } from '../rules/errors.js';
import type { DaemonClient } from './daemon-client.js';

const dataCallback = z.custom<(data: Uint8Array) => void>((value) => typeof value === 'function', {
  message: 'must be a function',
});

const createOptions = z.strictObject({
  cols: terminalSizeSchema.shape.cols.default(80),
  rows: terminalSizeSchema.shape.rows.default(24),
  cwd: z.string().startsWith('/', 'must be an absolute path').optional(),
  envs: z.record(z.string().regex(ENV_NAME, ENV_NAME_RULE), z.string()).optional(),
  user: sandboxAccountSchema.default(DEFAULT_ACCOUNT),
  /** The program, through `/bin/sh -c`; a login shell (`bash -l`, else `sh -l`) by default. */
  cmd: z.string().min(1).default(LOGIN_SHELL),
  timeoutMs: z.number().int().min(0).optional(),
  onData: dataCallback,
});

/** Options of `sbx.pty.create`. */
export type PtyCreateOptions = z.input<typeof createOptions>;

const connectOptions = z.strictObject({ onData: dataCallback });

const pidSchema = z.strictObject({ pid: z.number().int().positive() });
const pidArgument = pidSchema.shape.pid;
const emptySchema = z.strictObject({});

/** How a terminal's program ended. */
export interface PtyResult {
  /** Exit status, or null when a signal ended it. */
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/** Calls on a terminal by pid, with no stream: what a handle and `Pty`'s by-pid calls share. */
class TerminalCalls {
  readonly #client: DaemonClient;

  constructor(client: DaemonClient) {
    this.#client = client;
  }

  sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    return this.#client.sendBytes(`/v1/processes/${String(pid)}/stdin`, bytes);
  }

  async resize(pid: number, size: TerminalSize, call: string): Promise<void> {
    const checked = parseOptions(terminalSizeSchema, size, call);
    await this.#client.call('POST', `/v1/processes/${String(pid)}/resize`, emptySchema, checked);
  }

  async kill(pid: number): Promise<void> {
    await this.#client.call('POST', `/v1/processes/${String(pid)}/signal`, emptySchema, {
      signal: 'SIGKILL',
      tree: true,
    });
  }
}

/** A terminal: what it shows goes to `onData`, as bytes, as they come, until it ends or `disconnect`. */
export class PtyHandle {
  readonly pid: number;
  readonly #calls: TerminalCalls;
  readonly #events$: Observable<ProcessEvent>;
  readonly #result: Promise<PtyResult>;
  readonly #disconnect$ = new Subject<void>();
  #disconnected = false;

  /** @internal */
  constructor(client: DaemonClient, pid: number, onData: (data: Uint8Array) => void) {
    this.pid = pid;
    this.#calls = new TerminalCalls(client);
    this.#events$ = client
      .events(`/v1/processes/${String(pid)}/events`)
      .pipe(takeUntil(this.#disconnect$), share());
    let end: PtyResult | undefined;
    this.#result = lastValueFrom(
      this.#events$.pipe(
        tap((event) => {
          if (event.type === 'data') onData(new Uint8Array(Buffer.from(event.data, 'base64')));
          else if (event.type === 'end') end = { exitCode: event.exitCode, signal: event.signal };
        }),
      ),
      { defaultValue: undefined },
    ).then(() => {
      if (end !== undefined) return end;
      if (this.#disconnected) {
        throw new SandboxError(
          'this handle was disconnected from its terminal: pty.connect follows it again',
        );
      }
      return { exitCode: null, signal: null };
    });
    this.#result.catch(() => undefined); // observed through wait()
  }

  /** @internal Resolves once the terminal's start event came (it runs). */
  started(): Promise<ProcessEvent> {
    return firstValueFrom(this.#events$);
  }

  /** Types into the terminal (keys, pasted text, control characters such as `\x03` for Ctrl-C). */
  sendInput(data: string | Uint8Array): Promise<void> {
    return this.#calls.sendInput(this.pid, data);
  }

  /**
   * Resizes the terminal (its program gets SIGWINCH).
   *
   * @throws InvalidArgumentError for a size out of 1-1000, before any call
   */
  async resize(size: TerminalSize): Promise<void> {
    await this.#calls.resize(this.pid, size, 'pty.resize');
  }

  /** Ends the terminal's program and everything it started. */
  async kill(): Promise<void> {
    await this.#calls.kill(this.pid);
  }

  /**
   * Stops following the terminal (no more `onData`; the stream to sandboxd closes, so a program may
   * exit): the terminal runs on, and `pty.connect(pid)` reattaches. `wait()` then rejects.
   */
  disconnect(): void {
    this.#disconnected = true;
    this.#disconnect$.next();
  }

  /** Resolves when the terminal's program ends. */
  wait(): Promise<PtyResult> {
    return this.#result;
  }
}

/** The terminals of one sandbox. */
export class Pty {
  readonly #client: DaemonClient;
  readonly #calls: TerminalCalls;

  /** @internal */
  constructor(client: DaemonClient) {
    this.#client = client;
    this.#calls = new TerminalCalls(client);
  }

  /**
   * Opens a terminal (80 x 24 and a login shell as the sandbox user by default).
   *
   * @example
   * ```ts
   * const term = await sbx.pty.create({ cols: 120, rows: 40, onData: (d) => process.stdout.write(d) });
   * await term.sendInput('ls -la\n');
   * await term.resize({ cols: 100, rows: 30 });
   * ```
   * @throws InvalidArgumentError for a malformed option, before any call
   */
  async create(options: PtyCreateOptions): Promise<PtyHandle> {
    const o = parseOptions(createOptions, options, 'pty.create');
    const { pid } = await this.#client.call('POST', '/v1/processes', pidSchema, {
      cmd: o.cmd,
      pty: { cols: o.cols, rows: o.rows },
      ...accountField(o.user),
      envs: o.envs ?? {},
      killTree: true,
      ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
      ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    });
    const handle = new PtyHandle(this.#client, pid, o.onData);
    await handle.started();
    return handle;
  }

  /**
   * Types into terminal `pid` without following it (from any process with the sandbox's token).
   *
   * @throws InvalidArgumentError before any call; SandboxError `process_not_found`
   */
  async sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    await this.#calls.sendInput(parseOptions(pidArgument, pid, 'pty.sendInput', ['pid']), data);
  }

  /**
   * Resizes terminal `pid` without following it.
   *
   * @throws InvalidArgumentError before any call; SandboxError `process_not_found`
   */
  async resize(pid: number, size: TerminalSize): Promise<void> {
    await this.#calls.resize(parseOptions(pidArgument, pid, 'pty.resize', ['pid']), size, 'pty.resize');
  }

  /**
   * Ends terminal `pid`'s program and everything it started, without following it.
   *
   * @throws InvalidArgumentError before any call; SandboxError `process_not_found`
   */
  async kill(pid: number): Promise<void> {
    await this.#calls.kill(parseOptions(pidArgument, pid, 'pty.kill', ['pid']));
  }

  /**
   * Reattaches to a terminal by pid, from this or another process: `onData` gets the screen's recent
   * output first (what sandboxd kept), then the rest as it comes.
   *
   * @throws InvalidArgumentError before any call; SandboxError `process_not_found`
   */
  async connect(pid: number, options: { readonly onData: (data: Uint8Array) => void }): Promise<PtyHandle> {
    const checked = parseOptions(pidArgument, pid, 'pty.connect', ['pid']);
    const o = parseOptions(connectOptions, options, 'pty.connect');
    const handle = new PtyHandle(this.#client, checked, o.onData);
    await handle.started();
    return handle;
  }
}
