/**
 * A sandbox's snapshot on the host (issue 26), into a folder of the control plane's: with gVisor its
 * memory, processes and files (`checkpointBox`: gVisor stops its own kernel, so a paused box is thawed
 * meanwhile and frozen again after), with namespaces its files only, taken frozen (`saveFiles`: the
 * writable layer and the home, so no process changes them midway). A manifest beside says which, and the
 * host id the files' owners were saved against (a copy shifts them to its own range).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkpointBox } from '../gvisor/box-checkpoint.js';
import { boxPaths } from '../gvisor/runsc-box.js';
import type { Isolation, SavedSnapshot } from '../sandbox-driver.js';
import { viewPaths } from './root-view.js';
import { saveFiles } from './saved-files.js';
import { freeze, isFrozen, thaw } from './sandbox-cgroups.js';
import { folderBytes, SNAPSHOT_MANIFEST, type SnapshotManifest } from './snapshot-manifest.js';
import { claimsOf } from './uid-ranges.js';

/**
 * Snapshots sandbox `id` of driver instance `instance` into `dir` (made 0700); `runsc` gives runsc's
 * path (built on first need). The sandbox goes on as it was, running or paused.
 *
 * @throws Error when no such sandbox is on this host, or runsc or the copy failed
 */
export async function snapshotSandbox(
  instance: string,
  id: string,
  dir: string,
  runsc: () => Promise<string>,
): Promise<SavedSnapshot> {
  const range = claimsOf(instance).get(id);
  if (range === undefined) throw new Error(`no sandbox ${id} on this host`);
  const view = viewPaths(instance, id);
  const paths = boxPaths(instance, id);
  const isolation: Isolation = existsSync(paths.bundle) ? 'gvisor' : 'namespace';
  const frozen = await isFrozen(instance, id);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (isolation === 'gvisor') {
    // gVisor stops its own kernel (a frozen one could not write its state): thawed meanwhile.
    if (frozen) await thaw(instance, id);
    try {
      await checkpointBox(await runsc(), paths, id, dir, () => saveFiles(view, dir));
    } finally {
      if (frozen) await freeze(instance, id);
    }
  } else {
    if (!frozen) await freeze(instance, id);
    try {
      await saveFiles(view, dir);
    } finally {
      if (!frozen) await thaw(instance, id);
    }
  }
  const saved: SnapshotManifest = {
    kind: isolation === 'gvisor' ? 'memory' : 'filesystem',
    isolation,
    hostBase: range.hostBase,
  };
  await writeFile(join(dir, SNAPSHOT_MANIFEST), JSON.stringify(saved), { mode: 0o600 });
  return { kind: saved.kind, bytes: await folderBytes(dir) };
}
