/**
 * A files call's arguments as E2B takes them, checked before any call: E2B's option objects
 * (`FilesystemRequestOpts`, `FilesystemListOpts`, `WatchOpts`, the read and write options), the account
 * (`user`), paths (relative: under the account's home, `/home/user` or `/root`, as E2B's envd resolves
 * them) and the data forms of a write.
 */
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FileData } from '../../files.js';
import { filePathSchema } from '../../../protocol/files-wire.js';
import { givenKeys, unknownOption } from './connection.js';
import { underHome, usernameOf, type Username } from './commands.js';
import { NotSupportedError, invalidArgument } from './errors.js';

/** One file of a many-file `write` (E2B's `WriteEntry`). */
export interface WriteEntry {
  path: string;
  data: string | ArrayBuffer | Uint8Array | Blob | ReadableStream;
}

/** Options of a files call (E2B's `FilesystemRequestOpts`). */
export interface FilesystemRequestOpts {
  /** The account the call acts as: `'user'` (the sandbox user, the default) or `'root'`. */
  user?: Username;
  /** Accepted; the native SDK's own call deadline applies. */
  requestTimeoutMs?: number;
}

/** Options of `files.list`. */
export interface FilesystemListOpts extends FilesystemRequestOpts {
  /** Levels to list, 1 (the directory's own entries, the default) or more. */
  depth?: number;
}

/** Options of `files.watchDir` (E2B's `WatchOpts`). */
export interface WatchOpts extends FilesystemRequestOpts {
  /** Stops the watch after this long (then `onExit` is called); 0 for none. Default 60 000. */
  timeoutMs?: number;
  /** Called once the watch has ended: with the error that ended it, if one did. */
  onExit?: (err?: Error) => void | Promise<void>;
  /** Watch subdirectories too. */
  recursive?: boolean;
  /** Give each event its entry's details (read when the event arrives; none once it is gone). */
  includeEntry?: boolean;
  /** Accepted: a watch here is not refused on a network mount (E2B's envd refuses one without it). */
  allowNetworkMounts?: boolean;
}

/** The forms `files.read` answers in. */
export type FileFormat = 'text' | 'bytes' | 'blob' | 'stream';
/**
 * `gzip` (E2B's compression on the wire) is accepted and has no effect: the content is the same.
 * `streamIdleTimeoutMs` is accepted; the native SDK's own read deadlines apply.
 */
export type ReadOpts = FilesystemRequestOpts & {
  format?: FileFormat;
  gzip?: boolean;
  streamIdleTimeoutMs?: number;
};
/**
 * `gzip` and `useOctetStream` (E2B's upload encodings) are accepted and have no effect: the content is
 * the same, and a stream is streamed either way. `metadata` (E2B's per-file metadata) is refused when
 * not empty: files carry none here.
 */
export type WriteOpts = FilesystemRequestOpts & {
  gzip?: boolean;
  useOctetStream?: boolean;
  metadata?: Record<string, string>;
};
/** The options of a write besides a request's. */
export const WRITE_KEYS = ['gzip', 'useOctetStream', 'metadata'];
/** What a write takes as a file's content. */
export type WriteData = WriteEntry['data'];

const REQUEST_KEYS = ['user', 'requestTimeoutMs'];

/**
 * Checks a files call's options; the account they name (`'user'` when none).
 *
 * @throws InvalidArgumentError for an unknown or malformed option, a `user` but `'user'` or `'root'`
 */
export function checkOpts(call: string, opts: object, keys: readonly string[]): Username {
  if (typeof opts !== 'object' || (opts as unknown) === null) {
    throw invalidArgument(`${call}: options must be an object`, 'opts');
  }
  for (const key of givenKeys(opts)) {
    if (key === 'metadata' && keys.includes(key)) {
      const metadata = (opts as { metadata?: unknown }).metadata;
      if (typeof metadata === 'object' && metadata !== null && Object.keys(metadata).length > 0) {
        throw new NotSupportedError('metadata', 'files carry no metadata here');
      }
    }
    if (!keys.includes(key) && !REQUEST_KEYS.includes(key)) throw unknownOption(call, key);
  }
  return usernameOf(call, (opts as FilesystemRequestOpts).user);
}

/**
 * A path as E2B reads it (relative: under the home of `user`, `/home/user` by default), checked as the
 * native SDK checks it.
 */
export function pathOf(call: string, path: unknown, field = 'path', user: Username = 'user'): string {
  if (typeof path !== 'string' || path === '')
    throw invalidArgument(`${call}: ${field} must be a path`, field);
  const resolved = underHome(path, user);
  const problem = filePathSchema.safeParse(resolved).error?.issues[0]?.message;
  if (problem !== undefined) throw invalidArgument(`${call}: ${field}: ${problem}`, field);
  return resolved;
}

/**
 * A files call's options checked, then its path as E2B reads it (`checkOpts`, `pathOf`), with the
 * account it acts as.
 */
export function fileCall(
  call: string,
  path: unknown,
  opts: object,
  keys: readonly string[] = [],
): { path: string; user: Username } {
  const user = checkOpts(call, opts, keys);
  return { path: pathOf(call, path, 'path', user), user };
}

/** E2B's data forms as the native SDK's (a `Blob` is streamed, not read whole). */
export function nativeData(data: WriteData): FileData {
  if (data instanceof Blob) return data.stream();
  if (typeof data === 'string' || data instanceof Uint8Array || data instanceof ArrayBuffer) return data;
  return data as WebReadableStream<Uint8Array>;
}
