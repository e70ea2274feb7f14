/**
 * sandboxd's directory watch (`GET /v1/files/watch`, `files.watchDir`) through `Files` on a local daemon
 * (root) whose commands run as uid 1000: the events of a directory or a whole tree, as fsnotify names
 * them, refusals before any event, and no watch helper outliving its client or its directory.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../../rules/errors.js';
import type { Files } from '../../../sdk/files.js';
import type { FilesystemEvent } from '../../../sdk/files-watch.js';
import { codeOf, startFilesDaemon, WATCH_HELPER_MARKER, type FilesDaemon } from '../support/files-daemon.js';
import type { LocalSandboxd } from '../support/sandboxd.js';

let world: FilesDaemon;
let root: string;
let home: string;
let daemon: LocalSandboxd;
let files: Files;

beforeAll(async () => {
  world = await startFilesDaemon('sdk-files-watch-');
  ({ root, home, daemon, files } = world);
});

afterAll(async () => {
  await world.stop();
});

/** Pids of watch helpers watching `path` (the program and its arguments are on its command line). */
const watchHelpers = (path: string): number[] => world.helpers(WATCH_HELPER_MARKER, path);

/** A watch whose events are collected. */
async function collect(path: string, recursive = false) {
  const events: FilesystemEvent[] = [];
  const handle = await files.watchDir(path, (event) => void events.push(event), { recursive });
  /** Waits until `expected` appears in order among the events (other events may come between). */
  const sees = async (expected: FilesystemEvent[]): Promise<void> => {
    await expect
      .poll(() => {
        let at = 0;
        for (const event of events) {
          const want = expected[at];
          if (want !== undefined && event.type === want.type && event.name === want.name) at += 1;
        }
        return at === expected.length ? 'seen' : JSON.stringify(events);
      })
      .toBe('seen');
  };
  return { events, handle, sees };
}

