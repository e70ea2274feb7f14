/**
 * A sandbox's view of its template (issue 14, issue 25), in a folder of its own on the host,
 * `/run/sdk/views/<instance>-<id>`, on a size-bounded tmpfs:
 *   - `merged`: an overlay whose lower layer is the template's image through an idmapped mount (`lower`,
 *     `sdk-exec idmap`): the image's files, which host root owns and every sandbox of the template
 *     shares, appear as the sandbox root's, so its root may change any of them (`apt-get install`,
 *     `/etc/hosts`) and a write copies the file up into the sandbox's own layer (`layer`); the image is
 *     never written. `/usr/local` is the sandbox user's in the view, as before.
 *   - `home`: a tmpfs of its own for `/home` (half the sandbox's memory), with `/home/user` the user's.
 *   - `agent`, `agent-config-home`: sandboxd's, read-only in the sandbox (the agent's configuration).
 *   - `box`, `daemon`: where the sandbox's root and sandboxd's are laid out (`sandbox-layout.ts`).
 * The folder is host root's and the sandbox root's group's only (0710): the sandbox's root reaches its
 * view to lay out its root, no other host account does. tmpfs pages are charged to the memory cgroup of
 * the process that writes them. Removed at destroy; the name carries the driver's instance, so a driver
 * lists and removes only its own.
 */
import { chmod, chown, mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { run, runQuietly } from './host-commands.js';

/** Where the views live. */
const VIEWS_DIR = '/run/sdk/views';

/** The folder the sandbox user owns in the view: where `make install` and `npm install -g` write. */
export const USER_OWNED = '/usr/local';

/** The folders of a sandbox's view on the host. */
export interface ViewPaths {
  readonly dir: string;
  /** The sandbox's own layer: the overlay's upper folder. */
  readonly layer: string;
  readonly merged: string;
  readonly home: string;
  readonly agent: string;
  readonly agentConfigHome: string;
  readonly boxRoot: string;
  readonly daemonRoot: string;
}

/** The folders of sandbox `id`'s view. */
export function viewPaths(instance: string, id: string): ViewPaths {
  const dir = join(VIEWS_DIR, `${instance}-${id}`);
  return {
    dir,
    layer: join(dir, 'layer'),
    merged: join(dir, 'merged'),
    home: join(dir, 'home'),
    agent: join(dir, 'agent'),
    agentConfigHome: join(dir, 'agent-config-home'),
    boxRoot: join(dir, 'box'),
    daemonRoot: join(dir, 'daemon'),
  };
}

/** Host ids of the sandbox's accounts and of sandboxd. */
export interface ViewOwners {
  readonly root: number;
  readonly user: number;
  readonly sandboxd: number;
}

/** What a view is made of. */
export interface ViewSpec {
  /** The template's image. */
  readonly image: string;
  /** `/proc/<pid>/ns/user` of the sandbox's user namespace: the idmapping of the image. */
  readonly userns: string;
  /** `sdk-exec` on the host. */
  readonly sdkExec: string;
  /** What the sandbox may write into its layer. */
  readonly layerBytes: number;
  /** Size of `/home`. */
  readonly homeBytes: number;
  readonly owners: ViewOwners;
  /**
   * Fills the sandbox's layer before the overlay is mounted, and its home once mounted (a snapshot's
   * files, `saved-files.ts`).
   */
  readonly fill?: (part: 'layer' | 'home', paths: ViewPaths) => Promise<void>;
}

/** Mounts the view of sandbox `id`; returns its folders. */
export async function mountRootView(instance: string, id: string, spec: ViewSpec): Promise<ViewPaths> {
  const paths = viewPaths(instance, id);
  const { dir } = paths;
  const { root, user, sandboxd } = spec.owners;
  await mkdir(VIEWS_DIR, { recursive: true, mode: 0o755 });
  await mkdir(dir, { mode: 0o710 });
  await run('mount', [
    '-t',
    'tmpfs',
    '-o',
    `size=${String(spec.layerBytes)},mode=0710`,
    `sdk-root-${id}`,
    dir,
  ]);
  await chown(dir, 0, root);
  for (const name of [
    'layer',
    'scratch',
    'lower',
    'merged',
    'home',
    'box',
    'daemon',
    'agent',
    'agent-config-home',
  ]) {
    await mkdir(join(dir, name), { mode: 0o755 });
  }
  // The overlay's root takes the upper layer's owner: the sandbox's root may make `/data`.
  await chown(paths.layer, root, root);
  await spec.fill?.('layer', paths);
  await run(spec.sdkExec, ['idmap', '--userns', spec.userns, '--', spec.image, join(dir, 'lower')]);
  await run('mount', [
    '-t',
    'overlay',
    '-o',
    `lowerdir=${join(dir, 'lower')},upperdir=${join(dir, 'layer')},workdir=${join(dir, 'scratch')}`,
    `sdk-overlay-${id}`,
    paths.merged,
  ]);
  // A snapshot's layer holds the folders as they were (the user's, unless its root changed them).
  if (spec.fill === undefined) await ownFolders(join(paths.merged, USER_OWNED), { uid: user, gid: user });
  await run('mount', [
    '-t',
    'tmpfs',
    '-o',
    `size=${String(spec.homeBytes)},mode=0755,uid=${String(root)},gid=${String(root)}`,
    `sdk-home-${id}`,
    paths.home,
  ]);
  if (spec.fill === undefined) {
    await mkdir(join(paths.home, 'user'), { mode: 0o750 });
    await chmod(join(paths.home, 'user'), 0o750);
    await chown(join(paths.home, 'user'), user, user);
  } else {
    await spec.fill('home', paths);
  }
  for (const shared of [paths.agent, paths.agentConfigHome]) await chown(shared, sandboxd, sandboxd);
  return paths;
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
  const { dir } = viewPaths(instance, id);
  // Lazily: a process that still has a mount open (a sandbox being torn down) does not keep it.
  await runQuietly('umount', ['--recursive', '--lazy', dir]);
  // Not recursive: with the tmpfs gone the folder is empty, and one still mounted is left as it is.
  await rmdir(dir).catch(() => undefined);
}

/** Ids of the sandboxes of `instance` with a view on the host. */
export async function listRootViews(instance: string): Promise<string[]> {
  const names = await readdir(VIEWS_DIR).catch(() => [] as string[]);
  const prefix = `${instance}-`;
  return names.filter((name) => name.startsWith(prefix)).map((name) => name.slice(prefix.length));
}
