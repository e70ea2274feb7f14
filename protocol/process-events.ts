/**
 * The daemon's process events (DESIGN.md §3): `start | data | end | keepalive`, one JSON object per line
 * (NDJSON). Both sides parse them with these schemas. Output bytes travel base64-encoded, so binary
 * output survives. On the wire each event but a keepalive carries `seq`, its number in the command's
 * log (from 1): a client cut off re-attaches with `?after=<seq>` of the last one it read.
 */
import { z } from 'zod';
import { ENV_NAME, ENV_NAME_RULE } from '../rules/names.js';
import { DEFAULT_ACCOUNT, sandboxAccountSchema } from './sandbox-accounts.js';

/** An event's number in its command's log (on the wire; sandboxd's own log numbers them apart). */
const seq = z.number().int().positive().optional();

/** Schema of one process event. */
export const processEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('start'), pid: z.number().int().positive(), seq }),
  z.strictObject({ type: z.literal('data'), stream: z.enum(['stdout', 'stderr']), data: z.base64(), seq }),
  z.strictObject({
    type: z.literal('end'),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    seq,
  }),
  z.strictObject({ type: z.literal('keepalive') }),
]);

/** One process event. */
export type ProcessEvent = z.infer<typeof processEventSchema>;

/**
 * Schema of a request to start a command; `user` is the account it runs as (`sandbox-accounts.ts`:
 * `user`, the default, or `root`).
 */
/** A terminal's size in characters (`sbx.pty`, issue 28). */
export const terminalSizeSchema = z.strictObject({
  cols: z.number().int().min(1).max(1000),
  rows: z.number().int().min(1).max(1000),
});

/** A terminal's size. */
export type TerminalSize = z.infer<typeof terminalSizeSchema>;

/** A terminal's program when none is named: a login shell (bash where the template has it). */
export const LOGIN_SHELL = 'command -v bash >/dev/null && exec bash -l; exec sh -l';

/** The terminal helper in sandboxd's runtime image (`sandbox-drivers/pty/`), at `/opt/sdk` in every sandbox. */
export const PTY_HELPER_NAME = 'sdk-pty';

export const startCommandSchema = z.strictObject({
  cmd: z.string().min(1, 'must not be empty'),
  /** Run on a new terminal of this size (its output on stdout, its input through `stdin` framed). */
  pty: terminalSizeSchema.optional(),
  user: sandboxAccountSchema.default(DEFAULT_ACCOUNT),
  envs: z.record(z.string().regex(ENV_NAME, ENV_NAME_RULE), z.string()).default({}),
  cwd: z.string().startsWith('/', 'must be an absolute path').optional(),
  timeoutMs: z.number().int().min(0).optional(),
  killTree: z.boolean().default(true),
});

/** A request to start a command, as sent. */
export type StartCommand = z.input<typeof startCommandSchema>;

/** Schema of a signal request. */
export const signalCommandSchema = z.strictObject({
  signal: z.enum(['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP']).default('SIGKILL'),
  tree: z.boolean().default(true),
});

/** Schema of one entry of the process list. */
export const processInfoSchema = z.strictObject({
  pid: z.number().int().positive(),
  cmd: z.string(),
  running: z.boolean(),
  /** True for a terminal (`sbx.pty`). */
  pty: z.boolean().optional(),
});

/** One entry of the process list. */
export type ProcessInfo = z.infer<typeof processInfoSchema>;
