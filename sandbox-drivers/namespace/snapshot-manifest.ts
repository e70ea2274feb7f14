/**
 * The driver's own note in a snapshot's folder (`snapshot.json`): what the snapshot holds, the isolation
 * it was taken from, and the host id range its files were owned by (a sandbox started from it shifts
 * them into its own, `saved-files.ts`).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Isolation, SnapshotKind } from '../sandbox-driver.js';

/** Its name in the snapshot's folder. */
export const SNAPSHOT_MANIFEST = 'snapshot.json';

/** The note. */
export interface SnapshotManifest {
  readonly kind: SnapshotKind;
  readonly isolation: Isolation;
  /** The host id of the saved sandbox's id 0. */
  readonly hostBase: number;
}

/**
 * The note of the snapshot in `dir`.
 *
 * @throws Error when the folder holds no snapshot of this driver's
 */
export async function readSnapshotManifest(dir: string): Promise<SnapshotManifest> {
  const parsed = JSON.parse(
    await readFile(join(dir, SNAPSHOT_MANIFEST), 'utf8'),
  ) as Partial<SnapshotManifest>;
  if (
    (parsed.kind !== 'memory' && parsed.kind !== 'filesystem') ||
    (parsed.isolation !== 'namespace' && parsed.isolation !== 'gvisor') ||
    typeof parsed.hostBase !== 'number'
  ) {
    throw new Error(`${dir} holds no snapshot`);
  }
  return { kind: parsed.kind, isolation: parsed.isolation, hostBase: parsed.hostBase };
}

/** Bytes of the files under `dir`. */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await folderBytes(path);
    else if (entry.isFile()) total += (await stat(path)).size;
  }
  return total;
}
