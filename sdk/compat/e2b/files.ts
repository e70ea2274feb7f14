/**
 * E2B's `sbx.files` over the native `sbx.files`, as the sandbox user or (`user: 'root'`) its root:
 * relative paths under the account's home (`/home/user`, `/root`) as in E2B, E2B's
 * result shapes (`WriteInfo`, `EntryInfo` with `permissions`, `owner`, `group` and a `Date`), its
 * read formats (`text`, `bytes`, `blob`, `stream` as a web stream) and `watchDir` with its 60 s default
 * deadline. The entry shapes are in `file-entries.ts`, the watch in `watch-handle.ts`, the options and
 * their checks in `file-opts.ts`.
 */
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import type { EntryInfo as NativeEntryInfo, Files as NativeFiles } from '../../files.js';
import { SdkError } from '../../../rules/errors.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from './connection.js';
import {
  FileNotFoundError,
  SandboxError,
  invalidArgument,
  sandboxCall,
  sandboxCallError,
  type SandboxProbe,
} from './errors.js';
import { followed, writeInfo, type EntryInfo, type WriteInfo } from './file-entries.js';
import {
  WRITE_KEYS,
  checkOpts,
  fileCall,
  nativeData,
  pathOf,
  type FilesystemListOpts,
  type FilesystemRequestOpts,
  type ReadOpts,
  type WatchOpts,
  type WriteData,
  type WriteEntry,
  type WriteOpts,
} from './file-opts.js';
import type { Username } from './commands.js';
import { WatchState, type FilesystemEvent, type WatchHandle } from './watch-handle.js';

/** Files of one sandbox (E2B's `Filesystem`). */
export class Filesystem {
  readonly #native: NativeFiles;
  readonly #probe: SandboxProbe;

  /** @internal */
  constructor(native: NativeFiles, probe: SandboxProbe) {
    this.#native = native;
    this.#probe = probe;
  }

  /** A native call to the sandbox, its failure as E2B's (a gone sandbox: `TimeoutError`). */
  #call<T>(call: () => Promise<T>): Promise<T> {
    return sandboxCall(call, this.#probe);
  }

  /**
   * Reads a file: text (the default), bytes, a `Blob`, or a web `ReadableStream` read as it is pulled.
   *
   * @example
   * ```ts
   * const text = await sbx.files.read('notes.txt'); // /home/user/notes.txt
   * const bytes = await sbx.files.read('/tmp/data.bin', { format: 'bytes' });
   * const hosts = await sbx.files.read('/etc/hosts', { user: 'root' });
   * ```
   * @throws FileNotFoundError when there is no such file
   */
  read(path: string, opts?: ReadOpts & { format?: 'text' }): Promise<string>;
  read(path: string, opts: ReadOpts & { format: 'bytes' }): Promise<Uint8Array>;
  read(path: string, opts: ReadOpts & { format: 'blob' }): Promise<Blob>;
  read(path: string, opts: ReadOpts & { format: 'stream' }): Promise<ReadableStream<Uint8Array>>;
  async read(
    path: string,
    opts: ReadOpts = {},
  ): Promise<string | Uint8Array | Blob | ReadableStream<Uint8Array>> {
    const { path: checked, user } = fileCall('files.read', path, opts, [
      'format',
      'gzip',
      'streamIdleTimeoutMs',
    ]);
    const format = opts.format ?? 'text';
    switch (format) {
      case 'text':
        return this.#call(() => this.#native.read(checked, { user }));
      case 'bytes':
        return this.#call(() => this.#native.read(checked, { format: 'bytes', user }));
      case 'blob': {
        const bytes = await this.#call(() => this.#native.read(checked, { format: 'bytes', user }));
        return new Blob([bytes]);
      }
      case 'stream': {
        const body = await this.#call(() => this.#native.read(checked, { format: 'stream', user }));
        return Readable.toWeb(body) as ReadableStream<Uint8Array>;
      }
      default:
        throw invalidArgument("files.read: format must be 'text', 'bytes', 'blob' or 'stream'", 'format');
    }
  }

