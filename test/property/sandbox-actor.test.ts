import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { SandboxActor, type SandboxEffects } from '../../actors/sandbox-actor.js';
import type { SandboxMachineEvent } from '../../machines/sandbox-machine.js';
import { SANDBOX_CALL_EVENTS } from './support/sandbox-oracle.js';

const input = { now: 0, timeoutMs: 100_000, maxIdleMs: 10_000, autoResume: true };

const step = fc.oneof(
  fc.constantFrom<SandboxMachineEvent>(...SANDBOX_CALL_EVENTS),
  fc.integer({ min: 0, max: 30_000 }).map((advance) => ({ type: 'advance' as const, advance })),
);

test.prop([fc.array(step, { maxLength: 40 }), fc.boolean()], { numRuns: 500 })(
  'an actor journals each event it takes before applying it, and a replay of the journal equals the live actor',
  async (steps, autoResume) => {
    const live = new SandboxActor('abcdef012345', { ...input, autoResume });
    const journal: SandboxMachineEvent[] = [];
    const effects: string[] = [];
    const record = (name: string) => (): Promise<void> => {
      effects.push(name);
      return Promise.resolve();
    };
    const driver: SandboxEffects = {
      freeze: record('freeze'),
      thaw: record('thaw'),
      destroy: record('destroy'),
    };
    let now = 0;
    for (const s of steps) {
      const event: SandboxMachineEvent =
        s.type === 'advance' ? { type: 'clock', now: (now += s.advance) } : s;
      const before = live.snapshot;
      await live.send(
        event,
        (journaled) => {
          expect(live.snapshot).toBe(before); // not applied yet when it is journaled
          journal.push(journaled);
        },
        driver,
      );
    }
    const replayed = new SandboxActor('abcdef012345', { ...input, autoResume });
    for (const event of journal) replayed.replay(event);
    expect(replayed.state).toBe(live.state);
    expect(replayed.snapshot.context).toEqual(live.snapshot.context);
    expect(effects.filter((e) => e === 'destroy').length).toBe(live.state === 'ended' ? 1 : 0);
    // Freezes and thaws alternate, starting with a freeze.
    const toggles = effects.filter((e) => e !== 'destroy');
    toggles.forEach((e, i) => expect(e).toBe(i % 2 === 0 ? 'freeze' : 'thaw'));
  },
);