describe('files.watchDir', () => {
  it('reports create, write, chmod, rename and remove in a directory, not below it, until stopped', async () => {
    const dir = world.freshDir('watched');
    mkdirSync(join(dir, 'below'));
    const { events, handle, sees } = await collect(dir);
    writeFileSync(join(dir, 'a.txt'), 'one');
    await sees([
      { type: 'create', name: 'a.txt' },
      { type: 'write', name: 'a.txt' },
    ]);
    // One change at a time, as a program between calls would make them: the helper tells what a
    // change was from what it finds after it, which a burst of changes would blur.
    writeFileSync(join(dir, 'a.txt'), 'two', { flag: 'a' });
    await sees([
      { type: 'write', name: 'a.txt' },
      { type: 'write', name: 'a.txt' },
    ]);
    chmodSync(join(dir, 'a.txt'), 0o600);
    await sees([{ type: 'chmod', name: 'a.txt' }]);
    renameSync(join(dir, 'a.txt'), join(dir, 'b.txt'));
    await sees([
      { type: 'rename', name: 'a.txt' },
      { type: 'create', name: 'b.txt' },
    ]);
    writeFileSync(join(dir, 'below', 'deep.txt'), 'not watched');
    rmSync(join(dir, 'b.txt'));
    await sees([
      { type: 'create', name: 'a.txt' },
      { type: 'write', name: 'a.txt' },
      { type: 'write', name: 'a.txt' },
      { type: 'chmod', name: 'a.txt' },
      { type: 'rename', name: 'a.txt' },
      { type: 'create', name: 'b.txt' },
      { type: 'remove', name: 'b.txt' },
    ]);
    // The rename is the old name then the new, as fsnotify tells it.
    const renamed = events.findIndex((e) => e.type === 'rename');
    expect(events[renamed + 1]).toEqual({ type: 'create', name: 'b.txt' });
    expect(events.some((e) => e.name.startsWith('below/'))).toBe(false);
    await handle.stop();
    await expect.poll(() => watchHelpers(dir)).toEqual([]);
    const count = events.length;
    writeFileSync(join(dir, 'after.txt'), 'x');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events.length).toBe(count);
  });

  it('reports files.write over a file as a write of it, never its temporary file; a move over a file as a rename', async () => {
    const dir = world.freshDir('overwritten');
    writeFileSync(join(dir, 'kept.txt'), 'old');
    writeFileSync(join(dir, 'other.txt'), 'other');
    chownSync(join(dir, 'kept.txt'), 1000, 1000);
    chownSync(join(dir, 'other.txt'), 1000, 1000);
    const { events, handle, sees } = await collect(dir);
    await files.write(join(dir, 'kept.txt'), 'new content');
    await sees([{ type: 'write', name: 'kept.txt' }]);
    renameSync(join(dir, 'other.txt'), join(dir, 'kept.txt'));
    await sees([
      { type: 'write', name: 'kept.txt' },
      { type: 'rename', name: 'other.txt' },
      { type: 'create', name: 'kept.txt' },
    ]);
    await handle.stop();
    expect(events.filter((e) => e.name !== 'kept.txt' && e.name !== 'other.txt')).toEqual([]);
    expect(events.filter((e) => e.name === 'kept.txt' && e.type === 'create')).toHaveLength(1);
  });

  it('with recursive, reports the whole tree, directories made or renamed later included', async () => {
    const dir = world.freshDir('tree-watched');
    mkdirSync(join(dir, 'old'));
    const { handle, sees } = await collect(dir, true);
    writeFileSync(join(dir, 'old', 'x.txt'), 'x');
    await sees([{ type: 'create', name: 'old/x.txt' }]);
    // A tree made at once: what was in it before its watch began is reported as created too.
    mkdirSync(join(dir, 'new', 'deeper'), { recursive: true });
    writeFileSync(join(dir, 'new', 'deeper', 'y.txt'), 'y');
    await sees([
      { type: 'create', name: 'old/x.txt' },
      { type: 'create', name: 'new' },
      { type: 'create', name: 'new/deeper' },
      { type: 'create', name: 'new/deeper/y.txt' },
    ]);
    renameSync(join(dir, 'new'), join(dir, 'moved'));
    await sees([
      { type: 'rename', name: 'new' },
      { type: 'create', name: 'moved' },
    ]);
    writeFileSync(join(dir, 'moved', 'deeper', 'z.txt'), 'z');
    await sees([{ type: 'create', name: 'moved/deeper/z.txt' }]);
    rmSync(join(dir, 'old'), { recursive: true });
    await sees([
      { type: 'remove', name: 'old/x.txt' },
      { type: 'remove', name: 'old' },
    ]);
    await handle.stop();
  });

  it('refuses what is missing, not a directory, not readable by the user, or malformed, before any event', async () => {
    const noop = (): void => undefined;
    expect(await codeOf(files.watchDir(`${home}/no-such-dir`, noop))).toBe('file_not_found');
    writeFileSync(join(home, 'plain'), 'x');
    expect(await codeOf(files.watchDir(`${home}/plain`, noop))).toBe('not_a_directory');
    expect(await codeOf(files.watchDir('/root', noop))).toBe('permission_denied');
    const closed = join(root, 'root-only-dir');
    mkdirSync(closed, { mode: 0o700 });
    expect(await codeOf(files.watchDir(closed, noop))).toBe('permission_denied');
    expect(await codeOf(files.watchDir(`/proc/${String(daemon.pid)}/fd`, noop))).toBe('permission_denied');
    await expect(files.watchDir('relative', noop)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(files.watchDir(home, 'not a function' as never)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(files.watchDir(home, noop, { recursive: 'yes' as never })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    const res = await request(`${daemon.url}/v1/files/watch?path=${encodeURIComponent(home)}&recursive=1`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(res.statusCode).toBe(400);
    expect(((await res.body.json()) as { code: string }).code).toBe('invalid_argument');
  });

  it('ends its helper when the client goes away, and ends the stream (onExit) when the directory goes', async () => {
    const dir = world.freshDir('abandoned');
    const abort = new AbortController();
    const res = await request(`${daemon.url}/v1/files/watch?path=${encodeURIComponent(dir)}`, {
      headers: { authorization: `Bearer ${daemon.token}` },
      signal: abort.signal,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    const reader = res.body[Symbol.asyncIterator]();
    expect(String((await reader.next()).value)).toBe('{"type":"watching"}\n');
    expect(watchHelpers(dir)).toHaveLength(1);
    abort.abort();
    await expect.poll(() => watchHelpers(dir)).toEqual([]);

    const gone = world.freshDir('going');
    let exited: unknown = 'not yet';
    await files.watchDir(gone, () => undefined, {
      onExit: (error) => {
        exited = error;
      },
    });
    rmSync(gone, { recursive: true });
    await expect.poll(() => exited).toBeUndefined();
    await expect.poll(() => watchHelpers(gone)).toEqual([]);
  });

  it('ends a watch helper whose client left while it was still setting up', async () => {
    const dir = world.freshDir('slow-watch');
    execFileSync('sh', ['-c', `cd ${dir} && seq 1 90000 | xargs touch`]);
    const abort = new AbortController();
    const pending = request(`${daemon.url}/v1/files/watch?path=${encodeURIComponent(dir)}`, {
      headers: { authorization: `Bearer ${daemon.token}` },
      signal: abort.signal,
    }).catch(() => undefined);
    await expect.poll(() => watchHelpers(dir), { interval: 10 }).toHaveLength(1);
    abort.abort();
    await pending;
    await expect.poll(() => watchHelpers(dir), { timeout: 15_000 }).toEqual([]);
    rmSync(dir, { recursive: true });
  });
});
