/**
 * Starts a sandbox: sandboxd in its place beside the sandbox, then the sandbox itself, both through
 * `sdk-exec` (`sdk-exec/README.md`), run as host root:
 *   1. `sdk-exec daemon`: joins the sandbox's cgroups and network namespace, makes a mount, pid, ipc and
 *      uts namespace of its own (pid namespace P), lays out sandboxd's root and runs sandboxd's Node as
 *      sandboxd's host uid, with no capability on the host. It reports P's pid 1.
 *   2. `sdk-exec box`: joins the commands' memory cgroup, the network namespace, P (so the sandbox's pid
 *      namespace is a child of sandboxd's, the only one sandboxd may enter) and the sandbox's user
 *      namespace as its root; makes the sandbox's mount, pid, ipc, uts and cgroup namespaces, lays out
 *      its root and runs `sdk-exec init` as its pid 1 under moby's capabilities and the seccomp filter.
 *      It reports that pid 1's pid in P: sandboxd starts every process of sandbox code in that process's
 *      namespaces (`sdk-exec enter`).
 * sandboxd's Node starts at once but reads its settings (stdin) only when `ready` sends them, so the
 * driver finishes the sandbox's network meanwhile: nothing listens or runs in the sandbox before.
 * `ready` resolves when sandboxd prints its ready line; both chains outlive the launcher (detached,
 * unreferenced).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { SANDBOXD_NODE_FLAGS } from '../../protocol/sandboxd-node.js';
import { SDK_DIR } from './sandbox-layout.js';

/** The Node that runs sandboxd: the template image's (`image-recipe.ts`), never the host's. */
export const SANDBOXD_NODE = '/usr/local/bin/node';

/**
 * sandboxd's entry in its runtime image, bound at /opt/sdk: `start.cjs` runs the bundle `sandboxd.cjs`
 * from the code cache the image's build wrote (daemon/build.mjs, `runtime-image.ts`).
 */
export const SANDBOXD_ENTRY = `${SDK_DIR}/start.cjs`;

/** `sdk-exec` in the runtime image, and where both roots see it. */
export const SDK_EXEC = 'sdk-exec';
export const SDK_EXEC_IN_ROOT = `${SDK_DIR}/${SDK_EXEC}`;

/** The whole environment of the launch chains: where the host tools are, nothing else. */
export const HOST_TOOLS_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/** The file descriptor numbers of a chain: its status lines and the seccomp program. */
const FD = { status: 3, seccomp: 4 } as const;

/** What the two chains need. */
export interface SandboxLaunch {
  /** `sdk-exec` on the host (the runtime image's). */
  readonly sdkExec: string;
  /** `/run/netns/<name>` of the sandbox's network namespace. */
  readonly netns: string;
  /** `/proc/<holder>/ns/user` of its mapped user namespace. */
  readonly userns: string;
  readonly sandboxd: {
    /** `cgroup.procs` files to join: the sandbox's own. */
    readonly cgroupProcs: readonly string[];
    /** `sdk-exec` layout options of its root (`sandbox-layout.ts`). */
    readonly layout: readonly string[];
    /** Its host uid and gid. */
    readonly id: number;
    /** Its compiled seccomp program. */
    readonly seccomp: Buffer;
  };
  /** The namespace box (`sdk-exec box`); absent for a box another engine starts (gVisor's). */
  readonly sandbox?: {
    /** `cgroup.procs` files to join: the commands' memory cgroup and the sandbox's others. */
    readonly cgroupProcs: readonly string[];
    readonly layout: readonly string[];
    /** The compiled seccomp program. */
    readonly seccomp: Buffer;
  };
}

/** A sandbox whose chains run, sandboxd's Node waiting for its settings. */
export interface StartingSandbox {
  /**
   * The sandbox's pid 1 as sandboxd sees it, once both chains have placed their processes (0 without a
   * namespace box: once sandboxd's is placed).
   */
  readonly placed: Promise<number>;
  /**
   * Sends sandboxd's settings (the access token included: on its stdin only) and waits for its ready
   * line.
   */
  ready(settings: unknown, timeoutMs: number): Promise<void>;
  /**
   * Ends both chains' first processes when the launch fails before `ready` (one that has not joined the
   * cgroups yet would escape the cgroup kill of `destroy`) and waits for their exit.
   */
  abort(): Promise<void>;
  /**
   * Settles when sandboxd's chain ends: its first process waits for P's pid 1, which ends with sandboxd
   * (and takes every process of P, the sandbox's included, with it). Heard by this process only, the
   * chain's parent (`sandboxd-watch.ts`).
   */
  readonly exited: Promise<void>;
  /**
   * Settles when the sandbox's chain ends: its pid 1 is gone, and with it all sandbox code (never without
   * a namespace box).
   */
  readonly sandboxExited: Promise<void>;
}

