/**
 * `sbx.files`: files of a sandbox, read and written as its user, or as its root with `user: 'root'`
 * (sandboxd's files API, `protocol/files-wire.ts`), streamed both ways so no whole file need be in
 * memory. Failures are `SandboxError`s with a stable `code`: `file_not_found`, `not_a_directory`,
 * `is_a_directory`, `permission_denied`, `no_space`; a malformed path or `user` is an
 * `InvalidArgumentError` before any call, as is reading or writing something that is not a regular
 * file (a FIFO, a device, a socket) at the daemon.
 */
import { PassThrough, Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { text as readText, buffer as readBuffer } from 'node:stream/consumers';
import { z } from 'zod';
import {
  FILES_PATH,
  MAX_LIST_DEPTH,
  MAX_WHOLE_READ_BYTES,
  entryInfoSchema,
  filePathSchema,
  listAnswerSchema,
  makeDirAnswerSchema,
  watchLineSchema,
  type EntryInfo,
} from '../protocol/files-wire.js';
import {
  DEFAULT_ACCOUNT,
  accountField,
  accountQuery,
  sandboxAccountSchema,
  type SandboxAccount,
} from '../protocol/sandbox-accounts.js';
import { InvalidArgumentError, SandboxError, SdkError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import type { DaemonClient } from './daemon-client.js';
import {
  WatchHandle,
  watchCallbackSchema,
  watchOptionsSchema,
  type WatchDirOptions,
  type WatchEventCallback,
} from './files-watch.js';

export type { EntryInfo };

/** What `files.write` takes: text (UTF-8), bytes, or a stream of bytes. */
export type FileData = string | Uint8Array | ArrayBuffer | Readable | WebReadableStream<Uint8Array>;

/** One file of a `files.write` of many. */
export interface WriteEntry {
  readonly path: string;
  readonly data: FileData;
}

/** The account a call acts as: the sandbox user (the default) or root. */
const user = sandboxAccountSchema.default(DEFAULT_ACCOUNT);
const requestOptions = z.strictObject({ user });
const readOptions = z.strictObject({ format: z.enum(['text', 'bytes', 'stream']).default('text'), user });
const listOptions = z.strictObject({
  user,
  depth: z
    .number()
    .int('must be an integer')
    .min(1, 'must be 1 or more')
    .max(MAX_LIST_DEPTH, `must be at most ${String(MAX_LIST_DEPTH)}`)
    .default(1),
});

/**
 * Options of every files call: `user` is the account it acts as, `'user'` (the sandbox user, uid 1000,
 * the default) or `'root'` (the sandbox's root).
 */
export type FileRequestOptions = z.input<typeof requestOptions>;
/** Options of `files.read`. */
export type FileReadOptions = z.input<typeof readOptions>;
/** Options of `files.list`. */
export type FileListOptions = z.input<typeof listOptions>;

const pathOf = (path: unknown, call: string, field: readonly PropertyKey[] = ['path']): string =>
  parseOptions(filePathSchema, path, call, field);

const writeEntrySchema = z.looseObject({ path: z.unknown(), data: z.unknown() });

/** The codes that say nothing is at a path. */
const ABSENT = new Set(['file_not_found', 'not_a_directory']);

/** A files call's query: its path, and its account when root. */
const query = (path: string, account: SandboxAccount): string =>
  `?path=${encodeURIComponent(path)}${accountQuery(account)}`;

function streamOf(data: unknown, call: string, field: readonly PropertyKey[] = ['data']): Readable {
  if (typeof data === 'string') return Readable.from([Buffer.from(data, 'utf8')]);
  if (data instanceof Uint8Array) return Readable.from([Buffer.from(data)]);
  if (data instanceof ArrayBuffer) return Readable.from([Buffer.from(data)]);
  if (data instanceof Readable) return data;
  if (typeof (data as { getReader?: unknown } | null)?.getReader === 'function') {
    return Readable.fromWeb(data as WebReadableStream<Uint8Array>);
  }
  return parseOptions(z.never({ message: 'must be a string, bytes or a stream' }), data, call, field);
}

/** `MAX_WHOLE_READ_BYTES` as told in messages. */
const WHOLE_READ_LIMIT = '1 GiB';

/** A read whose body broke midway (the helper killed, the connection lost). */
const brokeOff = (): SandboxError => new SandboxError("files.read: the file's bytes broke off");

/**
 * `body` as a stream whose breaking midway is a `SandboxError` (the HTTP client's own error says
 * nothing of files); destroying it ends the download.
 */
function unbroken(body: Readable): Readable {
  const out = new PassThrough();
  body.once('error', () => out.destroy(brokeOff()));
  out.once('close', () => {
    if (!body.readableEnded) body.destroy();
  });
  body.pipe(out);
  return out;
}

/** Files of one sandbox. */
export class Files {
  readonly #client: DaemonClient;

  /** @internal */
  constructor(client: DaemonClient) {
    this.#client = client;
  }

  /**
   * Reads a file as text (UTF-8, the default), bytes, or a stream read as the caller pulls it. Text
   * and bytes hold the whole file in memory, so a file over 1 GiB is refused before its bytes are
   * read (`InvalidArgumentError` on `format`): read it as a stream.
   *
   * @example
   * ```ts
   * const notes = await sbx.files.read('/home/user/notes.txt');
   * const big = await sbx.files.read('/home/user/data.bin', { format: 'stream' });
   * const shadow = await sbx.files.read('/etc/shadow', { user: 'root' });
   * ```
   * @throws SandboxError `file_not_found`, `is_a_directory`, `permission_denied`; `sandbox_error`
   *   when the file's bytes broke off midway (the stream errors with it)
   * @throws InvalidArgumentError text or bytes of a file over 1 GiB
   */
  read(path: string, options?: FileRequestOptions & { format?: 'text' }): Promise<string>;
  read(path: string, options: FileRequestOptions & { format: 'bytes' }): Promise<Uint8Array>;
  read(path: string, options: FileRequestOptions & { format: 'stream' }): Promise<Readable>;
  async read(path: string, options: FileReadOptions = {}): Promise<string | Uint8Array | Readable> {
    const checked = pathOf(path, 'files.read');
    const { format, user: account } = parseOptions(readOptions, options, 'files.read');
    const { body, length } = await this.#client.download(`${FILES_PATH}/content${query(checked, account)}`);
    if (format === 'stream') return unbroken(body);
    if (length === undefined || length > MAX_WHOLE_READ_BYTES) {
      // Refused before reading: a file's size costs the sandbox nothing (`truncate -s 1T`).
      body.destroy();
      throw new InvalidArgumentError(
        `files.read: format: the file is over ${WHOLE_READ_LIMIT}; read it with format 'stream'`,
        { field: 'format' },
      );
    }
    try {
      return format === 'text' ? await readText(body) : new Uint8Array(await readBuffer(body));
    } catch {
      throw brokeOff();
    }
  }

  /**
   * Writes a file, making its parent directories; `data` is streamed as it is read. Given a list of
   * entries, writes each in turn (every path and data checked first, before any call). As the user
   * (the default), missing parents are made as E2B's envd makes them, owned by the user, also where
   * the user could not make them (`/path/to` of `/path/to/file`: root makes them and hands them over);
   * the file itself is written as the user. With `user: 'root'` all is root's.
   *
   * @example
   * ```ts
   * await sbx.files.write('/home/user/notes.txt', 'hello');
   * const [a, b] = await sbx.files.write([
   *   { path: '/home/user/a.txt', data: 'a' },
   *   { path: '/home/user/b.bin', data: new Uint8Array([1, 2]) },
   * ]);
   * await sbx.files.write('/etc/motd', 'hello', { user: 'root' });
   * ```
   * @returns the written file's info (one per entry, in order)
   * @throws SandboxError `is_a_directory`, `permission_denied`, `no_space`, `not_a_directory`; a write
   *   that fails partway leaves a file that was there as it was (the bytes go to a temporary file
   *   beside it, renamed over it at the end) and removes one it created; where the user may not make
   *   files in the directory, the file is rewritten in place and emptied on failure
   */
  write(path: string, data: FileData, options?: FileRequestOptions): Promise<EntryInfo>;
  write(entries: readonly WriteEntry[], options?: FileRequestOptions): Promise<EntryInfo[]>;
  async write(
    target: string | readonly WriteEntry[],
    data?: FileData | FileRequestOptions,
    options?: FileRequestOptions,
  ): Promise<EntryInfo | EntryInfo[]> {
    if (!Array.isArray(target)) {
      const path = pathOf(target, 'files.write');
      const body = streamOf(data, 'files.write');
      const { user: account } = parseOptions(requestOptions, options ?? {}, 'files.write');
      return this.#upload(path, body, account);
    }
    const entries = parseOptions(z.array(z.unknown()), target, 'files.write', ['entries']);
    if (options !== undefined) {
      parseOptions(
        z.undefined({ message: 'must not be given with a list of entries (options come second)' }),
        options,
        'files.write',
        ['options'],
      );
    }
    const { user: account } = parseOptions(requestOptions, data ?? {}, 'files.write');
    const checked = entries.map((entry, i) => {
      const given = parseOptions(writeEntrySchema, entry, 'files.write', ['entries', i]);
      return {
        path: pathOf(given.path, 'files.write', ['entries', i, 'path']),
        body: streamOf(given.data, 'files.write', ['entries', i, 'data']),
      };
    });
    const written: EntryInfo[] = [];
    for (const { path, body } of checked) written.push(await this.#upload(path, body, account));
    return written;
  }

  #upload(path: string, body: Readable, account: SandboxAccount): Promise<EntryInfo> {
    return this.#client.upload(
      `${FILES_PATH}/content${query(path, account)}`,
      body,
      'application/octet-stream',
      entryInfoSchema,
    );
  }

  /** The entries of a directory, and of its subdirectories down to `depth` levels (1: the directory only). */
  async list(path: string, options: FileListOptions = {}): Promise<EntryInfo[]> {
    const checked = pathOf(path, 'files.list');
    const { depth, user: account } = parseOptions(listOptions, options, 'files.list');
    const answer = await this.#client.call(
      'GET',
      `${FILES_PATH}/list${query(checked, account)}&depth=${String(depth)}`,
      listAnswerSchema,
    );
    return answer.entries;
  }

  /**
   * True when `path` names something (a dangling symlink counts: it is there), false when nothing is
   * there (`file_not_found`, or a parent that is a file: `not_a_directory`). As E2B's `exists` does,
   * any other failure throws: a parent the user may not search is `permission_denied`, not "absent".
   */
  async exists(path: string, options: FileRequestOptions = {}): Promise<boolean> {
    const checked = pathOf(path, 'files.exists');
    const { user: account } = parseOptions(requestOptions, options, 'files.exists');
    try {
      await this.#info(checked, account);
      return true;
    } catch (error) {
      if (error instanceof SdkError && ABSENT.has(error.code)) return false;
      throw error;
    }
  }

  /** What `path` names (a symlink as itself, with its target). */
  async getInfo(path: string, options: FileRequestOptions = {}): Promise<EntryInfo> {
    const checked = pathOf(path, 'files.getInfo');
    const { user: account } = parseOptions(requestOptions, options, 'files.getInfo');
    return this.#info(checked, account);
  }

  #info(path: string, account: SandboxAccount): Promise<EntryInfo> {
    return this.#client.call('GET', `${FILES_PATH}/info${query(path, account)}`, entryInfoSchema);
  }

  /**
   * Makes a directory and its parents; false when a directory was there already. The folders it makes
   * are the calling account's (as the user: also where the user could not make them, as `write`'s).
   */
  async makeDir(path: string, options: FileRequestOptions = {}): Promise<boolean> {
    const checked = pathOf(path, 'files.makeDir');
    const { user: account } = parseOptions(requestOptions, options, 'files.makeDir');
    const body = { path: checked, ...accountField(account) };
    return (await this.#client.call('POST', `${FILES_PATH}/dir`, makeDirAnswerSchema, body)).created;
  }

  /** Removes a file, or a directory with everything in it. */
  async remove(path: string, options: FileRequestOptions = {}): Promise<void> {
    const checked = pathOf(path, 'files.remove');
    const { user: account } = parseOptions(requestOptions, options, 'files.remove');
    const body = { path: checked, ...accountField(account) };
    await this.#client.call('POST', `${FILES_PATH}/remove`, z.strictObject({}), body);
  }

  /** Renames (moves) `from` to `to`; returns the info of `to`. */
  async rename(from: string, to: string, options: FileRequestOptions = {}): Promise<EntryInfo> {
    const body = {
      from: pathOf(from, 'files.rename', ['from']),
      to: pathOf(to, 'files.rename', ['to']),
      ...accountField(parseOptions(requestOptions, options, 'files.rename').user),
    };
    return this.#client.call('POST', `${FILES_PATH}/rename`, entryInfoSchema, body);
  }

  /**
   * Watches a directory (with `recursive`, its whole tree): `onEvent` gets each change as
   * `{ type: 'create' | 'write' | 'remove' | 'rename' | 'chmod', name }`, `name` relative to `path`.
   * Resolves once the watch is set up, so a change made after it is reported.
   *
   * @example
   * ```ts
   * const watch = await sbx.files.watchDir('/home/user', (e) => console.log(e.type, e.name), {
   *   recursive: true,
   * });
   * await watch.stop();
   * ```
   * @throws SandboxError `file_not_found`, `not_a_directory`, `permission_denied`
   */
  async watchDir(
    path: string,
    onEvent: WatchEventCallback,
    options: WatchDirOptions = {},
  ): Promise<WatchHandle> {
    const checked = pathOf(path, 'files.watchDir');
    const callback = parseOptions(watchCallbackSchema, onEvent, 'files.watchDir', ['onEvent']);
    const { recursive, onExit, user: account } = parseOptions(watchOptionsSchema, options, 'files.watchDir');
    const abort = new AbortController();
    const lines = await this.#client.lines(
      'GET',
      `${FILES_PATH}/watch${query(checked, account)}&recursive=${String(recursive)}`,
      { signal: abort.signal },
    );
    const events = lines[Symbol.asyncIterator]();
    const first = await events.next().catch((error: unknown) => {
      abort.abort();
      throw error;
    });
    if (first.done === true || watchLineSchema.safeParse(first.value).data?.type !== 'watching') {
      abort.abort();
      throw new SandboxError('the sandbox daemon did not start the watch');
    }
    return new WatchHandle(
      abort,
      events,
      callback as WatchEventCallback,
      onExit as WatchDirOptions['onExit'],
    );
  }
}
