/** The journal's file layer: what it does with files after open, and that layer on node:fs. */
import { close, constants, fdatasync, fsync, open, openSync, rename, unlink, write } from 'node:fs';

/**
 * The file operations a journal runs after `Journal.open`, all but the first off the event loop. The
 * default is `nodeJournalFiles`; tests wrap it to count calls, fail one or model a crash.
 */
export interface JournalFiles {
  /** Opens (or creates, owner-only) `path` for appending; called once, by `Journal.open`. */
  openForAppend(path: string): number;
  /** Writes all of `data` at the end of the file open on `fd`. */
  append(fd: number, data: Buffer): Promise<void>;
  /** Makes what was appended on `fd` durable (fdatasync: the data and the size that reaches it). */
  syncData(fd: number): Promise<void>;
  /** Creates `path` (exclusive, owner-only, append mode) and returns its descriptor. */
  create(path: string): Promise<number>;
  /** Makes the file open on `fd` durable, data and metadata (fsync). */
  sync(fd: number): Promise<void>;
  /** Renames `from` over `to`, atomically. */
  rename(from: string, to: string): Promise<void>;
  /** Makes the entries of the folder `path` durable (a rename into it). */
  syncFolder(path: string): Promise<void>;
  close(fd: number): Promise<void>;
  unlink(path: string): Promise<void>;
}

type Callback<T> = (error: NodeJS.ErrnoException | null, value: T) => void;

/** A node:fs callback call as a promise. */
function call<T = void>(start: (done: Callback<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((error, value) => {
      if (error === null) resolve(value);
      else reject(error);
    });
  });
}

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND;

/** The journal's file layer on node:fs: every call but `openForAppend` runs on libuv's thread pool. */
export const nodeJournalFiles: JournalFiles = {
  openForAppend: (path) => openSync(path, 'a', 0o600),
  async append(fd, data) {
    for (let offset = 0; offset < data.length;) {
      const written = await call<number>((done) => {
        write(fd, data, offset, data.length - offset, null, done);
      });
      if (written === 0) throw new Error('write wrote nothing');
      offset += written;
    }
  },
  syncData: (fd) => call((done) => fdatasync(fd, done)),
  create: (path) => call<number>((done) => open(path, CREATE_FLAGS, 0o600, done)),
  sync: (fd) => call((done) => fsync(fd, done)),
  rename: (from, to) => call((done) => rename(from, to, done)),
  async syncFolder(path) {
    const fd = await call<number>((done) => open(path, constants.O_RDONLY, done));
    try {
      await call((done) => fsync(fd, done));
    } finally {
      await call((done) => close(fd, done));
    }
  },
  close: (fd) => call((done) => close(fd, done)),
  unlink: (path) => call((done) => unlink(path, done)),
};
