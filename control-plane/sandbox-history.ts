/**
 * Time travel: a sandbox's journaled events replayed on a fresh actor of the same machine, state by
 * state, so the inspector can show what the sandbox was at any of its sequence numbers. Reads the
 * journal file as it is now (a record still being written is not there yet); without effects.
 *
 * `HistoryReader` serves it to callers: a token holder may ask as often as they like, so each call reads
 * only what was appended since the last one and replays only the new events of the sandbox asked for.
 */
import { open, readFile, stat, type FileHandle } from 'node:fs/promises';
import { readRecords } from '../actors/journal-lines.js';
import { SandboxActor } from '../actors/sandbox-actor.js';
import type { SandboxHistory } from '../protocol/inspector-api.js';
import { SandboxError } from '../rules/errors.js';
import type { JournalRecord } from './journal-records.js';

type Entry = SandboxHistory['entries'][number];

/** A sandbox's records since its `created` record or its last compaction's snapshot, in order. */
interface Track {
  readonly start: Extract<JournalRecord, { kind: 'created' | 'snapshot' }>;
  readonly events: Extract<JournalRecord, { kind: 'event' }>[];
  /** The replay of `events[0, applied)`, made when the history is first asked for. */
  replay: { readonly actor: SandboxActor; readonly entries: Entry[]; applied: number } | undefined;
}

/** The entry for the actor as it is now, after the event `event` with sequence number `seq`. */
function entryOf(actor: SandboxActor, seq: number, event: Entry['event']): Entry {
  const { context } = actor.snapshot;
  return {
    seq,
    event,
    state: actor.state,
    context: {
      now: context.now,
      deadlineAt: context.deadlineAt,
      lastActivityAt: context.lastActivityAt,
      suspendReason: context.suspendReason ?? null,
      endReason: context.endReason ?? null,
    },
  };
}

/** Files `record` into `tracks`: a `created` or `snapshot` record starts its sandbox's track over. */
function fileRecord(tracks: Map<string, Track>, record: JournalRecord): void {
  if (record.kind === 'created' || record.kind === 'snapshot') {
    tracks.set(record.id, { start: record, events: [], replay: undefined });
  } else if (record.kind === 'event') {
    tracks.get(record.id)?.events.push(record); // events before any start have no actor to replay on
  }
}

/** The track's history: its replay brought up to its last event (made on the first call). */
function historyOfTrack(id: string, track: Track): SandboxHistory {
  let replay = track.replay;
  if (replay === undefined) {
    const { start } = track;
    const actor =
      start.kind === 'created'
        ? new SandboxActor(id, start.input)
        : new SandboxActor(id, start.input, { restore: start });
    const first =
      start.kind === 'created'
        ? entryOf(actor, 0, { type: 'created' })
        : entryOf(actor, start.seq, { type: 'snapshot' });
    replay = { actor, entries: [first], applied: 0 };
  }
  track.replay = undefined; // a replay that throws is made again at the next call
  const { actor, entries } = replay;
  for (; replay.applied < track.events.length; replay.applied++) {
    const record = track.events[replay.applied] as (typeof track.events)[number];
    const seq = record.seq ?? actor.seq + 1;
    actor.replay(record.event, seq);
    entries.push(entryOf(actor, seq, { ...record.event }));
  }
  track.replay = replay;
  return { sandboxId: id, from: track.start.kind, entries: entries.slice() };
}

function notFound(): SandboxError {
  return new SandboxError('the journal holds no history of this sandbox', { code: 'sandbox_not_found' });
}

/**
 * The history of sandbox `id` in `records` (a journal's, in order), or undefined when they hold none:
 * from its `created` record (entry 0), or from the last compaction's snapshot of it.
 *
 * @example
 * ```ts
 * const history = historyOf(journal.records, id);
 * history?.entries.find((entry) => entry.seq === 3)?.state; // 'suspended'
 * ```
 */
