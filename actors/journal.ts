/**
 * The control plane's journal: one JSON record per line, each appended and fsync'ed before the event it
 * records is applied, so a control plane killed at any instant replays to a state it had reached.
 * A torn last line (a crash mid-write) is dropped on open.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

/** A journal of records of type `R`. */
export class Journal<R> {
  readonly #fd: number;
  readonly #records: R[];

  private constructor(fd: number, records: R[]) {
    this.#fd = fd;
    this.#records = records;
  }

  /** Opens (or creates) the journal at `path` and reads what it holds. */
  static open<R>(path: string): Journal<R> {
    mkdirSync(dirname(path), { recursive: true });
    const records: R[] = [];
    if (existsSync(path)) {
      const text = readFileSync(path, 'utf8');
      let kept = 0; // bytes of complete records
      for (const line of text.split('\n')) {
        const end = kept + Buffer.byteLength(line) + 1;
        if (line === '' || end > Buffer.byteLength(text)) break; // the last line has no newline yet
        try {
          records.push(JSON.parse(line) as R);
        } catch {
          break;
        }
        kept = end;
      }
      // A torn final write is cut off, so the next record starts on a line of its own.
      if (kept < Buffer.byteLength(text)) truncateSync(path, kept);
    }
    const fd = openSync(path, 'a', 0o600);
    return new Journal(fd, records);
  }

  /** The records read at open, in order. */
  get records(): readonly R[] {
    return this.#records;
  }

  /** Appends a record and waits until it is on disk. */
  append(record: R): void {
    writeSync(this.#fd, `${JSON.stringify(record)}\n`);
    fsyncSync(this.#fd);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
