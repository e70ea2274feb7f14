/**
 * Model-based (fast-check `commands`): a live sandbox actor with its journal, as the control plane hosts
 * it, driven by random commands across simulated crashes, with the spec table as the oracle. Each event
 * must reach the table's state and run the table's effects; a journal write that fails leaves the state
 * as it was (journaled before applied); a freeze or thaw that fails comes back as its failure event,
 * journaled and applied; a crash (a new control plane replaying the journal, effects not run again) must
 * give the same state and context as the actor that crashed.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { EffectFailedError } from '../../actors/hosted-actor.js';
import { SandboxActor, type SandboxEffects } from '../../actors/sandbox-actor.js';
import type { SandboxMachineEvent } from '../../machines/sandbox-machine.js';
import { SANDBOX_TABLE } from '../../machines/sandbox-table.js';
import { SANDBOX_CALL_EVENTS, sandboxOracle, type SandboxModel } from './support/sandbox-oracle.js';

const ID = 'abcdef012345';
const INPUT = { now: 0, timeoutMs: 100_000, maxIdleMs: 10_000 };

/** What the oracle knows: the table's state and its model of the sandbox. */
interface Model {
  state: string;
  sandbox: SandboxModel;
}

/** The live actor, its journal (what a crash replays) and the effects its host ran. */
interface Real {
  actor: SandboxActor;
  readonly journal: { readonly event: SandboxMachineEvent; readonly seq: number }[];
  readonly effects: string[];
  readonly autoResume: boolean;
}

/** The row of the table that `event` takes from `from`, judged by the oracle. */
function rowFor(model: Model, event: SandboxMachineEvent) {
  return SANDBOX_TABLE.rows.find(
    (r) =>
      r.from === model.state &&
      r.trigger === event.type &&
      (r.when === undefined || sandboxOracle.conditions[r.when](model.sandbox, event)),
  );
}

function advance(model: Model, event: SandboxMachineEvent, to: string): void {
  model.sandbox = sandboxOracle.update(model.sandbox, event, model.state, to);
  model.state = to;
}

/** The host's effects, recorded; `failing` ones reject. */
function effects(real: Real, failing: ReadonlySet<string> = new Set()): SandboxEffects {
  const run = (name: string) => (): Promise<void> => {
    real.effects.push(name);
    return failing.has(name) ? Promise.reject(new Error(`${name} failed`)) : Promise.resolve();
  };
  return { freeze: run('freeze'), thaw: run('thaw'), destroy: run('destroy') };
}

const journalTo =
  (real: Real) =>
  (event: SandboxMachineEvent, seq: number): void => {
    real.journal.push({ event, seq });
  };

/** A drawn event: a clock as a step. */
type Drawn =
  Exclude<SandboxMachineEvent, { type: 'clock' }> | { readonly type: 'clock'; readonly delta: number };

const eventOf = (drawn: Drawn, model: Model): SandboxMachineEvent =>
  drawn.type === 'clock' ? { type: 'clock', now: model.sandbox.now + drawn.delta } : drawn;

/** One event, journaled and applied; its effects succeed, or (`failing`) the freeze or thaw fails. */
class Send implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly drawn: Drawn,
    readonly failing: boolean,
  ) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    const event = eventOf(this.drawn, model);
    const row = rowFor(model, event);
    const to = row?.to ?? model.state;
    const before = real.effects.length;
    const failing = new Set(this.failing ? ['freeze', 'thaw'] : []);
    const failed = row?.effects?.find((effect) => failing.has(effect));
    const sent = real.actor.send(event, journalTo(real), effects(real, failing));
    if (failed === undefined) {
      await sent;
      expect(real.actor.state, `${model.state} --${event.type}--> (${row?.spec ?? 'no row'})`).toBe(to);
      const ran = real.effects.slice(before);
      expect(ran).toEqual(expect.arrayContaining([...(row?.effects ?? [])]));
      if (row === undefined) expect(ran).toEqual([]);
      advance(model, event, to);
      return;
    }
    // The effect failed: its failure event was journaled and applied after the event itself.
    await expect(sent).rejects.toBeInstanceOf(EffectFailedError);
    advance(model, event, to);
    const failure: SandboxMachineEvent = { type: failed === 'freeze' ? 'freeze_failed' : 'thaw_failed' };
    expect(real.journal.at(-1)?.event).toEqual(failure);
    const failureRow = rowFor(model, failure);
    advance(model, failure, failureRow?.to ?? model.state);
    expect(real.actor.state).toBe(model.state);
  }

  toString(): string {
    return `send ${JSON.stringify(this.drawn)}${this.failing ? ' (freeze/thaw fail)' : ''}`;
  }
}

/** A journal write that fails (the disk broke, the process died mid-write): nothing is applied. */
class BrokenWrite implements fc.AsyncCommand<Model, Real> {
  constructor(readonly drawn: Drawn) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    const event = eventOf(this.drawn, model);
    const before = { state: real.actor.state, context: real.actor.snapshot.context, seq: real.actor.seq };
    const journaled = real.journal.length;
    const sent = real.actor.send(event, () => Promise.reject(new Error('the journal broke')), effects(real));
    // Taken or not, nothing is applied or run: an event the machine cannot take is never written.
    await sent.catch(() => undefined);
    expect({ state: real.actor.state, context: real.actor.snapshot.context, seq: real.actor.seq }).toEqual(
      before,
    );
    expect(real.journal.length).toBe(journaled);
  }

  toString(): string {
    return `broken write of ${JSON.stringify(this.drawn)}`;
  }
}

/** The control plane crashes: a new actor replays the journal (no effect runs) and takes over. */
class Crash implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }

  run(model: Model, real: Real): Promise<void> {
    const ranBefore = real.effects.length;
    const replayed = new SandboxActor(ID, { ...INPUT, autoResume: real.autoResume });
    for (const { event, seq } of real.journal) replayed.replay(event, seq);
    expect(replayed.state).toBe(real.actor.state);
    expect(replayed.state).toBe(model.state);
    expect(replayed.snapshot.context).toEqual(real.actor.snapshot.context);
    expect(replayed.seq).toBe(real.actor.seq);
    expect(real.effects.length).toBe(ranBefore);
    real.actor = replayed;
    return Promise.resolve();
  }

  toString(): string {
    return 'crash';
  }
}

const drawn = fc.oneof(fc.constantFrom<Drawn>(...SANDBOX_CALL_EVENTS), {
  arbitrary: fc
    .constantFrom(0, 1, 4_999, 9_999, 10_000, 30_000, 99_999, 100_000)
    .map((delta): Drawn => ({ type: 'clock', delta })),
  weight: 2,
});

const commands = fc.commands(
  [
    fc.tuple(drawn, fc.boolean()).map(([d, failing]) => new Send(d, failing)),
    drawn.map((d) => new BrokenWrite(d)),
    fc.constant(new Crash()),
  ],
  { maxCommands: 60 },
);

test.prop([commands, fc.boolean()], { numRuns: 300 })(
  'a live sandbox actor with its journal follows the spec table across failed writes, failed effects and crashes',
  async (cmds, autoResume) => {
    const real: Real = {
      actor: new SandboxActor(ID, { ...INPUT, autoResume }),
      journal: [],
      effects: [],
      autoResume,
    };
    const model: Model = {
      state: 'running',
      sandbox: { now: 0, deadline: INPUT.timeoutMs, maxIdleMs: INPUT.maxIdleMs, autoResume, lastActivity: 0 },
    };
    await fc.asyncModelRun(() => ({ model, real }), cmds);
  },
);
