/**
 * Recorded journals (test/fixtures/journals/) replayed by today's machines: a change to a machine or to
 * the journal's records that would break persisted actors fails here (temporal's replay tests are the
 * model). Each fixture has an `.expected.json`: the clock at restart, the sandboxes with resources on the
 * host, the state each sandbox must reach, and those reconciliation must destroy.
 */
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/journals/', import.meta.url));

interface Expected {
  readonly now: number;
  readonly live: readonly string[];
  readonly states: Readonly<Record<string, Record<string, string>>>;
  readonly destroyed: readonly string[];
}

const journals = readdirSync(FIXTURES).filter((name) => name.endsWith('.jsonl'));
let world: MemoryPlaneWorld | undefined;

afterEach(async () => {
  await world?.dispose();
});

describe('recorded journals', () => {
  it('has at least one to replay', () => expect(journals.length).toBeGreaterThan(0));

  it.each(journals)('replays %s to the recorded states and reconciles the host', async (name) => {
    const expected = JSON.parse(
      readFileSync(join(FIXTURES, name.replace(/\.jsonl$/, '.expected.json')), 'utf8'),
    ) as Expected;
    const w = new MemoryPlaneWorld();
    world = w;
    copyFileSync(join(FIXTURES, name), join(w.stateDir, 'journal.jsonl'));
    // Resources on the host as the previous process left them (running, not frozen).
    for (const id of expected.live) {
      w.driver.host.add({
        id,
        instance: w.driver.instance,
        request: {
          id,
          isolation: 'namespace',
          template: 'sdk-base-caps',
          allowInternetAccess: false,
          memoryBytes: 2 ** 29,
          maxPids: 512,
          cpus: 1,
          accessToken: 'recorded-journal-token',
        },
        frozen: false,
        daemonAlive: true,
        ready: true,
      });
    }
    w.now = expected.now;
    const plane = await w.start();
    for (const [id, state] of Object.entries(expected.states)) {
      expect({ id, ...plane.get(id) }).toMatchObject({ id, ...state });
    }
    for (const id of expected.destroyed) expect(w.driver.sandbox(id)).toBeUndefined();
    // The host matches the journal: suspended sandboxes frozen, running ones thawed.
    for (const [id, state] of Object.entries(expected.states)) {
      if (state.state === 'suspended') expect(w.driver.sandbox(id)?.frozen).toBe(true);
      if (state.state === 'running') expect(w.driver.sandbox(id)?.frozen).toBe(false);
      if (state.state === 'ended') expect(w.driver.sandbox(id)).toBeUndefined();
    }
  });
});