  /**
   * Writes one file (its parent directories made, owned by the calling account, as E2B's envd makes
   * them), or many: `write([{ path, data }, …])`. Every path is checked before the first is written.
   *
   * @example
   * ```ts
   * await sbx.files.write('hello.txt', 'Hello, World!');
   * await sbx.files.write([{ path: 'a.txt', data: 'a' }, { path: 'b.txt', data: 'b' }]);
   * ```
   */
  write(path: string, data: WriteData, opts?: WriteOpts): Promise<WriteInfo>;
  write(files: WriteEntry[], opts?: WriteOpts): Promise<WriteInfo[]>;
  async write(
    pathOrFiles: string | WriteEntry[],
    dataOrOpts?: WriteData | WriteOpts,
    opts?: WriteOpts,
  ): Promise<WriteInfo | WriteInfo[]> {
    if ((pathOrFiles as unknown) === undefined || (pathOrFiles as unknown) === null) {
      // E2B's own message for a write of nothing.
      throw invalidArgument('files.write: Path or files are required', 'path');
    }
    if (Array.isArray(pathOrFiles)) {
      const user = checkOpts('files.write', (dataOrOpts ?? {}) as WriteOpts, WRITE_KEYS);
      const entries = pathOrFiles.map((entry, i) => ({
        path: pathOf(
          'files.write',
          (entry as Partial<WriteEntry> | undefined)?.path,
          `files[${String(i)}].path`,
          user,
        ),
        data: entry.data,
      }));
      // Every path checked above, before the native call writes the first file.
      const written = await this.#call(() =>
        this.#native.write(
          entries.map((entry) => ({ path: entry.path, data: nativeData(entry.data) })),
          { user },
        ),
      );
      return written.map(writeInfo);
    }
    if (Array.isArray(dataOrOpts)) {
      throw invalidArgument(
        'files.write: Cannot specify both path and array of files. You have to specify either path and data for a single file or an array for multiple files.',
        'data',
      );
    }
    const { path: checked, user } = fileCall('files.write', pathOrFiles, opts ?? {}, WRITE_KEYS);
    if (dataOrOpts === undefined) throw invalidArgument('files.write: data is required', 'data');
    const data = nativeData(dataOrOpts as WriteData);
    return writeInfo(await this.#call(() => this.#native.write(checked, data, { user })));
  }

  /** Writes many files (E2B's `writeFiles`): `write(files)`. */
  async writeFiles(files: WriteEntry[], opts?: WriteOpts): Promise<WriteInfo[]> {
    return this.write(files, opts);
  }

  /** E2B's entry of a native one, a symlink followed to its target (`followed`) as `user` sees it. */
  #entryOf(entry: NativeEntryInfo, user: Username): Promise<EntryInfo> {
    return followed(entry, (path) =>
      this.#native.getInfo(path, { user }).catch((error: unknown) => {
        if (error instanceof SdkError) return undefined; // nothing there (or not visible): the link dangles
        throw error;
      }),
    );
  }

  /** The entries of a directory, down to `depth` levels (1: its own entries). */
  async list(path: string, opts: FilesystemListOpts = {}): Promise<EntryInfo[]> {
    const { path: checked, user } = fileCall('files.list', path, opts, ['depth']);
    if (typeof opts.depth === 'number' && opts.depth < 1) {
      throw invalidArgument('files.list: depth should be at least one', 'depth');
    }
    const entries = await this.#call(() => this.#native.list(checked, { depth: opts.depth ?? 1, user }));
    return Promise.all(entries.map((entry) => this.#entryOf(entry, user)));
  }

  /** True when `path` names a file, directory or link. */
  async exists(path: string, opts: FilesystemRequestOpts = {}): Promise<boolean> {
    const { path: checked, user } = fileCall('files.exists', path, opts);
    return this.#call(() => this.#native.exists(checked, { user }));
  }

  /** What `path` names. */
  async getInfo(path: string, opts: FilesystemRequestOpts = {}): Promise<EntryInfo> {
    const { path: checked, user } = fileCall('files.getInfo', path, opts);
    return this.#entryOf(await this.#call(() => this.#native.getInfo(checked, { user })), user);
  }

  /**
   * Makes a directory and its parents (owned by the calling account, as E2B's envd makes them); false
   * when it was there already.
   */
  async makeDir(path: string, opts: FilesystemRequestOpts = {}): Promise<boolean> {
    const { path: checked, user } = fileCall('files.makeDir', path, opts);
    return this.#call(() => this.#native.makeDir(checked, { user }));
  }

  /** Removes a file, or a directory with everything in it; nothing there is not an error, as in E2B. */
  async remove(path: string, opts: FilesystemRequestOpts = {}): Promise<void> {
    const { path: checked, user } = fileCall('files.remove', path, opts);
    try {
      await this.#call(() => this.#native.remove(checked, { user }));
    } catch (error) {
      if (!(error instanceof FileNotFoundError)) throw error;
    }
  }

  /** Renames (moves) `oldPath` to `newPath`; returns the info of the new path. */
  async rename(oldPath: string, newPath: string, opts: FilesystemRequestOpts = {}): Promise<EntryInfo> {
    const user = checkOpts('files.rename', opts, []);
    const from = pathOf('files.rename', oldPath, 'oldPath', user);
    const to = pathOf('files.rename', newPath, 'newPath', user);
    return this.#entryOf(await this.#call(() => this.#native.rename(from, to, { user })), user);
  }

  /**
   * Watches a directory: `onEvent` gets each change, with `name` relative to it. Resolves once the watch
   * is set up; it stops at `stop()`, or after `timeoutMs` (60 s by default, 0 for none).
   *
   * @example
   * ```ts
   * const handle = await sbx.files.watchDir('project', (event) => console.log(event.type, event.name));
   * await handle.stop();
   * ```
   * @throws FileNotFoundError when there is no such directory
   */
  async watchDir(
    path: string,
    onEvent: (event: FilesystemEvent) => void | Promise<void>,
    opts: WatchOpts = {},
  ): Promise<WatchHandle> {
    const { path: checked, user } = fileCall('files.watchDir', path, opts, [
      'timeoutMs',
      'onExit',
      'recursive',
      'includeEntry',
      'allowNetworkMounts',
    ]);
    if (typeof onEvent !== 'function')
      throw invalidArgument('files.watchDir: onEvent must be a function', 'onEvent');
    const timeoutMs = opts.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0) {
      throw invalidArgument(
        'files.watchDir: timeoutMs must be a whole number of milliseconds, 0 (none) or more',
        'timeoutMs',
      );
    }
    // E2B's envd stats the entry as it sends the event; here it is read as the event arrives.
    const entryOf =
      opts.includeEntry === true
        ? (name: string): Promise<EntryInfo | undefined> =>
            this.getInfo(posix.join(checked, name), { user }).catch((error: unknown) => {
              if (error instanceof SandboxError) return undefined; // gone again since: E2B gives none
              throw error;
            })
        : undefined;
    const watch = new WatchState(onEvent, opts.onExit, entryOf, (error) =>
      sandboxCallError(error, this.#probe),
    );
    const native = await this.#call(() =>
      this.#native.watchDir(checked, (event) => watch.deliver(event), {
        user,
        recursive: opts.recursive ?? false,
        onExit: (error?: Error) => watch.exit(error),
      }),
    );
    watch.started(native, timeoutMs);
    return { stop: () => watch.stop() };
  }
}
