/**
 * A command's output log (daemon/output-log.ts) against a model that keeps everything: whatever is
 * appended and dropped, the log holds at most its bound of output, always its start and end events,
 * only a suffix of the output (newest kept), and `after(seq)` is the first kept event numbered above
 * `seq`, so a reader that re-attaches after its last event misses nothing that is still kept.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { OutputLog, type LoggedEvent } from '../../daemon/output-log.js';
import type { ProcessEvent } from '../../protocol/process-events.js';

type Step =
  { readonly kind: 'data'; readonly size: number } | { readonly kind: 'drop'; readonly bytes: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('data' as const), size: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('drop' as const), bytes: fc.integer({ min: 0, max: 60 }) }),
);

/** Every kept event, walking the log with `after` as a reader does. */
function walk(log: OutputLog): LoggedEvent[] {
  const seen: LoggedEvent[] = [];
  for (let entry = log.after(0); entry !== undefined; entry = log.after(entry.seq)) seen.push(entry);
  return seen;
}

test.prop([fc.integer({ min: 0, max: 100 }), fc.array(step, { maxLength: 60 }), fc.boolean()])(
  'keeps the newest output within its bound, the start and end always, and after() finds the next kept',
  (maxBytes, steps, ended) => {
    const log = new OutputLog(maxBytes);
    const all: LoggedEvent[] = [];
    const append = (event: ProcessEvent): void => {
      log.append(event);
      all.push({ seq: log.lastSeq, event });
    };
    append({ type: 'start', pid: 7 });
    for (const s of steps) {
      if (s.kind === 'data') append({ type: 'data', stream: 'stdout', data: 'A'.repeat(s.size) });
      else log.dropOldestOutput(s.bytes);
    }
    if (ended) append({ type: 'end', exitCode: 0, signal: null });

    const kept = walk(log);
    const keptData = kept.filter((entry) => entry.event.type === 'data');
    const bytes = keptData.reduce((sum, e) => sum + (e.event.type === 'data' ? e.event.data.length : 0), 0);
    expect(log.bytes).toBe(bytes);
    expect(bytes).toBeLessThanOrEqual(maxBytes);
    expect(kept[0]?.event.type).toBe('start');
    expect(kept.at(-1)?.event.type === 'end').toBe(ended);
    // The kept output is the newest: a suffix of everything that was output.
    const allData = all.filter((entry) => entry.event.type === 'data');
    expect(keptData).toEqual(allData.slice(allData.length - keptData.length));
    // Numbers rise by one per event appended.
    expect(all.map((entry) => entry.seq)).toEqual(all.map((_, index) => index + 1));
    // From any cursor, after() is the first kept event above it.
    for (let seq = 0; seq <= log.lastSeq + 1; seq += 1) {
      expect(log.after(seq)).toEqual(kept.find((entry) => entry.seq > seq));
    }
  },
);
