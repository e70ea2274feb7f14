/**
 * Time travel: a sandbox's journaled events replayed on a fresh actor of the same machine, state by
 * state, so the inspector can show what the sandbox was at any of its sequence numbers. Reads the
 * journal file as it is now (a record still being written is not there yet); without effects.
 */
import { readFile } from 'node:fs/promises';
import { readRecords } from '../actors/journal-lines.js';
import { SandboxActor } from '../actors/sandbox-actor.js';
import type { SandboxHistory } from '../protocol/inspector-api.js';
import { SandboxError } from '../rules/errors.js';
import type { JournalRecord } from './journal-records.js';

type Entry = SandboxHistory['entries'][number];

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
  let actor: SandboxActor | undefined;
  let from: SandboxHistory['from'] = 'created';
  let entries: Entry[] = [];
  for (const record of records) {
    if (record.id !== id) continue;
    if (record.kind === 'created') {
      actor = new SandboxActor(id, record.input);
      from = 'created';
      entries = [entryOf(actor, 0, { type: 'created' })];
    } else if (record.kind === 'snapshot') {
      actor = new SandboxActor(id, record.input, { restore: record });
      from = 'snapshot';
      entries = [entryOf(actor, record.seq, { type: 'snapshot' })];
    } else if (record.kind === 'event' && actor !== undefined) {
      const seq = record.seq ?? actor.seq + 1;
      actor.replay(record.event, seq);
      entries.push(entryOf(actor, seq, { ...record.event }));
    }
  }
  return actor === undefined ? undefined : { sandboxId: id, from, entries };
}

/**
 * The history of sandbox `id` from the journal file at `path`.
 *
 * @throws SandboxError `sandbox_not_found` when the journal holds no history of it (an ended sandbox
 *   whose events a compaction has folded away, or an unknown id)
 */
export async function readHistory(path: string, id: string): Promise<SandboxHistory> {
  const { records } = readRecords(await readFile(path));
  const history = historyOf(records as JournalRecord[], id);
  if (history === undefined) {
    throw new SandboxError('the journal holds no history of this sandbox', { code: 'sandbox_not_found' });
  }
  return history;
}
