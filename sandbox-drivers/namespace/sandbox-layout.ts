/**
 * The two roots of a sandbox, as `sdk-exec` layout options (`sdk-exec/sdk-exec.c`):
 *   - the sandbox's: its view of the template (`root-view.ts`, writable by its root), size-bounded tmpfs
 *     for /tmp, /run and /var/tmp, the view's /home, sandboxd's runtime at /opt/sdk and the agent's
 *     configuration (sandboxd's, read-only here).
 *   - sandboxd's: the template's image itself, read-only (never the view, which the sandbox's root may
 *     change: a planted /etc/hosts must not steer the gateway), its runtime at /opt/sdk, the agents'
 *     runtime at /opt/agents (prefetch reads the same files the sandbox runs), the commands' memory
 *     cgroup, where it places every process of sandbox code, and the agent's configuration, writable.
 * Every mount is nosuid and nodev, but the sandbox's root, whose setuid files (sudo) are its root's own.
 */
import { AGENT_CONFIG_DIR, AGENT_CONFIG_HOME } from '../../protocol/agent-wire.js';
import { AGENTS_DIR } from './agent-template.js';
import type { ViewPaths } from './root-view.js';

/** Where sandboxd sees the memory cgroup of sandbox code (it places each command there). */
export const COMMAND_CGROUP_DIR = '/run/sdk/memory';

/** Where sandboxd's runtime is bound, in both roots. */
export const SDK_DIR = '/opt/sdk';

/** Size of the small tmpfs mounts (/run, /var/tmp, sandboxd's /tmp). */
const SMALL_TMPFS_BYTES = 16 * 2 ** 20;

const tmpfs = (path: string, bytes: number, mode: string): string[] => ['--tmpfs', path, String(bytes), mode];

/** The sandbox's root, laid out as its root on `view.boxRoot`. */
export function sandboxLayout(view: ViewPaths, sdkImage: string, memoryBytes: number): string[] {
  return [
    '--root',
    view.boxRoot,
    '--root-bind',
    view.merged,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // Files in tmpfs are memory of sandbox code: with /home (half) these leave it a quarter to run in.
    ...tmpfs('/tmp', Math.floor(memoryBytes / 4), '1777'),
    '--bind',
    view.home,
    '/home',
    ...tmpfs('/run', SMALL_TMPFS_BYTES, '0755'),
    ...tmpfs('/var/tmp', SMALL_TMPFS_BYTES, '1777'),
    '--ro-bind',
    sdkImage,
    SDK_DIR,
    '--ro-bind',
    view.agent,
    AGENT_CONFIG_DIR,
    '--ro-bind',
    view.agentConfigHome,
    AGENT_CONFIG_HOME,
  ];
}

/** sandboxd's root on `view.daemonRoot`. */
export function sandboxdLayout(
  view: ViewPaths,
  images: { readonly root: string; readonly sdk: string; readonly agents?: string | undefined },
  userMemoryCgroup: string,
): string[] {
  const symlinks = ['bin', 'lib', 'lib64', 'sbin'].flatMap((name) => [
    '--symlink',
    `usr/${name}`,
    `/${name}`,
  ]);
  return [
    '--root',
    view.daemonRoot,
    '--ro-bind',
    `${images.root}/usr`,
    '/usr',
    ...symlinks,
    '--ro-bind',
    `${images.root}/etc`,
    '/etc',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    ...tmpfs('/tmp', SMALL_TMPFS_BYTES, '1777'),
    '--ro-bind',
    images.sdk,
    SDK_DIR,
    ...(images.agents === undefined ? [] : ['--ro-bind', images.agents, AGENTS_DIR]),
    '--bind',
    userMemoryCgroup,
    COMMAND_CGROUP_DIR,
    '--bind',
    view.agent,
    AGENT_CONFIG_DIR,
    '--bind',
    view.agentConfigHome,
    AGENT_CONFIG_HOME,
  ];
}
