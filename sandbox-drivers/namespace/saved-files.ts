/**
 * A sandbox's files in a snapshot: its own layer of its view (what it changed of its template's image)
 * and its home (`root-view.ts`), as one tar archive with numeric ids, overlay attributes (whiteouts,
 * opaque folders) and `user.*` attributes included, written while the sandbox's processes are stopped.
 * Never the agent's configuration, sandboxd's or anything of the host; not file capabilities (their
 * root id is the old range's). A sandbox started from it gets another host id
 * range: every id of the old range is shifted into the new one as the archive is unpacked, before the
 * overlay is mounted (its layer) and once its home is (its home).
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './host-commands.js';
import type { ViewPaths } from './root-view.js';
import { RANGE_SIZE } from './uid-ranges.js';

/** The archive's name in a snapshot's folder. */
export const FILES_ARCHIVE = 'files.tar';

/** What tar keeps of each file beside its bytes: ids as numbers, and the overlay's attributes. */
const TAR_KEEP = [
  '--numeric-owner',
  '--xattrs',
  '--xattrs-include=trusted.overlay.*',
  '--xattrs-include=user.*',
];

/**
 * Writes the view's layer and home into `dir`/files.tar. The caller has stopped the sandbox's
 * processes.
 */
export async function saveFiles(view: ViewPaths, dir: string): Promise<void> {
  await run('tar', [
    '--create',
    '--file',
    join(dir, FILES_ARCHIVE),
    ...TAR_KEEP,
    '-C',
    view.dir,
    'layer',
    'home',
  ]);
}

/**
 * Unpacks `part` of the archive in `dir` into the view (its folder made by `mountRootView`), the ids of
 * the range starting at `fromBase` shifted to the one starting at `toBase`.
 */
export async function restoreFiles(
  dir: string,
  part: 'layer' | 'home',
  view: ViewPaths,
  fromBase: number,
  toBase: number,
): Promise<void> {
  await run('tar', [
    '--extract',
    '--file',
    join(dir, FILES_ARCHIVE),
    ...TAR_KEEP,
    '--same-permissions',
    '-C',
    view.dir,
    part,
  ]);
  if (fromBase !== toBase) await shiftIds(join(view.dir, part), fromBase, toBase);
}

/** Every file under `path` (itself included) owned by an id of the old range gets the same id of the new. */
async function shiftIds(path: string, fromBase: number, toBase: number): Promise<void> {
  const shift = (id: number): number =>
    id >= fromBase && id < fromBase + RANGE_SIZE ? id - fromBase + toBase : id;
  const stat = await lstat(path);
  const [uid, gid] = [shift(stat.uid), shift(stat.gid)];
  if (uid !== stat.uid || gid !== stat.gid) {
    await lchown(path, uid, gid);
    // chown clears the setuid and setgid bits of a file: they come back as they were.
    if ((stat.mode & 0o6000) !== 0 && stat.isFile()) await chmod(path, stat.mode & 0o7777);
  }
  if (stat.isDirectory()) {
    for (const entry of await readdir(path)) await shiftIds(join(path, entry), fromBase, toBase);
  }
}
