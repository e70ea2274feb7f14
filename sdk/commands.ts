/**
 * `sbx.commands`: run commands in a sandbox as its user (or its root), in the foreground or the
 * background, re-attach to a background command from another process, write its stdin, and kill it or
 * its whole tree.
 */
import { firstValueFrom, lastValueFrom, type Observable, share, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { processInfoSchema, type ProcessEvent, type ProcessInfo } from '../protocol/process-events.js';
import { DEFAULT_ACCOUNT, accountField, sandboxAccountSchema } from '../protocol/sandbox-accounts.js';
import { ENV_NAME, ENV_NAME_RULE } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import type { DaemonClient } from './daemon-client.js';

const outputCallback = z.custom<(data: string) => void>((value) => typeof value === 'function', {
  message: 'must be a function',
});

const runOptions = z.strictObject({
  user: sandboxAccountSchema.default(DEFAULT_ACCOUNT),
  envs: z.record(z.string().regex(ENV_NAME, ENV_NAME_RULE), z.string()).optional(),
  cwd: z.string().startsWith('/', 'must be an absolute path').optional(),
  timeoutMs: z.number().int('must be an integer').min(0, 'must be 0 (none) or more').optional(),
  killTree: z.boolean().default(true),
  onStdout: outputCallback.optional(),
  onStderr: outputCallback.optional(),
  background: z.boolean().default(false),
});

/** Options of `commands.run`. */
export type CommandRunOptions = z.input<typeof runOptions>;

/** What a finished command produced. */
export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
  /** Exit status, or null when a signal ended it. */
  readonly exitCode: number | null;
  readonly signal: string | null;
}

const connectOptions = z.strictObject({
  onStdout: outputCallback.optional(),
  onStderr: outputCallback.optional(),
});

/** Output callbacks of a re-attached command: each gets the output from the command's start. */
export interface CommandConnectOptions {
  readonly onStdout?: (data: string) => void;
  readonly onStderr?: (data: string) => void;
}

const pidSchema = z.strictObject({ pid: z.number().int().positive() });
const emptySchema = z.strictObject({});

/** A command running in the background (or re-attached by pid). */
export class CommandHandle {
  readonly pid: number;
  /**
   * The command's events: its history first (sandboxd keeps the last 8 MiB of a command's output, 16 MiB
   * for all the sandbox's commands, so a long one's earliest output may be gone; an ended command is
   * forgotten after 10 minutes), then live ones, until its end. A stream sandboxd cut off (its reader
   * left it full for 15 s) is opened again after the last event read.
   */
  readonly events$: Observable<ProcessEvent>;
  readonly #client: DaemonClient;
  readonly #result: Promise<CommandResult>;

  /** @internal */
  constructor(client: DaemonClient, pid: number, callbacks: CommandConnectOptions) {
    this.pid = pid;
    this.#client = client;
    this.events$ = client.events(`/v1/processes/${String(pid)}/events`).pipe(share());
    this.#result = collect(this.events$, callbacks);
    this.#result.catch(() => undefined); // observed through wait()
  }

  /** Resolves when the command ends. */
  wait(): Promise<CommandResult> {
    return this.#result;
  }

  /** Writes to the command's stdin. */
  sendStdin(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    return this.#client.sendBytes(`/v1/processes/${String(this.pid)}/stdin`, bytes);
  }

  /** Closes the command's stdin. */
  async closeStdin(): Promise<void> {
    await this.#client.call('POST', `/v1/processes/${String(this.pid)}/stdin/close`, emptySchema);
  }

  /** Ends the command: its whole tree unless `tree` is false. */
  async kill(tree = true): Promise<void> {
    await this.#client.call('POST', `/v1/processes/${String(this.pid)}/signal`, emptySchema, {
      signal: 'SIGKILL',
      tree,
    });
  }
}

async function collect(
  events$: Observable<ProcessEvent>,
  callbacks: CommandConnectOptions,
): Promise<CommandResult> {
  const out = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  let end: Extract<ProcessEvent, { type: 'end' }> | undefined;
  const record = (event: ProcessEvent): void => {
    if (event.type === 'data') {
      const bytes = Buffer.from(event.data, 'base64');
      out[event.stream].push(bytes);
      (event.stream === 'stdout' ? callbacks.onStdout : callbacks.onStderr)?.(bytes.toString('utf8'));
    } else if (event.type === 'end') {
      end = event;
    }
  };
  await lastValueFrom(events$.pipe(tap(record), toArray()));
  return {
    stdout: Buffer.concat(out.stdout).toString('utf8'),
    stderr: Buffer.concat(out.stderr).toString('utf8'),
    exitCode: end?.exitCode ?? null,
    signal: end?.signal ?? null,
  };
}

