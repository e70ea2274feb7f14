/**
 * The OCI runtime specification runsc starts a gVisor box from: the sandbox's copy-on-write view of its
 * template (`../namespace/root-view.ts`, the same as a namespace sandbox's) as its root, its `/home`,
 * gVisor's own memory-backed tmpfs for `/tmp`, `/run` and `/var/tmp`, sandboxd's runtime read-only at
 * `/opt/sdk` and the agent's configuration read-only; the sandbox's ids mapped to its host range, so the
 * files its root owns in the view are root's inside and the gVisor kernel runs as a host uid of the
 * sandbox's own; the box's network namespace (`box-network.ts`); `sdk-exec init` as pid 1. Like the
 * namespace driver's box there is no `/sys` and no cgroup file system.
 */
import { join } from 'node:path';
import { AGENT_CONFIG_DIR, AGENT_CONFIG_HOME } from '../../protocol/agent-wire.js';
import type { ViewPaths } from '../namespace/root-view.js';
import { SDK_DIR } from '../namespace/sandbox-layout.js';
import { BOX_RESOLV_CONF, GVISOR_EXEC } from './gvisor-exec-path.js';
import { MAPPED_IDS } from '../namespace/uid-ranges.js';

/** moby's default capabilities (oci/caps/defaults.go): the sandbox root's, as in a namespace sandbox. */
const MOBY_CAPABILITIES = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

/** Open files of every process in the box (soft and hard), as in a namespace sandbox. */
export const BOX_OPEN_FILES = 4096;

/** Size of the small tmpfs mounts (/run, /var/tmp). */
const SMALL_TMPFS_BYTES = 16 * 2 ** 20;

/** What the box is made of. */
export interface BoxSpecInput {
  readonly view: ViewPaths;
  /** sandboxd's runtime image (holds `sdk-exec` and `gvisor-exec`). */
  readonly sdkImage: string;
  /** `/run/netns/<name>` of the box's network namespace. */
  readonly netns: string;
  /** The host id of the sandbox's id 0. */
  readonly hostBase: number;
  readonly memoryBytes: number;
  /** Processes (tasks) each account of sandbox code may have: the box's RLIMIT_NPROC. */
  readonly maxPids: number;
}

/**
 * The host tasks a box whose sandbox has `maxPids` may have: the sandbox's pids cgroup limit with gVisor.
 * Sandbox code's processes are gVisor's, refused past `maxPids` an account inside the box (RLIMIT_NPROC,
 * which gVisor enforces on root too: it has no CAP_SYS_RESOURCE); on the host each costs about two tasks
 * of the platform's (a stub process and its thread, pooled for reuse), and the box kernel, its file
 * server and sandboxd some 40 together. At `maxPids` itself, 100 `sleep`s in a box of 64 took the host
 * count past it and the kernel, unable to start a thread, died with the sandbox. The cgroup stays the
 * host's last bound (root may fork as many other ids).
 */
export function boxHostTasks(maxPids: number): number {
  return 64 + 5 * maxPids;
}

type Mount = { destination: string; type: string; source: string; options?: string[] };

const tmpfs = (destination: string, bytes: number, mode: string): Mount => ({
  destination,
  type: 'tmpfs',
  source: 'tmpfs',
  options: ['nosuid', 'nodev', `mode=${mode}`, `size=${String(bytes)}`],
});

const bind = (source: string, destination: string, mode: 'ro' | 'rw'): Mount => ({
  destination,
  type: 'bind',
  source,
  options: ['rbind', 'nosuid', 'nodev', mode],
});

/** The box's `config.json`. */
export function boxSpec(input: BoxSpecInput): object {
  const { view, memoryBytes } = input;
  const mapping = [{ containerID: 0, hostID: input.hostBase, size: MAPPED_IDS }];
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: 0, gid: 0 },
      // pid 1 reaps and spawns every process of sandbox code as its account (`gvisor-exec/spawner.c`):
      // it holds moby's capabilities, which root's processes keep and the user's lose.
      args: [`${SDK_DIR}/${GVISOR_EXEC}`, 'init'],
      env: ['PATH=/usr/sbin:/usr/bin:/sbin:/bin'],
      cwd: '/',
      capabilities: {
        bounding: MOBY_CAPABILITIES,
        effective: MOBY_CAPABILITIES,
        inheritable: [],
        permitted: MOBY_CAPABILITIES,
        ambient: [],
      },
      rlimits: [
        { type: 'RLIMIT_NOFILE', hard: BOX_OPEN_FILES, soft: BOX_OPEN_FILES },
        { type: 'RLIMIT_NPROC', hard: input.maxPids, soft: input.maxPids },
      ],
    },
    root: { path: view.merged, readonly: false },
    hostname: 'sandbox',
    mounts: [
      { destination: '/proc', type: 'proc', source: 'proc' },
      { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'mode=755'] },
      { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec'] },
      tmpfs('/dev/shm', SMALL_TMPFS_BYTES, '1777'),
      // Files in tmpfs are memory of sandbox code: with /home (half) these leave it a quarter to run in.
      tmpfs('/tmp', Math.floor(memoryBytes / 4), '1777'),
      bind(view.home, '/home', 'rw'),
      tmpfs('/run', SMALL_TMPFS_BYTES, '755'),
      tmpfs('/var/tmp', SMALL_TMPFS_BYTES, '1777'),
      bind(input.sdkImage, SDK_DIR, 'ro'),
      bind(join(input.sdkImage, BOX_RESOLV_CONF.name), '/etc/resolv.conf', 'ro'),
      bind(view.agent, AGENT_CONFIG_DIR, 'ro'),
      bind(view.agentConfigHome, AGENT_CONFIG_HOME, 'ro'),
    ],
    linux: {
      namespaces: [
        { type: 'pid' },
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
        { type: 'user' },
        { type: 'network', path: input.netns },
      ],
      uidMappings: mapping,
      gidMappings: mapping,
    },
  };
}
