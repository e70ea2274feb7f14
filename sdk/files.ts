/**
 * `sbx.files`: files of a sandbox, read and written as its user (sandboxd's files API,
 * `protocol/files-wire.ts`), streamed both ways so no whole file need be in memory. Failures are
 * `SandboxError`s with a stable `code`: `file_not_found`, `not_a_directory`, `is_a_directory`,
 * `permission_denied`, `no_space`; a malformed path is an `InvalidArgumentError` before any call.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { text as readText, buffer as readBuffer } from 'node:stream/consumers';
import { z } from 'zod';
import {
  FILES_PATH,
  MAX_LIST_DEPTH,
  entryInfoSchema,
  filePathSchema,
  listAnswerSchema,
  makeDirAnswerSchema,
  type EntryInfo,
} from '../protocol/files-wire.js';
import { SdkError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import type { DaemonClient } from './daemon-client.js';

export type { EntryInfo };

/** What `files.write` takes: text (UTF-8), bytes, or a stream of bytes. */
export type FileData = string | Uint8Array | ArrayBuffer | Readable | WebReadableStream<Uint8Array>;

const readOptions = z.strictObject({ format: z.enum(['text', 'bytes', 'stream']).default('text') });
const listOptions = z.strictObject({
  depth: z
    .number()
    .int('must be an integer')
    .min(1, 'must be 1 or more')
    .max(MAX_LIST_DEPTH, `must be at most ${String(MAX_LIST_DEPTH)}`)
    .default(1),
});

/** Options of `files.read`. */
export type FileReadOptions = z.input<typeof readOptions>;
/** Options of `files.list`. */
export type FileListOptions = z.input<typeof listOptions>;

const pathOf = (path: unknown, call: string, field = 'path'): string =>
  parseOptions(filePathSchema, path, call, [field]);

const query = (path: string): string => `?path=${encodeURIComponent(path)}`;

function streamOf(data: FileData, call: string): Readable {
  if (typeof data === 'string') return Readable.from([Buffer.from(data, 'utf8')]);
  if (data instanceof Uint8Array) return Readable.from([Buffer.from(data)]);
  if (data instanceof ArrayBuffer) return Readable.from([Buffer.from(data)]);
  if (data instanceof Readable) return data;
  if (typeof (data as { getReader?: unknown }).getReader === 'function') return Readable.fromWeb(data);
  return parseOptions(z.never({ message: 'must be a string, bytes or a stream' }), data, call, ['data']);
}

/** Files of one sandbox. */
export class Files {
  readonly #client: DaemonClient;

  /** @internal */
  constructor(client: DaemonClient) {
    this.#client = client;
  }

  /**
   * Reads a file as text (UTF-8, the default), bytes, or a stream read as the caller pulls it.
   *
   * @example
   * ```ts
   * const notes = await sbx.files.read('/home/user/notes.txt');
   * const big = await sbx.files.read('/home/user/data.bin', { format: 'stream' });
   * ```
   * @throws SandboxError `file_not_found`, `is_a_directory`, `permission_denied`
   */
  read(path: string, options?: { format?: 'text' }): Promise<string>;
  read(path: string, options: { format: 'bytes' }): Promise<Uint8Array>;
  read(path: string, options: { format: 'stream' }): Promise<Readable>;
  async read(path: string, options: FileReadOptions = {}): Promise<string | Uint8Array | Readable> {
    const checked = pathOf(path, 'files.read');
    const { format } = parseOptions(readOptions, options, 'files.read');
    const { body } = await this.#client.download(`${FILES_PATH}/content${query(checked)}`);
    if (format === 'stream') return body;
    return format === 'text' ? readText(body) : new Uint8Array(await readBuffer(body));
  }

  /**
   * Writes a file, making its parent directories; `data` is streamed as it is read.
   *
   * @returns the written file's info
   * @throws SandboxError `is_a_directory`, `permission_denied`, `no_space`, `not_a_directory`
   */
  async write(path: string, data: FileData): Promise<EntryInfo> {
    const checked = pathOf(path, 'files.write');
    const body = streamOf(data, 'files.write');
    return this.#client.upload(
      `${FILES_PATH}/content${query(checked)}`,
      body,
      'application/octet-stream',
      entryInfoSchema,
    );
  }

  /** The entries of a directory, and of its subdirectories down to `depth` levels (1: the directory only). */
  async list(path: string, options: FileListOptions = {}): Promise<EntryInfo[]> {
    const checked = pathOf(path, 'files.list');
    const { depth } = parseOptions(listOptions, options, 'files.list');
    const answer = await this.#client.call(
      'GET',
      `${FILES_PATH}/list${query(checked)}&depth=${String(depth)}`,
      listAnswerSchema,
    );
    return answer.entries;
  }

  /** True when `path` names something the user can see (a dangling symlink counts). */
  async exists(path: string): Promise<boolean> {
    try {
      await this.getInfo(path);
      return true;
    } catch (error) {
      if (error instanceof SdkError && error.code === 'file_not_found') return false;
      throw error;
    }
  }

  /** What `path` names (a symlink as itself, with its target). */
  async getInfo(path: string): Promise<EntryInfo> {
    const checked = pathOf(path, 'files.getInfo');
    return this.#client.call('GET', `${FILES_PATH}/info${query(checked)}`, entryInfoSchema);
  }

  /** Makes a directory and its parents; false when a directory was there already. */
  async makeDir(path: string): Promise<boolean> {
    const checked = pathOf(path, 'files.makeDir');
    return (await this.#client.call('POST', `${FILES_PATH}/dir`, makeDirAnswerSchema, { path: checked }))
      .created;
  }

  /** Removes a file, or a directory with everything in it. */
  async remove(path: string): Promise<void> {
    const checked = pathOf(path, 'files.remove');
    await this.#client.call('POST', `${FILES_PATH}/remove`, z.strictObject({}), { path: checked });
  }

  /** Renames (moves) `from` to `to`; returns the info of `to`. */
  async rename(from: string, to: string): Promise<EntryInfo> {
    const body = { from: pathOf(from, 'files.rename', 'from'), to: pathOf(to, 'files.rename', 'to') };
    return this.#client.call('POST', `${FILES_PATH}/rename`, entryInfoSchema, body);
  }
}