/** Commands of one sandbox. */
export class Commands {
  readonly #client: DaemonClient;

  /** @internal */
  constructor(client: DaemonClient) {
    this.#client = client;
  }

  /**
   * Runs `cmd` through a shell as the sandbox user (uid 1000, home `/home/user`), or with `user: 'root'`
   * as the sandbox's root (uid 0 of the sandbox's own user namespace, with Docker's default
   * capabilities; home `/root`). With `background`, returns a handle once the command runs;
   * `onStdout`/`onStderr` get its output as it comes, `cwd` is its working directory (default: the
   * account's home), `envs` adds to its environment and `timeoutMs` ends it (0: never).
   *
   * @example
   * ```ts
   * const { stdout, exitCode } = await sbx.commands.run('echo hello');
   * const server = await sbx.commands.run('python3 -m http.server', { background: true });
   * await sbx.commands.run('apt-get install -y jq', { user: 'root' });
   * ```
   * @throws InvalidArgumentError for a malformed option (a `user` other than `'user'` or `'root'`
   *   included), before any call
   */
  run(cmd: string, options: CommandRunOptions & { background: true }): Promise<CommandHandle>;
  run(cmd: string, options?: CommandRunOptions & { background?: false }): Promise<CommandResult>;
  async run(cmd: string, options: CommandRunOptions = {}): Promise<CommandResult | CommandHandle> {
    const command = parseOptions(z.string().min(1, 'must not be empty'), cmd, 'commands.run', ['cmd']);
    const parsed = parseOptions(runOptions, options, 'commands.run');
    const start = {
      cmd: command,
      ...accountField(parsed.user),
      envs: parsed.envs ?? {},
      killTree: parsed.killTree,
      ...(parsed.cwd === undefined ? {} : { cwd: parsed.cwd }),
      ...(parsed.timeoutMs === undefined ? {} : { timeoutMs: parsed.timeoutMs }),
    };
    const callbacks = {
      ...(parsed.onStdout === undefined ? {} : { onStdout: parsed.onStdout }),
      ...(parsed.onStderr === undefined ? {} : { onStderr: parsed.onStderr }),
    };
    if (!parsed.background) {
      // Started and followed in one call: the answer is the command's event stream.
      return collect(this.#client.events('/v1/processes?stream=true', start), callbacks);
    }
    const { pid } = await this.#client.call('POST', '/v1/processes', pidSchema, start);
    const handle = new CommandHandle(this.#client, pid, callbacks);
    await firstValueFrom(handle.events$); // the start event: the command is running
    return handle;
  }

  /**
   * Re-attaches to a command by pid, from this or another process, also after a pause and resume: the
   * callbacks get the output sandboxd kept (the last 8 MiB: the start of a command that wrote more is
   * gone), then the rest as it comes.
   *
   * @example
   * ```ts
   * const server = await sbx.commands.connect(pid, { onStdout: (data) => process.stdout.write(data) });
   * await server.wait();
   * ```
   * @throws InvalidArgumentError for a malformed pid or option, before any call
   * @throws SandboxError `process_not_found` for a pid sandboxd does not know
   */
  async connect(pid: number, options: CommandConnectOptions = {}): Promise<CommandHandle> {
    const checked = parseOptions(z.number().int().positive(), pid, 'commands.connect', ['pid']);
    const parsed = parseOptions(connectOptions, options, 'commands.connect');
    const callbacks = {
      ...(parsed.onStdout === undefined ? {} : { onStdout: parsed.onStdout }),
      ...(parsed.onStderr === undefined ? {} : { onStderr: parsed.onStderr }),
    };
    const handle = new CommandHandle(this.#client, checked, callbacks);
    await firstValueFrom(handle.events$);
    return handle;
  }

  /** Commands the daemon knows, running or ended. */
  list(): Promise<ProcessInfo[]> {
    return this.#client.call('GET', '/v1/processes', z.array(processInfoSchema));
  }
}
