/**
 * The plumbing of the files API's helper programs (`files-api.ts`, `files-watch.ts`): each call runs one
 * small Node program (`node -e`, the daemon's own Node) started by `spawnAsUser` like every command, so it
 * has the calling account's ids only (the sandbox user's, or root's when the call asks for root). A
 * program answers one JSON line first (`{ ok }` or
 * `{ errno }`); what follows that line (a read's bytes, a watch's events) is the caller's.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { ERRNO_CODES } from '../protocol/files-wire.js';
import type { SandboxAccount } from '../protocol/sandbox-accounts.js';
import { killProcessTree, spawnAsUser, type SandboxUser } from './sandbox-spawn.js';
import { RequestError } from './request-error.js';
import { quote } from '../rules/shell-quote.js';

/** How each errno is told (the message names the call, never the path). */
const ERRNO_TEXT: Readonly<Record<keyof typeof ERRNO_CODES, string>> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EFTYPE: 'not a regular file',
  ENXIO: 'not a regular file',
  E2BIG: 'the listing is over 8 MiB; list a smaller depth or directory',
};

/**
 * A helper's answer line: `{ ok }` or `{ errno }`, with the request's `id` from the resident helper
 * (`files-resident.ts`). What `ok` holds is checked per call (`okOf`).
 */
const answerLineSchema = z.union([
  z.strictObject({ id: z.number().int().optional(), ok: z.unknown() }),
  z.strictObject({ id: z.number().int().optional(), errno: z.string().max(32) }),
]);

/** A helper's answer line, parsed. */
export type AnswerLine = z.output<typeof answerLineSchema>;

