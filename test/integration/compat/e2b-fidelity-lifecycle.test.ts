/**
 * E2B fidelity, the sandbox's lifecycle: programs written the way E2B's documentation and its JS SDK's
 * own tests (`tests/sandbox/timeout.test.ts`, `tests/api/list.test.ts`, `tests/api/info.test.ts`)
 * create, connect, list (by metadata, state, start and template), time out and kill sandboxes, and what
 * only E2B's cloud has (refused by name), through the shim against a real control plane, asserting what
 * E2B says such a program observes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CommandExitError,
  InvalidArgumentError,
  NotFoundError,
  NotSupportedError,
  Sandbox,
  SandboxNotFoundError,
  Secret,
  Template,
  TimeoutError,
  Volume,
} from '../../../sdk/compat/e2b/index.js';
import { useShimSandbox } from './shim-world.js';

const { sandbox } = useShimSandbox(() => Sandbox.create('base', { envs: { FOO: 'bar' } }));
let sbx: Sandbox;
beforeAll(() => {
  sbx = sandbox();
});

describe('E2B programs: sandbox lifecycle', () => {
  it('create(opts) and create(template, opts), connect by id, getInfo by id, isRunning false after kill', async () => {
    const own = await Sandbox.create({ timeoutMs: 60_000 });
    expect(typeof own.sandboxId).toBe('string');
    expect(await own.isRunning()).toBe(true);
    const again = await Sandbox.connect(own.sandboxId);
    expect(await again.isRunning()).toBe(true);
    const info = await Sandbox.getInfo(own.sandboxId);
    expect(info.sandboxId).toBe(own.sandboxId);
    expect(info.endAt).toBeInstanceOf(Date);
    expect(info.state).toBe('running');
    expect(info.metadata).toEqual({});
    // E2B's extra fields: no egress rules or lifecycle options set, no volumes.
    expect(info.volumeMounts).toEqual([]);
    expect(info.network).toBeUndefined();
    expect(info.lifecycle).toBeUndefined();
    expect(await own.kill()).toBe(true);
    expect(await own.isRunning()).toBe(false);
    const error = await Sandbox.connect(own.sandboxId).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'SandboxNotFoundError' });
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it('a sandbox past its timeoutMs is no longer running; its calls then time out, as in E2B', async () => {
    const short = await Sandbox.create({ timeoutMs: 3_000 });
    expect(await short.isRunning()).toBe(true);
    await expect.poll(() => short.isRunning(), { timeout: 20_000, interval: 500 }).toBe(false);
    await expect(short.commands.run('true')).rejects.toBeInstanceOf(TimeoutError);
    expect(await Sandbox.kill(short.sandboxId)).toBe(false);
  });

  it("E2B's default template without internet access: commands run, egress is closed", async () => {
    const closed = await Sandbox.create({ allowInternetAccess: false, timeoutMs: 60_000 });
    try {
      expect(await closed.getInfo()).toMatchObject({
        allowInternetAccess: false,
        templateId: 'sdk-base-caps',
      });
      expect((await closed.commands.run('echo "$HOME"')).stdout).toBe('/home/user\n');
      const curl = await closed.commands
        .run('curl --connect-timeout 3 --max-time 5 -Is http://1.1.1.1')
        .catch((e: unknown) => e);
      expect(curl).toBeInstanceOf(CommandExitError);
      expect((curl as CommandExitError).exitCode).not.toBe(0);
      const listed = await Sandbox.list({ query: { template: 'base' } }).nextItems();
      expect(listed.map((s) => s.sandboxId)).toContain(closed.sandboxId);
    } finally {
      await closed.kill();
    }
  });

  it('Sandbox.kill of an id that does not exist is false; getInfo and connect say SandboxNotFoundError', async () => {
    expect(await Sandbox.kill('nonexistingsandbox')).toBe(false);
    expect(await Sandbox.kill('0123456789ab')).toBe(false);
    await expect(Sandbox.getInfo('nonexistingsandbox')).rejects.toThrow(SandboxNotFoundError);
    await expect(Sandbox.connect('nonexistingsandbox')).rejects.toThrow(SandboxNotFoundError);
  });

  it('connect with a timeoutMs shorter than the lifetime left does not shorten it; a longer one extends it', async () => {
    const own = await Sandbox.create({ timeoutMs: 300_000 });
    try {
      const before = await Sandbox.getInfo(own.sandboxId);
      await Sandbox.connect(own.sandboxId, { timeoutMs: 10_000 });
      await own.connect({ timeoutMs: 10_000 });
      expect((await own.getInfo()).endAt.getTime()).toBe(before.endAt.getTime());
      await own.connect({ timeoutMs: 600_000 });
      expect((await own.getInfo()).endAt.getTime() - Date.now()).toBeGreaterThan(500_000);
    } finally {
      await own.kill();
    }
  });

  it('setTimeout: shorten then lengthen (the latest wins, from now), shorten until it ends; 8 h from creation at most', async () => {
    const own = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      // E2B's 'get sandbox timeout'
      const { endAt, startedAt } = await own.getInfo();
      expect(endAt).toBeInstanceOf(Date);
      expect(startedAt).toBeInstanceOf(Date);
      // E2B's 'shorten then lengthen timeout', read from endAt rather than waited for.
      await own.setTimeout(5000);
      expect((await own.getInfo()).endAt.getTime()).toBeLessThanOrEqual(Date.now() + 5000);
      await own.setTimeout(120_000);
      expect((await own.getInfo()).endAt.getTime()).toBeGreaterThan(Date.now() + 100_000);
      expect(await own.isRunning()).toBe(true);
      const refused = await own.setTimeout(8 * 3_600_000).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidArgumentError);
      expect((refused as Error).message).toContain('8 h from its creation');
      // E2B's 'shorten timeout': past it the sandbox is no longer running.
      await Sandbox.setTimeout(own.sandboxId, 2000);
      await expect.poll(() => own.isRunning(), { timeout: 20_000, interval: 500 }).toBe(false);
      await expect(own.setTimeout(5000)).rejects.toBeInstanceOf(SandboxNotFoundError);
    } finally {
      await own.kill();
    }
  });

  it("list by metadata, as E2B's tests tag their sandboxes: only those holding every entry", async () => {
    const uniqueId = `u-${String(process.pid)}-${String(Date.now())}`;
    const extra = await Sandbox.create({ metadata: { uniqueId }, timeoutMs: 60_000 });
    try {
      // E2B's 'list sandboxes with filter'
      const sandboxes = await Sandbox.list({ query: { metadata: { uniqueId } } }).nextItems();
      expect(sandboxes.map((s) => s.sandboxId)).toEqual([extra.sandboxId]);
      expect(sandboxes[0]?.metadata).toEqual({ uniqueId });
      // E2B's 'get sandbox info'
      const info = await Sandbox.getInfo(extra.sandboxId);
      expect(info.sandboxId).toBe(extra.sandboxId);
      expect(info.metadata).toEqual({ uniqueId });
      expect(await Sandbox.list({ query: { metadata: { uniqueId, other: 'x' } } }).nextItems()).toEqual([]);
    } finally {
      await extra.kill();
    }
    expect(await Sandbox.list({ query: { metadata: { uniqueId } } }).nextItems()).toEqual([]);
  });

  it('list: newest first by default, order asc/desc, limit pages with nextToken, state, start and template filters', async () => {
    const sandboxTestId = `test-${String(process.pid)}-${String(Date.now())}`;
    const older = await Sandbox.create({ timeoutMs: 60_000, metadata: { sandboxTestId } });
    const newer = await Sandbox.create({ timeoutMs: 60_000, metadata: { sandboxTestId } });
    try {
      const ids = [older.sandboxId, newer.sandboxId];
      const ours = (list: { sandboxId: string }[]): string[] =>
        list.map((s) => s.sandboxId).filter((id) => ids.includes(id));
      expect(ours(await Sandbox.list().nextItems())).toEqual([newer.sandboxId, older.sandboxId]);
      expect(ours(await Sandbox.list({ order: 'desc' }).nextItems())).toEqual([
        newer.sandboxId,
        older.sandboxId,
      ]);
      expect(ours(await Sandbox.list({ order: 'asc' }).nextItems())).toEqual([
        older.sandboxId,
        newer.sandboxId,
      ]);

      // E2B's 'paginate running sandboxes'
      const paginator = Sandbox.list({
        limit: 1,
        query: { metadata: { sandboxTestId }, state: ['running'] },
      });
      const first = await paginator.nextItems();
      expect(first).toHaveLength(1);
      expect(first[0]?.state).toBe('running');
      expect(paginator.hasNext).toBe(true);
      expect(paginator.nextToken).not.toBeUndefined();
      expect(first[0]?.sandboxId).toBe(newer.sandboxId);
      const second = await paginator.nextItems();
      expect(second.map((s) => s.sandboxId)).toEqual([older.sandboxId]);
      expect(paginator.hasNext).toBe(false);
      expect(paginator.nextToken).toBeUndefined();
      // E2B's 'list sandboxes started after'
      const { startedAt } = await newer.getInfo();
      const since = await Sandbox.list({
        query: { metadata: { sandboxTestId }, startedAfter: startedAt },
      }).nextItems();
      expect(since.map((s) => s.sandboxId)).toEqual([newer.sandboxId]);
      const later = new Date(startedAt.getTime() + 1000);
      expect(
        await Sandbox.list({ query: { metadata: { sandboxTestId }, startedAfter: later } }).nextItems(),
      ).toEqual([]);

      await older.pause();
      const paused = await Sandbox.list({ query: { state: ['paused'] } }).nextItems();
      expect(paused.map((s) => [s.sandboxId, s.state])).toEqual([[older.sandboxId, 'paused']]);
      const byTemplate = await Sandbox.list({ query: { template: 'base' } }).nextItems();
      expect(byTemplate.map((s) => s.sandboxId)).toEqual(expect.arrayContaining(ids));
      expect(await Sandbox.list({ query: { template: 'no-such-template' } }).nextItems()).toEqual([]);
      const resumed = await Sandbox.connect(older.sandboxId);
      expect(await resumed.isRunning()).toBe(true);
    } finally {
      await older.kill();
      await newer.kill();
    }
    const gone = await Sandbox.list({ query: { state: ['running'] } }).nextItems();
    expect(gone.map((s) => s.sandboxId)).not.toContain(older.sandboxId);
  });
});

describe("E2B programs: what only E2B's cloud has", () => {
  it('Template, Volume and Secret import, and refuse any use naming it', () => {
    expect(() => Template.build('template', { alias: 'mine' })).toThrow(NotSupportedError);
    expect(() => Template.build('template', { alias: 'mine' })).toThrow(/sdk template build/);
    expect(() => new Template()).toThrow(expect.objectContaining({ feature: 'Template' }) as Error);
    expect(() => Volume.create('data')).toThrow(
      expect.objectContaining({ feature: 'Volume.create' }) as Error,
    );
    expect(() => Secret.list()).toThrow(NotSupportedError);
  });

  it("a call's AbortSignal is refused by name, as in the connection options", async () => {
    const signal = AbortSignal.timeout(5000);
    await expect(sbx.commands.run('true', { signal } as never)).rejects.toMatchObject({
      name: 'NotSupportedError',
      feature: 'signal',
    });
    await expect(sbx.files.read('x.txt', { signal } as never)).rejects.toMatchObject({ feature: 'signal' });
    await expect(sbx.commands.list({ signal } as never)).rejects.toMatchObject({ feature: 'signal' });
  });

  it("Sandbox's statics: updateNetwork by id is the egress policy; getFullInfo is getInfo", async () => {
    // E2B's update replaces the whole configuration: {} opens it all again.
    await Sandbox.updateNetwork(sbx.sandboxId, { denyOut: ['10.0.0.0/8'] });
    expect((await Sandbox.getInfo(sbx.sandboxId)).network).toEqual({ denyOut: ['10.0.0.0/8'] });
    await Sandbox.updateNetwork(sbx.sandboxId, {});
    expect((await Sandbox.getInfo(sbx.sandboxId)).network).toBeUndefined();
    // Snapshots are offered (e2b-snapshots.test.ts); a memory one of a namespace sandbox is refused.
    if ((await sbx.native.getInfo()).isolation === 'namespace') {
      await expect(Sandbox.createSnapshot(sbx.sandboxId)).rejects.toBeInstanceOf(NotSupportedError);
    }
    expect((await Sandbox.getFullInfo(sbx.sandboxId)).sandboxId).toBe(sbx.sandboxId);
  });
});
