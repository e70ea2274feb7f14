/**
 * sandboxd's files API (SPEC `sbx.files`): every call acts as one sandbox account (`sandbox-accounts.ts`),
 * the user unless it asks for root, so it reads and writes exactly what that account's own code could.
 * Paths travel in the query (`?path=`) or a JSON body, and are absolute, without NUL, at most
 * `MAX_FILE_PATH` characters. The account travels beside them: `&user=root` in the query, `"user":
 * "root"` in a body; absent is `user`; anything but `user` or `root` is `invalid_argument`, as is `root`
 * asked of a sandboxd that runs on the host, outside any sandbox (tests).
 *
 *   GET  /v1/files/content?path=          the file's bytes, `application/octet-stream`, streamed, with
 *                                         `content-length` (its size when opened; never more bytes)
 *   PUT  /v1/files/content?path=          body streamed into the file (parents made) → `EntryInfo`; a
 *                                         file that was there is replaced only once all was written
 *   GET  /v1/files/list?path=&depth=      `{ entries: EntryInfo[] }`, `depth` 1 (default) to 16, at most
 *                                         `MAX_LIST_ANSWER_BYTES` of JSON (else `invalid_argument`)
 *   GET  /v1/files/info?path=             `EntryInfo` (a symlink as itself, with its target)
 *   POST /v1/files/dir      { path }      `{ created }`: false when a directory was there already
 *   POST /v1/files/remove   { path }      `{}`: a directory with everything in it
 *   POST /v1/files/rename   { from, to }  `EntryInfo` of `to`
 *   (each GET and PUT also takes `&user=root`, each POST body `"user": "root"`: the call acts as root)
 *   GET  /v1/files/watch?path=&recursive=true|false
 *                                         NDJSON (`application/x-ndjson`): `{"type":"watching"}` once the
 *                                         watch is set up, then one `FilesystemEvent` a line; closing the
 *                                         request ends the watch, and the stream ends when the watched
 *                                         directory goes away
 *
 * Missing parents (a write's, a new directory's) are made as E2B's envd makes them: owned by the calling
 * account. Inside a sandbox the user's are made by root where the user could not make them (`/path/to`
 * of `/path/to/file`) and handed to the user (uid and gid 1000, mode as its own `mkdir` gives), then the
 * file is written as the user; outside a sandbox (no root) they are made as the user, where it may.
 *
 * Failures: `file_not_found`, `not_a_directory`, `is_a_directory`, `permission_denied`, `no_space`,
 * `invalid_argument` for a refused path or for reading or writing something that is not a regular file
 * (a FIFO, a device, a socket: reading one could block forever), else `sandbox_error` (a helper that
 * did not answer within 15 s of having all it needs is killed: "the files helper did not answer"). A
 * parent that cannot be made because `mkdir` says ENOENT under a directory that is there (a link to
 * `/proc`) is `file_not_found`. A watch's
 * failure comes as the envelope, before any line. Messages name the call, never the path or the
 * file's content.
 */
import { z } from 'zod';
import { DEFAULT_ACCOUNT, sandboxAccountSchema } from './sandbox-accounts.js';

/** Longest path accepted (Linux's `PATH_MAX`). */
export const MAX_FILE_PATH = 4096;

/** Deepest `list` accepted. */
export const MAX_LIST_DEPTH = 16;

/**
 * Largest `list` answer, as JSON: a listing that would be longer is refused (`invalid_argument`) rather
 * than held in sandboxd's memory, which is outside the commands' limits.
 */
export const MAX_LIST_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * Largest file read whole (`format` text or bytes); a larger one is read as a stream. A file's size
 * costs the sandbox nothing (`truncate -s 1T`), so the SDKs check it (the answer's `content-length`)
 * before reading the body.
 */
export const MAX_WHOLE_READ_BYTES = 1024 * 1024 * 1024;

/** Base of the files API's endpoints. */
export const FILES_PATH = '/v1/files';

/** Why `path` is refused, or undefined when it is an acceptable path. */
export function filePathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (!path.startsWith('/')) return 'must be an absolute path';
  if (path.includes('\0')) return 'must not contain NUL';
  if (path.length > MAX_FILE_PATH) return `must be at most ${String(MAX_FILE_PATH)} characters`;
  return undefined;
}

/** A path, checked as `filePathProblem` says. */
export const filePathSchema = z.string().superRefine((path, ctx) => {
  const problem = filePathProblem(path);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

/** What kind of entry a path names. */
export const entryTypeSchema = z.enum(['file', 'dir', 'symlink', 'other']);

/** One file, directory or link. */
export const entryInfoSchema = z.strictObject({
  name: z.string(),
  path: z.string(),
  type: entryTypeSchema,
  size: z.number().int().nonnegative(),
  /** Permission bits with setuid/setgid/sticky (`0o7777` of `st_mode`). */
  mode: z.number().int().nonnegative(),
  uid: z.number().int(),
  gid: z.number().int(),
  /** ISO 8601. */
  modifiedTime: z.string(),
  symlinkTarget: z.string().optional(),
});

/** One file, directory or link. */
export type EntryInfo = z.output<typeof entryInfoSchema>;

/** `GET /v1/files/list`'s answer. */
export const listAnswerSchema = z.strictObject({ entries: z.array(entryInfoSchema) });

/** The account of a call with a JSON body (absent: `user`). */
const account = sandboxAccountSchema.default(DEFAULT_ACCOUNT);

/** `POST /v1/files/dir` and `POST /v1/files/remove`. */
export const pathBodySchema = z.strictObject({ path: filePathSchema, user: account });

/** `POST /v1/files/dir`'s answer. */
export const makeDirAnswerSchema = z.strictObject({ created: z.boolean() });

/** `POST /v1/files/rename`. */
export const renameBodySchema = z.strictObject({ from: filePathSchema, to: filePathSchema, user: account });

/** The error code each errno of a files call becomes. */
export const ERRNO_CODES = {
  ENOENT: 'file_not_found',
  ENOTDIR: 'not_a_directory',
  EISDIR: 'is_a_directory',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
  EROFS: 'permission_denied',
  ENOSPC: 'no_space',
  EDQUOT: 'no_space',
  EFBIG: 'no_space',
  /** Not a regular file (BSD's errno name; the helper reports it after `fstat`). */
  EFTYPE: 'invalid_argument',
  /** Opening a FIFO without a reader, or a socket, for writing. */
  ENXIO: 'invalid_argument',
  /** A `list` whose answer would pass `MAX_LIST_ANSWER_BYTES`. */
  E2BIG: 'invalid_argument',
} as const;

/** What a watch reports: Linux's inotify events as fsnotify (and E2B) name them. */
export const filesystemEventTypeSchema = z.enum(['create', 'write', 'remove', 'rename', 'chmod']);

/** One change under a watched directory; `name` is relative to it. */
export const filesystemEventSchema = z.strictObject({
  type: filesystemEventTypeSchema,
  name: z.string().min(1).max(MAX_FILE_PATH),
});

/** One change under a watched directory. */
export type FilesystemEvent = z.output<typeof filesystemEventSchema>;

/** A watch stream's line: the start, then events. */
export const watchLineSchema = z.union([
  z.strictObject({ type: z.literal('watching') }),
  filesystemEventSchema,
]);