/** The first status line of a chain: `<word> <number>`, or why it failed. */
async function statusLine(child: ChildProcess, stream: Readable, word: string): Promise<number> {
  const lines = createInterface({ input: stream });
  const exited = once(child, 'exit').then(() => undefined);
  try {
    const line = await Promise.race([once(lines, 'line').then(([text]) => text as string), exited]);
    const [found, value, errno] = (line ?? '').split(' ');
    if (found === word && /^\d+$/.test(value ?? '')) return Number(value);
    if (found === 'error')
      throw new Error(`sandbox launch failed at ${String(value)} (errno ${String(errno)})`);
    throw new Error(`sandbox launch ended before its ${word} line`);
  } finally {
    lines.close();
  }
}

const exitOf = (child: ChildProcess): Promise<void> =>
  once(child, 'exit').then(
    () => undefined,
    () => undefined,
  );

/** Starts sandboxd's chain, then the sandbox's once sandboxd's pid namespace exists. */
export function spawnSandbox(launch: SandboxLaunch): StartingSandbox {
  const { sandboxd, sandbox } = launch;
  const daemon = spawn(
    launch.sdkExec,
    [
      'daemon',
      ...sandboxd.cgroupProcs.flatMap((file) => ['--procs', file]),
      '--netns',
      launch.netns,
      '--status-fd',
      String(FD.status),
      '--seccomp-fd',
      String(FD.seccomp),
      ...sandboxd.layout,
      '--uid',
      String(sandboxd.id),
      '--gid',
      String(sandboxd.id),
      '--',
      SANDBOXD_NODE,
      ...SANDBOXD_NODE_FLAGS,
      SANDBOXD_ENTRY,
    ],
    // Nothing of the launcher's environment (an operator key, cloud credentials) goes into the sandbox.
    { stdio: ['pipe', 'pipe', 'ignore', 'pipe', 'pipe'], detached: true, env: HOST_TOOLS_ENV },
  );
  // stdin: sandboxd's settings; stdout: its ready line; 3: the chain's status; 4: sandboxd's filter.
  const [stdin, stdout, , daemonStatus, daemonSeccomp] = daemon.stdio as unknown as [
    Writable,
    Readable,
    null,
    Readable,
    Writable,
  ];
  for (const pipe of [stdin, daemonSeccomp]) pipe.on('error', () => undefined);
  daemonSeccomp.end(sandboxd.seccomp);
  const exited = exitOf(daemon);
  const readyLine = once(createInterface({ input: stdout }), 'line');
  readyLine.catch(() => undefined); // observed in `ready`
  let box: ChildProcess | undefined;
  const placed = statusLine(daemon, daemonStatus, 'init').then((init) => {
    if (sandbox === undefined) return 0;
    box = spawn(
      launch.sdkExec,
      [
        'box',
        ...sandbox.cgroupProcs.flatMap((file) => ['--procs', file]),
        '--netns',
        launch.netns,
        '--pidns',
        `/proc/${String(init)}/ns/pid`,
        '--userns',
        launch.userns,
        '--status-fd',
        String(FD.status),
        '--seccomp-fd',
        String(FD.seccomp),
        '--hostname',
        'sandbox',
        ...sandbox.layout,
        '--',
        SDK_EXEC_IN_ROOT,
        'init',
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true, env: HOST_TOOLS_ENV },
    );
    const [, , , boxStatus, seccompPipe] = box.stdio as [null, null, null, Readable, Writable];
    seccompPipe.on('error', () => undefined);
    seccompPipe.end(sandbox.seccomp);
    box.unref();
    return statusLine(box, boxStatus, 'box');
  });
  placed.catch(() => undefined); // observed by the driver
  const sandboxExited = placed.then(
    () => (box === undefined ? new Promise<void>(() => undefined) : exitOf(box)),
    () => undefined,
  );
  const finish = (): void => {
    stdout.destroy();
    daemonStatus.destroy();
    daemon.unref();
  };
  return {
    placed,
    exited,
    sandboxExited,
    async ready(settings, timeoutMs) {
      stdin.end(JSON.stringify(settings));
      const ended = exited.then(() => {
        throw new Error('sandboxd exited during launch');
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('sandboxd did not start in time')), timeoutMs);
      });
      try {
        await Promise.race([readyLine, ended, timeout]);
      } finally {
        clearTimeout(timer);
        finish();
      }
    },
    async abort() {
      for (const child of [daemon, box]) {
        if (child !== undefined && child.exitCode === null && child.signalCode === null) {
          child.kill('SIGKILL');
          await exitOf(child);
        }
      }
      finish();
    },
  };
}
