/**
 * Time travel served cheaply: `GET /v1/sandboxes/:id/history` is open to every holder of a sandbox's
 * token, so a call reads only what the journal gained since the last one (not the whole journal again)
 * and answers exactly what a whole read of the file would, across appends, a torn last line, concurrent
 * calls and a compaction that replaces the file.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HistoryReader, readHistory } from '../../../control-plane/sandbox-history.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
let journalPath: string;
beforeEach(() => {
  world = new MemoryPlaneWorld();
  journalPath = join(world.stateDir, 'journal.jsonl');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await world.dispose();
});

/** Lines `JSON.parse` was asked to parse while `run` ran. */
async function parsesDuring(run: () => Promise<unknown>): Promise<number> {
  const parse = vi.spyOn(JSON, 'parse');
  try {
    await run();
    return parse.mock.calls.length;
  } finally {
    parse.mockRestore();
  }
}

describe('the history of a sandbox', () => {
  it('reads only the records the journal gained since the last call', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    for (let i = 0; i < 20; i++) {
      world.now += 1_000;
      await plane.pause(sbx.sandboxId, sbx.accessToken);
      await plane.connect(sbx.sandboxId, sbx.accessToken);
    }
    const first = await plane.history(sbx.sandboxId, sbx.accessToken);
    const lines = world.journal().length;
    expect(lines).toBeGreaterThan(60);

    // Asked again and again with nothing new: nothing is parsed (a whole read parsed every line).
    for (let i = 0; i < 5; i++) {
      expect(await parsesDuring(() => plane.history(sbx.sandboxId, sbx.accessToken))).toBe(0);
    }
    expect(await plane.history(sbx.sandboxId, sbx.accessToken)).toEqual(first);

    world.now += 1_000;
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    const gained = world.journal().length - lines;
    let history: unknown;
    const parsed = await parsesDuring(async () => {
      history = await plane.history(sbx.sandboxId, sbx.accessToken);
    });
    expect(parsed).toBe(gained);
    expect(history).toEqual(await readHistory(journalPath, sbx.sandboxId));
  });

  it('answers as a whole read of the journal would, through a compaction', async () => {
    const plane = await world.start({ compactAfter: 12 });
    const a = await plane.create(closedEgress);
    const b = await plane.create(closedEgress);
    const same = async (): Promise<void> => {
      for (const sbx of [a, b]) {
        const whole = await readHistory(journalPath, sbx.sandboxId).catch((error: unknown) => error);
        const served = await plane.history(sbx.sandboxId, sbx.accessToken).catch((error: unknown) => error);
        expect(served).toEqual(whole);
      }
    };
    await same();
    for (let i = 0; i < 6; i++) {
      world.now += 1_000;
      await plane.pause(a.sandboxId, a.accessToken);
      await same();
      await plane.connect(a.sandboxId, a.accessToken);
      if (i === 2) await plane.kill(b.sandboxId, b.accessToken);
      await plane.tick(); // compacts once due: the file is replaced
      await same();
    }
    expect(world.journal().map((record) => record.kind)).toContain('snapshot');
    const history = await plane.history(a.sandboxId, a.accessToken);
    expect(history.from).toBe('snapshot');
    // The killed sandbox's events were folded away by the compaction: as a whole read says.
    await expect(plane.history(b.sandboxId, b.accessToken)).rejects.toMatchObject({
      code: 'sandbox_not_found',
    });
  });

  it('leaves a record still being written for a later call, and serves concurrent calls alike', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    world.now += 1_000;
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    await plane.close(); // the journal is the test's from here
    const text = readFileSync(journalPath, 'utf8');
    const [last, ...earlier] = text.trimEnd().split('\n').reverse();
    writeFileSync(journalPath, `${earlier.reverse().join('\n')}\n`);

    const reader = new HistoryReader(journalPath);
    try {
      const before = await reader.history(sbx.sandboxId);
      appendFileSync(journalPath, (last ?? '').slice(0, 10)); // torn: no newline yet
      expect(await reader.history(sbx.sandboxId)).toEqual(before);
      expect(await reader.history(sbx.sandboxId)).toEqual(await readHistory(journalPath, sbx.sandboxId));
      appendFileSync(journalPath, `${(last ?? '').slice(10)}\n`);
      const answers = await Promise.all([1, 2, 3].map(() => reader.history(sbx.sandboxId)));
      const whole = await readHistory(journalPath, sbx.sandboxId);
      expect(whole.entries.length).toBe(before.entries.length + 1);
      for (const answer of answers) expect(answer).toEqual(whole);
      await expect(reader.history('nosuchsandbx')).rejects.toMatchObject({ code: 'sandbox_not_found' });
    } finally {
      await reader.close();
    }
    // Closed, it holds no file open and still answers (reading the whole journal).
    expect(await reader.history(sbx.sandboxId)).toEqual(await readHistory(journalPath, sbx.sandboxId));
  });
});
