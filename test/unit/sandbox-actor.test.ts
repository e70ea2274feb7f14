import { describe, expect, it } from 'vitest';
import { ActorSystem, type InspectionRecord } from '../../actors/actor-system.js';
import { EffectFailedError, SandboxActor, type SandboxEffects } from '../../actors/sandbox-actor.js';
import type { SandboxMachineEvent } from '../../machines/sandbox-machine.js';

const input = { now: 0, timeoutMs: 100_000, maxIdleMs: 10_000, autoResume: true };

/** Effects that record their calls and fail when told to. */
function effects(
  failing: ReadonlySet<keyof SandboxEffects> = new Set(),
): SandboxEffects & { calls: string[] } {
  const calls: string[] = [];
  const effect = (name: keyof SandboxEffects) => (): Promise<void> => {
    calls.push(name);
    return failing.has(name) ? Promise.reject(new Error(`${name} broke`)) : Promise.resolve();
  };
  return { calls, freeze: effect('freeze'), thaw: effect('thaw'), destroy: effect('destroy') };
}

describe('the sandbox actor', () => {
  it('journals each event it takes with the next sequence number, and reports it to the inspection feed', async () => {
    const system = new ActorSystem();
    const seen: InspectionRecord[] = [];
    system.inspect$.subscribe((record) => seen.push(record));
    const actor = new SandboxActor('abcdef012345', input, { system, now: () => 42 });
    const journal: [string, number][] = [];
    const write = (event: SandboxMachineEvent, seq: number): void => void journal.push([event.type, seq]);
    await actor.send({ type: 'pause' }, write, effects());
    await actor.send({ type: 'pause' }, write, effects()); // not taken: suspended has no pause
    await actor.send({ type: 'connect' }, write, effects());
    expect(journal).toEqual([
      ['pause', 1],
      ['connect', 2],
    ]);
    expect(
      seen.map(({ actorId, kind, seq, event, state, at }) => [actorId, kind, seq, event.type, state, at]),
    ).toEqual([
      ['abcdef012345', 'sandbox', 1, 'pause', 'suspended', 42],
      ['abcdef012345', 'sandbox', 2, 'connect', 'running', 42],
    ]);
  });

  it('feeds a failed freeze back as freeze_failed: journaled, applied, and the state says running', async () => {
    const actor = new SandboxActor('abcdef012345', input);
    const journal: string[] = [];
    const run = effects(new Set(['freeze']));
    const error = await actor
      .send({ type: 'pause' }, (event) => void journal.push(event.type), run)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EffectFailedError);
    expect(run.calls).toEqual(['freeze']);
    expect(journal).toEqual(['pause', 'freeze_failed']);
    expect(actor.state).toBe('running');
    expect(actor.snapshot.context.suspendReason).toBeUndefined();
  });

  it('feeds a failed thaw back as thaw_failed: the sandbox stays suspended', async () => {
    const actor = new SandboxActor('abcdef012345', input);
    const journal: string[] = [];
    await actor.send({ type: 'pause' }, (event) => void journal.push(event.type), effects());
    await expect(
      actor.send({ type: 'connect' }, (event) => void journal.push(event.type), effects(new Set(['thaw']))),
    ).rejects.toBeInstanceOf(EffectFailedError);
    expect(journal).toEqual(['pause', 'connect', 'thaw_failed']);
    expect(actor.state).toBe('suspended');
  });

  it('applies nothing when the journal write fails', async () => {
    const actor = new SandboxActor('abcdef012345', input);
    const run = effects();
    await expect(
      actor.send({ type: 'pause' }, () => Promise.reject(new Error('disk full')), run),
    ).rejects.toThrow('disk full');
    expect(actor.state).toBe('running');
    expect(actor.seq).toBe(0);
    expect(run.calls).toEqual([]);
  });

  it('continues from a persisted snapshot and skips events it already holds', async () => {
    const first = new SandboxActor('abcdef012345', input);
    await first.send({ type: 'pause' }, () => undefined, effects());
    const persisted = JSON.parse(JSON.stringify(first.persisted())) as ReturnType<SandboxActor['persisted']>;
    const restored = new SandboxActor('abcdef012345', input, { restore: persisted });
    expect(restored.state).toBe('suspended');
    restored.replay({ type: 'connect' }, 1); // already in the snapshot
    expect(restored.state).toBe('suspended');
    restored.replay({ type: 'connect' }, 2);
    expect([restored.state, restored.seq]).toEqual(['running', 2]);
  });
});