export function historyOf(records: readonly JournalRecord[], id: string): SandboxHistory | undefined {
  const tracks = new Map<string, Track>();
  for (const record of records) if ('id' in record && record.id === id) fileRecord(tracks, record);
  const track = tracks.get(id);
  return track === undefined ? undefined : historyOfTrack(id, track);
}

/**
 * The history of sandbox `id` from the journal file at `path`, read whole.
 *
 * @throws SandboxError `sandbox_not_found` when the journal holds no history of it (an ended sandbox
 *   whose events a compaction has folded away, or an unknown id)
 */
export async function readHistory(path: string, id: string): Promise<SandboxHistory> {
  const { records } = readRecords(await readFile(path));
  const history = historyOf(records as JournalRecord[], id);
  if (history === undefined) throw notFound();
  return history;
}

/**
 * Histories from one journal file, read incrementally: each call reads only the bytes appended since
 * the last and files their records by sandbox; a sandbox's events are replayed when its history is
 * first asked for, then only the new ones. A compaction (a new file renamed over the journal) starts it
 * over on the new file. Its answers are `readHistory`'s on the file as it is at the call.
 *
 * @example
 * ```ts
 * const reader = new HistoryReader(join(stateDir, 'journal.jsonl'));
 * await reader.history(id); // reads the journal
 * await reader.history(id); // reads only what was appended since
 * await reader.close();
 * ```
 */
export class HistoryReader {
  readonly #path: string;
  /**
   * The journal file followed, held open: while it is, its inode number cannot be reused, so the path
   * naming another inode means a compaction replaced the file (the old one's space is freed when the
   * next call or `close` lets it go).
   */
  #file: { readonly handle: FileHandle; readonly dev: bigint; readonly ino: bigint } | undefined;
  /** Bytes of the file already filed (always the start of a line). */
  #offset = 0;
  #tracks = new Map<string, Track>();
  /** One catch-up at a time: concurrent calls never read the same bytes twice. */
  #reading: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** Follows the journal file at `path`; nothing is read before the first call. */
  constructor(path: string) {
    this.#path = path;
  }

  /**
   * The history of sandbox `id` from the journal as it is now.
   *
   * @throws SandboxError `sandbox_not_found` when the journal holds no history of it
   */
  async history(id: string): Promise<SandboxHistory> {
    if (this.#closed) return await readHistory(this.#path, id); // holds nothing open once closed
    const read = this.#reading.then(() => this.#catchUp());
    this.#reading = read.catch(() => undefined);
    await read;
    const track = this.#tracks.get(id);
    if (track === undefined) throw notFound();
    return historyOfTrack(id, track);
  }

  /** Closes the file; later calls read the whole journal each (`readHistory`). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#reading;
    const file = this.#file;
    this.#file = undefined;
    await file?.handle.close();
  }

  /** Files what was appended since the last call (the whole file when it is new). */
  async #catchUp(): Promise<void> {
    const named = await stat(this.#path, { bigint: true }); // inode numbers may pass 2^53
    if (this.#file?.dev !== named.dev || this.#file.ino !== named.ino) {
      const old = this.#file;
      this.#file = undefined;
      await old?.handle.close();
      const handle = await open(this.#path, 'r');
      const { dev, ino } = await handle.stat({ bigint: true }).catch(async (error: unknown) => {
        await handle.close();
        throw error;
      });
      this.#file = { handle, dev, ino };
      this.#startOver();
    }
    const { handle } = this.#file;
    const { size } = await handle.stat();
    if (size < this.#offset) this.#startOver(); // a journal is never cut, but nothing filed would hold
    const bytes = Buffer.alloc(size - this.#offset);
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, this.#offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    // Up to the last whole line: a record still being written is read at a later call.
    const { records, kept } = readRecords(bytes.subarray(0, filled));
    this.#offset += kept;
    for (const record of records as JournalRecord[]) fileRecord(this.#tracks, record);
  }

  #startOver(): void {
    this.#offset = 0;
    this.#tracks = new Map();
  }
}
