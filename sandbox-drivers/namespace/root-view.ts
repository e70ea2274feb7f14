/**
 * A sandbox's copy-on-write view of its template (issue 14): an overlay mount with the template's image
 * as its lower layer and an upper layer of the sandbox's own, on a size-bounded tmpfs, at
 * `/run/sdk/views/<instance>-<id>/merged`. Sandbox code can install into its sandbox (`/usr/local` is the
 * sandbox user's in the view, as a root-run install would make it), and the image, which every sandbox
 * of the template shares, is never written: a write copies the file up into the sandbox's layer. The
 * tmpfs's pages are charged to the memory cgroup of the process that writes them, so the sandbox pays
 * for what it installs. Mounted by the driver on the host (bubblewrap 0.8 has no overlay option, and an
 * overlay made inside the sandbox's user namespace cannot copy up files whose owner it does not map),
 * removed at destroy; the name carries the driver's instance, so a driver lists and removes only its own.
 */
import { chown, mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run, runQuietly } from './host-commands.js';

/** Where the views live. */
const VIEWS_DIR = '/run/sdk/views';

/**
 * The folder of a sandbox's view: its tmpfs, holding the sandbox's layer (`layer`), overlayfs's own
 * scratch folder (`scratch`) and the merged view (`merged`). The sandbox sees these paths in its mountinfo.
 */
export function rootViewDir(instance: string, id: string): string {
  return join(VIEWS_DIR, `${instance}-${id}`);
}

/** The folder the sandbox user owns in the view: where `make install` and `npm install -g` write. */
export const USER_OWNED = '/usr/local';

/**
 * Mounts the view of `image` for sandbox `id`; `bytes` bounds what the sandbox may write into it. The
 * folders under `/usr/local` become `user`'s (host ids) in the sandbox's layer only.
 *
 * @returns the merged root
 */
export async function mountRootView(
  instance: string,
  id: string,
  image: string,
  bytes: number,
  user: { readonly uid: number; readonly gid: number },
): Promise<string> {
  const dir = rootViewDir(instance, id);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await run('mount', ['-t', 'tmpfs', '-o', `size=${String(bytes)},mode=0755`, `sdk-root-${id}`, dir]);
  for (const name of ['layer', 'scratch', 'merged']) await mkdir(join(dir, name), { mode: 0o755 });
  const root = join(dir, 'merged');
  await run('mount', [
    '-t',
    'overlay',
    '-o',
    `lowerdir=${image},upperdir=${join(dir, 'layer')},workdir=${join(dir, 'scratch')}`,
    `sdk-overlay-${id}`,
    root,
  ]);
  await ownFolders(join(root, USER_OWNED), user);
  return root;
}

/** `dir` and every folder below it become `user`'s (a metadata copy-up each; files stay as they are). */
async function ownFolders(dir: string, user: { readonly uid: number; readonly gid: number }): Promise<void> {
  await chown(dir, user.uid, user.gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await ownFolders(join(dir, entry.name), user);
  }
}

/** Unmounts and removes a sandbox's view; nothing there is a no-op. */
export async function removeRootView(instance: string, id: string): Promise<void> {
  const dir = rootViewDir(instance, id);
  // Lazily: a process that still has the mount open (a sandbox being torn down) does not keep it.
  await runQuietly('umount', ['-l', join(dir, 'merged')]);
  await runQuietly('umount', ['-l', dir]);
  // Not recursive: with the tmpfs gone the folder is empty, and one still mounted is left as it is.
  await rmdir(dir).catch(() => undefined);
}

/** Ids of the sandboxes of `instance` with a view on the host. */
export async function listRootViews(instance: string): Promise<string[]> {
  const names = await readdir(VIEWS_DIR).catch(() => [] as string[]);
  const prefix = `${instance}-`;
  return names.filter((name) => name.startsWith(prefix)).map((name) => name.slice(prefix.length));
}