/** The answer `line` holds, or undefined when it is not one. */
export function parseAnswerLine(line: Buffer): AnswerLine | undefined {
  try {
    const parsed = answerLineSchema.safeParse(JSON.parse(line.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The answer's `ok`, checked with `schema`; its `errno` as the typed error of `call`. */
export function okOf<T extends z.ZodType>(call: string, answer: AnswerLine, schema: T): z.output<T> {
  if ('errno' in answer) throw errnoError(call, answer.errno);
  const ok = schema.safeParse(answer.ok);
  if (!ok.success) throw new RequestError('sandbox_error', 'the files helper answered malformed JSON');
  return ok.data;
}

/**
 * Splits a helper's output into lines of at most `limit` bytes. An unfinished line's chunks are kept in
 * a list and joined once, when its end comes (joining at every chunk would copy a long line over and
 * over), and it is refused as soon as it passes the limit.
 */
export class LineSplitter {
  readonly #limit: number;
  #parts: Buffer[] = [];
  #size = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /**
   * The lines `chunk` ends (without their newline), at most `most` of them; `rest` is what of `chunk`
   * comes after the last when `most` stopped it (else empty: kept for the next chunk). `tooLong` when a
   * line passed the limit: the splitter is then done with.
   */
  take(chunk: Buffer, most = Infinity): { lines: Buffer[]; rest: Buffer; tooLong: boolean } {
    const lines: Buffer[] = [];
    let at = 0;
    while (lines.length < most) {
      const end = chunk.indexOf(10, at);
      if (end < 0) break;
      const tail = chunk.subarray(at, end);
      if (this.#size + tail.length > this.#limit) return { lines, rest: EMPTY, tooLong: true };
      lines.push(this.#parts.length === 0 ? tail : Buffer.concat([...this.#parts, tail]));
      this.#parts = [];
      this.#size = 0;
      at = end + 1;
    }
    if (lines.length >= most) return { lines, rest: chunk.subarray(at), tooLong: false };
    if (at < chunk.length) {
      this.#parts.push(chunk.subarray(at));
      this.#size += chunk.length - at;
    }
    return { lines, rest: EMPTY, tooLong: this.#size > this.#limit };
  }
}

const EMPTY = Buffer.alloc(0);

/** The error a helper's `errno` becomes. */
export function errnoError(call: string, errno: string): RequestError {
  if (Object.hasOwn(ERRNO_CODES, errno)) {
    const known = errno as keyof typeof ERRNO_CODES;
    return new RequestError(ERRNO_CODES[known], `${call}: ${ERRNO_TEXT[known]}`, undefined, { errno });
  }
  return new RequestError('sandbox_error', `${call} failed`, undefined, {
    errno: /^E[A-Z0-9]{1,15}$/.test(errno) ? errno : 'unknown',
  });
}

/**
 * Starts `program` (CommonJS source) as `account` (the sandbox user by default, or root: the caller has
 * checked that root is there) with `args`; its stdin is left to the caller.
 */
export function spawnHelper(
  program: string,
  user: SandboxUser,
  args: readonly string[],
  account: SandboxAccount = 'user',
): ChildProcessWithoutNullStreams {
  const cmd = ['exec', quote(process.execPath), '-e', quote(program), '--', ...args.map(quote)];
  const child = spawnAsUser({ cmd: cmd.join(' '), account, envs: {}, cwd: '/' }, user);
  child.stderr.resume();
  child.stdin.on('error', () => undefined);
  return child;
}

/**
 * Aborts once the client goes away before its answer has been sent whole: a helper working for it is
 * ended, a call waiting on the resident helper stops waiting.
 */
export function clientGone(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/**
 * Longest a helper may take to answer once it has all it needs: a read's open, a write's last bytes
 * (counted from the upload's end), a watch's setup, a resident helper's call. The slowest honest one (a
 * `list` or a watch of a large tree) takes a few seconds; a helper this late was stopped by the user's
 * code (`kill -STOP`) or is stuck, and is killed, the call failing with `sandbox_error`.
 */
export const ANSWER_DEADLINE_MS = 15_000;

/** Ends a helper that still runs (SIGKILL after `graceMs` from SIGTERM). */
export function stopHelper(child: ChildProcessWithoutNullStreams, graceMs = 0): void {
  void killProcessTree(child, graceMs).catch(() => undefined);
}

/**
 * The helper's first line (and what followed it in the same chunk), or why it had none: `deadline`
 * aborting first fails it (the caller ends the helper, as on every failure).
 */
function firstLine(
  child: ChildProcessWithoutNullStreams,
  limit: number,
  deadline: AbortSignal | undefined,
): Promise<[AnswerLine, Buffer]> {
  return new Promise((resolve, reject) => {
    const splitter = new LineSplitter(limit);
    const late = (): void => {
      child.stdout.off('data', onData).off('end', onEnd).pause();
      reject(new RequestError('sandbox_error', 'the files helper did not answer'));
    };
    const onData = (chunk: Buffer): void => {
      const { lines, rest, tooLong } = splitter.take(chunk, 1);
      const [line] = lines;
      if (line === undefined && !tooLong) return;
      child.stdout.off('data', onData).off('end', onEnd).pause();
      deadline?.removeEventListener('abort', late);
      if (line === undefined) {
        stopHelper(child);
        reject(new RequestError('sandbox_error', 'the files helper answered too much'));
        return;
      }
      const answer = parseAnswerLine(line);
      if (answer === undefined) {
        reject(new RequestError('sandbox_error', 'the files helper answered malformed JSON'));
        return;
      }
      resolve([answer, rest]);
    };
    const onEnd = (): void => {
      deadline?.removeEventListener('abort', late);
      reject(new RequestError('sandbox_error', 'the files helper did not answer'));
    };
    child.stdout.on('data', onData).once('end', onEnd);
    child.once('error', () => reject(new RequestError('sandbox_error', 'the files helper did not start')));
    if (deadline?.aborted === true) late();
    else deadline?.addEventListener('abort', late, { once: true });
  });
}

/**
 * The helper's `ok` value (checked with `schema`) and the bytes that came after its line; its `errno`
 * as a typed error. `limit` bounds the line; no line by the time `deadline` aborts is `sandbox_error`
 * ("the files helper did not answer"), and the caller ends the helper.
 */
export async function answerOf<T extends z.ZodType>(
  call: string,
  child: ChildProcessWithoutNullStreams,
  limit: number,
  schema: T,
  deadline?: AbortSignal,
): Promise<[z.output<T>, Buffer]> {
  const [answer, rest] = await firstLine(child, limit, deadline);
  return [okOf(call, answer, schema), rest];
}
