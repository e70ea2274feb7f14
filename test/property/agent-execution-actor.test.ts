/**
 * Model-based (fast-check `commands`): the agent execution machine hosted as a live actor, as sandboxd
 * hosts it (`HostedActor.sendNow`), driven by random commands with the spec table as the oracle. Each
 * command's step must reach the table's state, run the table's effects with the parameters the host
 * needs (a run's execution id reaches `startRuntime`), and emit what the host must hear: `busy` for a run
 * while one runs, exactly one `outcome` per run that ends, with the outcome the spec gives.
 */
import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';
import { HostedActor, stateName, type EffectParams } from '../../actors/hosted-actor.js';
import {
  agentExecutionMachine,
  type AgentExecutionEvent,
  type ExecutionOutcome,
} from '../../machines/agent-execution-machine.js';
import { AGENT_EXECUTION_TABLE } from '../../machines/agent-execution-table.js';
import { FIRST_MODEL, agentEvent, agentOracle, type AgentModel } from './support/agent-oracle.js';

type Effect = 'startRuntime' | 'terminateTree' | 'freezeAndKillTree';

/** What the oracle knows: the table's state and its model of the run. */
interface Model {
  state: string;
  run: AgentModel;
  runs: number;
  /** The last clock sent: a drawn clock moves on from it by its delta. */
  now: number;
}

/** A drawn event: a clock as a step (`delta`), the others as sent. */
type Drawn = AgentExecutionEvent | { readonly type: 'clock'; readonly delta: number };

/** The live actor, and what its host saw. */
interface Real {
  readonly actor: HostedActor<typeof agentExecutionMachine, Effect>;
  readonly effects: { readonly name: Effect; readonly params: EffectParams }[];
  readonly outcomes: (ExecutionOutcome | undefined)[];
}

/** One event through the live actor, checked against the table's row for it. */
class Send implements fc.Command<Model, Real> {
  constructor(readonly drawn: Drawn) {}

  check(): boolean {
    return true; // any event may arrive; the table says what it does
  }

  run(model: Model, real: Real): void {
    const drawn = this.drawn;
    const event: AgentExecutionEvent =
      drawn.type === 'run'
        ? { ...drawn, executionId: `exe_${String(model.runs + 1)}` }
        : drawn.type === 'clock' && 'delta' in drawn
          ? { type: 'clock', now: model.now + drawn.delta }
          : drawn;
    if (event.type === 'clock') model.now = event.now;
    const from = model.state;
    const row = AGENT_EXECUTION_TABLE.rows.find(
      (r) =>
        r.from === from &&
        r.trigger === event.type &&
        (r.when === undefined || agentOracle.conditions[r.when](model.run, event)),
    );
    const to = row?.to ?? from;
    const effectsBefore = real.effects.length;
    const outcomesBefore = real.outcomes.length;

    const emitted = real.actor.sendNow(event, {
      startRuntime: (_, params) => void real.effects.push({ name: 'startRuntime', params }),
      terminateTree: (_, params) => void real.effects.push({ name: 'terminateTree', params }),
      freezeAndKillTree: (_, params) => void real.effects.push({ name: 'freezeAndKillTree', params }),
    });

    expect(
      stateName(real.actor.snapshot.value),
      `${from} --${event.type}--> (${row?.spec ?? 'no row'})`,
    ).toBe(to);
    const seen = [...real.effects.slice(effectsBefore).map((e) => e.name), ...emitted.map((e) => e.type)];
    for (const effect of row?.effects ?? []) expect(seen, row?.spec).toContain(effect);
    if (row === undefined) expect(seen, `${from} --${event.type}--> no effect`).toEqual([]);

    // The host's view: a run's id reaches the runtime's start; a busy run starts nothing.
    if (event.type === 'run' && from === 'idle') {
      expect(real.effects.at(-1)).toEqual({
        name: 'startRuntime',
        params: { executionId: event.executionId },
      });
      model.runs += 1;
    }
    if (event.type === 'run' && from !== 'idle') expect(emitted).toEqual([{ type: 'busy' }]);
    // An end is heard once, with the outcome the spec gives it.
    const ended = from !== 'idle' && to === 'idle';
    expect(real.outcomes.length - outcomesBefore).toBe(ended ? 1 : 0);
    if (ended) {
      const outcome = real.outcomes.at(-1);
      if (event.type === 'runtime_exited') expect(outcome).toEqual({ kind: 'done' });
      else if (event.type === 'runtime_failed')
        expect(outcome).toEqual({ kind: 'failed', reason: event.reason });
      else expect(outcome).toEqual({ kind: 'failed', reason: model.run.stopReason });
    }

    model.run = agentOracle.update(model.run, event, from, to);
    model.state = to;
  }

  toString(): string {
    return JSON.stringify(this.drawn);
  }
}

const command = agentEvent.map((drawn) => new Send(drawn as Drawn));

test.prop([fc.commands([command], { maxCommands: 80 })], { numRuns: 300 })(
  'the live agent execution actor follows the spec table, runs its effects with their parameters and emits its outcomes',
  (commands) => {
    const actor = new HostedActor(agentExecutionMachine, {
      id: 'agent',
      kind: 'agent_execution',
      effects: ['startRuntime', 'terminateTree', 'freezeAndKillTree'],
    });
    const real: Real = { actor, effects: [], outcomes: [] };
    actor.on('outcome', (event) => real.outcomes.push(event.outcome));
    fc.modelRun(() => ({ model: { state: 'idle', run: FIRST_MODEL, runs: 0, now: 0 }, real }), commands);
  },
);
