/**
 * bubblewrap's options for a sandbox: user-visible layout (the sandbox's copy-on-write view of its
 * template's image, `root-view.ts`: its `/usr` writable where the sandbox user owns it, `/etc` and
 * `/var/lib` read-only, nothing of the host's; size-bounded tmpfs for every other writable place, the
 * commands' memory cgroup at /run/sdk/memory, sandboxd's runtime at /opt/sdk, the agents' runtime at
 * /opt/agents for agent templates, read-only), the namespaces bwrap makes inside the sandbox's user
 * namespace, the capabilities sandboxd keeps, and the seccomp program's descriptor.
 */
import { AGENTS_DIR } from './agent-template.js';
import { FD } from './sandboxd-process.js';

/** Where a sandbox sees the memory cgroup of its commands (sandboxd moves each command there). */
export const COMMAND_CGROUP_DIR = '/run/sdk/memory';

/** Size of the small tmpfs mounts (/run, /var/tmp). */
const SMALL_TMPFS_BYTES = 16 * 2 ** 20;

/**
 * bubblewrap's options. They reach it on a file descriptor (`--args`), so no host path shows in the
 * sandbox's `/proc/1/cmdline`; `images.root` is the sandbox's view of its template (`root-view.ts`),
 * `images.sdk` sandboxd's runtime (`runtime-image.ts`), `images.agents` the view's /opt/agents, when the
 * template has one.
 */
export function bubblewrapArgs(
  images: { readonly root: string; readonly sdk: string; readonly agents?: string | undefined },
  userMemoryCgroup: string,
  memoryBytes: number,
): string[] {
  const tmpfs = (path: string, bytes: number, perms?: string): string[] => [
    ...(perms === undefined ? [] : ['--perms', perms]),
    '--size',
    String(bytes),
    '--tmpfs',
    path,
  ];
  return [
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--new-session',
    // sandboxd starts with no environment but a PATH; it gives each command a clean one of its own.
    '--clearenv',
    '--setenv',
    'PATH',
    '/usr/bin:/bin',
    // Writable where the sandbox user owns it (/usr/local); writes land in the sandbox's own layer.
    '--bind',
    `${images.root}/usr`,
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/sbin',
    '/sbin',
    '--ro-bind',
    `${images.root}/etc`,
    '/etc',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // Files in tmpfs are memory of sandbox code: together these leave it a quarter to run in.
    ...tmpfs('/tmp', Math.floor(memoryBytes / 4), '1777'),
    ...tmpfs('/home', Math.floor(memoryBytes / 2)),
    ...tmpfs('/run', SMALL_TMPFS_BYTES),
    '--bind',
    userMemoryCgroup,
    COMMAND_CGROUP_DIR,
    '--dir',
    '/var',
    // The package database: `dpkg -l` says what the template holds.
    '--ro-bind',
    `${images.root}/var/lib`,
    '/var/lib',
    ...tmpfs('/var/tmp', SMALL_TMPFS_BYTES, '1777'),
    // bwrap would make the missing /opt of a bind target 0700 root, out of reach of uid 1000.
    '--dir',
    '/opt',
    '--ro-bind',
    images.sdk,
    '/opt/sdk',
    ...(images.agents === undefined ? [] : ['--ro-bind', images.agents, AGENTS_DIR]),
    '--cap-drop',
    'ALL',
    '--cap-add',
    'CAP_SETUID',
    '--cap-add',
    'CAP_SETGID',
    '--cap-add',
    'CAP_KILL',
    '--cap-add',
    'CAP_CHOWN',
    // The command's cwd is entered before the uid changes, so sandboxd must search the user's folders.
    '--cap-add',
    'CAP_DAC_READ_SEARCH',
    '--seccomp',
    String(FD.seccomp),
    '--chdir',
    '/',
  ];
}
