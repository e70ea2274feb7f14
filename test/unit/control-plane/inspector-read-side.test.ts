/**
 * Issue 13: what the inspector reads of the control plane: the sandbox table (timers, memory, the last
 * rows of ended sandboxes), a sandbox's history replayed from the journal (time travel, also after a
 * compaction), and each sandbox's records from sandboxd with the routes and agent they summarize.
 */
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxRecords } from '../../../control-plane/sandbox-records.js';
import type { DaemonEvent } from '../../../protocol/daemon-events.js';
import { MemoryPlaneWorld } from '../../support/memory-control-plane.js';

const closedEgress = { template: 'sdk-base-caps', allowInternetAccess: false } as const;

let world: MemoryPlaneWorld;
beforeEach(() => {
  world = new MemoryPlaneWorld();
});
afterEach(() => world.dispose());

describe('the sandbox table', () => {
  it('gives each live sandbox its timers and memory, and keeps the row of one that ended', async () => {
    const plane = await world.start();
    const created = world.now;
    const live = await plane.create({ ...closedEgress, idlePolicy: { maxIdleSeconds: 60 }, memoryMb: 100 });
    const killed = await plane.create(closedEgress);
    world.now += 5_000;
    await plane.kill(killed.sandboxId, killed.accessToken);

    const table = await plane.inspectorSandboxes();
    expect(table.now).toBe(world.now);
    expect(table.sandboxes.map((row) => [row.sandboxId, row.state])).toEqual([
      [live.sandboxId, 'running'],
      [killed.sandboxId, 'ended'],
    ]);
    expect(table.sandboxes[0]).toMatchObject({
      template: 'sdk-base-caps',
      allowInternetAccess: false,
      createdAt: created,
      lastActivityAt: created,
      maxIdleMs: 60_000,
      autoResume: true,
      deadlineAt: created + 3_600_000,
      memoryBytes: (100 * 2 ** 20) / 10, // the memory driver's figure
      memoryLimitBytes: 100 * 2 ** 20,
      routes: [],
      execution: null,
    });
    expect(table.sandboxes[1]).toMatchObject({ endReason: 'killed', memoryBytes: null, execution: null });
  });
});

describe('time travel', () => {
  it('replays a sandbox journal event by event, with the state and context after each', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    const created = world.now;
    world.now += 1_000;
    await plane.pause(sbx.sandboxId, sbx.accessToken);
    world.now += 1_000;
    await plane.connect(sbx.sandboxId, sbx.accessToken);
    await plane.kill(sbx.sandboxId, sbx.accessToken);

    const history = await plane.history(sbx.sandboxId, sbx.accessToken);
    expect(history.from).toBe('created');
    const steps = history.entries.map((entry) => [entry.seq, entry.event.type, entry.state]);
    expect(steps).toEqual([
      [0, 'created', 'running'],
      [1, 'clock', 'running'],
      [2, 'pause', 'suspended'],
      [3, 'clock', 'suspended'],
      [4, 'connect', 'running'],
      [5, 'clock', 'running'], // time first: every call journals the clock before its event
      [6, 'kill', 'ended'],
    ]);
    expect(history.entries[2]?.context).toMatchObject({ suspendReason: 'paused', lastActivityAt: created });
    expect(history.entries[4]?.context).toMatchObject({
      suspendReason: null,
      lastActivityAt: created + 2_000,
    });
    expect(history.entries[6]?.context.endReason).toBe('killed');
  });

  it('starts from the snapshot once a compaction folded the earlier events', async () => {
    const plane = await world.start({ compactAfter: 4 });
    const sbx = await plane.create(closedEgress);
    for (let i = 0; i < 3; i++) {
      world.now += 1_000;
      await plane.pause(sbx.sandboxId, sbx.accessToken);
      await plane.connect(sbx.sandboxId, sbx.accessToken);
    }
    await plane.tick(); // compaction is due
    world.now += 1_000;
    await plane.pause(sbx.sandboxId, sbx.accessToken);

    const history = await plane.history(sbx.sandboxId, sbx.accessToken);
    expect(history.from).toBe('snapshot');
    const [first, ...rest] = history.entries;
    expect(first).toMatchObject({ event: { type: 'snapshot' }, state: 'running' });
    expect(rest.map((entry) => entry.event.type)).toEqual(['clock', 'pause']);
    expect(rest.at(-1)?.seq).toBe((first?.seq ?? 0) + 2);
  });

  it('is refused without the sandbox token or the operator key', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    await expect(plane.history(sbx.sandboxId, 'not-the-token')).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    await expect(plane.history('nosuchsandbx', sbx.accessToken)).rejects.toMatchObject({
      code: 'sandbox_not_found',
    });
  });
});

describe("a sandbox's records from sandboxd", () => {
  it('completes at once for an ended sandbox whose records are not kept, and refuses a stranger', async () => {
    const plane = await world.start();
    const sbx = await plane.create(closedEgress);
    await plane.kill(sbx.sandboxId, sbx.accessToken);
    expect(await firstValueFrom(plane.records(sbx.sandboxId, sbx.accessToken).pipe(toArray()))).toEqual([]);
    expect(() => plane.records(sbx.sandboxId, 'not-the-token')).toThrow(/access token/);
  });

  let seq = 0;
  type Unstamped = DaemonEvent extends infer E
    ? E extends DaemonEvent
      ? Omit<E, 'seq' | 'at'>
      : never
    : never;
  const event = (record: Unstamped): DaemonEvent => ({ ...record, seq: ++seq, at: 1_000 + seq });

  it('keeps them with cursors and summarizes routes and the agent', async () => {
    const records = new SandboxRecords();
    records.append('a', event({ type: 'route', route: 'model', event: 'opened', port: 41_000 }));
    records.append(
      'a',
      event({
        type: 'transition',
        actorId: 'model',
        kind: 'gateway_route',
        actorSeq: 1,
        event: 'configure',
        state: 'open',
      }),
    );
    records.append(
      'a',
      event({ type: 'route', route: 'search', event: 'failed', errorClass: 'ConfigurationError' }),
    );
    records.append('b', event({ type: 'process', pid: 7, event: 'start', command: 'ls' }));
    // The run names the execution it starts: the table knows it without asking sandboxd.
    records.append(
      'a',
      event({
        type: 'transition',
        actorId: 'agent',
        kind: 'agent_execution',
        actorSeq: 1,
        event: 'run',
        state: 'running.active',
        executionId: 'exec-1',
      }),
    );
    expect(records.execution('a')).toEqual({ executionId: 'exec-1', state: 'running.active' });
    expect(records.routes('a')).toEqual([
      { name: 'model', state: 'open', port: 41_000, lastErrorClass: null },
      { name: 'search', state: 'open', port: null, lastErrorClass: 'ConfigurationError' },
    ]);

    const all = await firstValueFrom(records.stream('a').pipe(take(4), toArray()));
    expect(all.map((record) => [record.seq, record.type])).toEqual([
      [1, 'route'],
      [2, 'transition'],
      [3, 'route'],
      [4, 'transition'],
    ]);
    expect(all[0]).toMatchObject({ sandboxId: 'a', daemonSeq: 1, port: 41_000 });
    const after = await firstValueFrom(records.stream('a', 3));
    expect(after).toMatchObject({ seq: 4, kind: 'agent_execution' });

    records.append(
      'a',
      event({
        type: 'transition',
        actorId: 'agent',
        kind: 'agent_execution',
        actorSeq: 2,
        event: 'runtime_exited',
        state: 'idle',
      }),
    );
    expect(records.execution('a')).toBeNull();
  });

  it('ends the streams of an ended sandbox and takes no more of its records', async () => {
    const records = new SandboxRecords();
    records.append('a', event({ type: 'process', pid: 7, event: 'start', command: 'sleep 1' }));
    const done = firstValueFrom(records.stream('a').pipe(toArray()));
    records.end('a');
    records.append('a', event({ type: 'process', pid: 7, event: 'end', exitCode: 0, signal: null }));
    expect((await done).map((record) => record.type)).toEqual(['process']);
  });
});
