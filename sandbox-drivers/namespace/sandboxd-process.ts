/**
 * Starts a sandbox's first process, sandboxd, through the chain that makes it a sandbox: join the
 * sandbox's cgroups (`sh`), enter its network and user namespaces as its root (`nsenter`), then
 * bubblewrap with its options and seccomp program on descriptors. sandboxd's Node starts at once but
 * reads its settings (stdin) only when `ready` sends them, so the driver finishes the sandbox's network
 * meanwhile: nothing listens or runs in the sandbox before. `ready` resolves when sandboxd prints its
 * ready line; the process outlives the launcher (detached, unreferenced).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { SANDBOXD_NODE_FLAGS } from '../../protocol/sandboxd-node.js';

// Joins the cgroups, then becomes the sandbox: `sh -c SCRIPT sh <procs files...> -- <command...>`.
const JOIN_CGROUPS_THEN_EXEC = 'while [ "$1" != -- ]; do echo $$ > "$1"; shift; done; shift; exec "$@"';

/** The Node that runs sandboxd: the template image's (`image-recipe.ts`), never the host's. */
export const SANDBOXD_NODE = '/usr/local/bin/node';

/**
 * sandboxd's entry in its runtime image, bound at /opt/sdk: `start.cjs` runs the bundle `sandboxd.cjs`
 * from the code cache the image's build wrote (daemon/build.mjs, `runtime-image.ts`).
 */
export const SANDBOXD_ENTRY = '/opt/sdk/start.cjs';

/** The whole environment of the launch chain: where the host tools are, nothing else. */
export const HOST_TOOLS_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/** The file descriptor numbers of the child: bwrap's options and the seccomp program. */
export const FD = { args: 3, seccomp: 4 } as const;

/** What the chain needs. */
export interface SandboxdLaunch {
  /** `cgroup.procs` files to join, in order. */
  readonly cgroupProcs: readonly string[];
  /** `/run/netns/<name>` of the sandbox's network namespace. */
  readonly netns: string;
  /** `/proc/<holder>/ns/user` of its mapped user namespace. */
  readonly userns: string;
  /** bubblewrap's options (read from a descriptor, so no host path is on any command line). */
  readonly bwrapOptions: readonly string[];
  /** The compiled seccomp program. */
  readonly seccomp: Buffer;
}

/** A sandboxd whose chain runs and whose Node starts, waiting for its settings. */
export interface StartingSandboxd {
  /**
   * Sends sandboxd's settings (the access token included: on its stdin only) and waits for its ready
   * line.
   */
  ready(settings: unknown, timeoutMs: number): Promise<void>;
  /**
   * Ends the chain's process when the launch fails before `ready` (one that has not joined the cgroups
   * yet would escape the cgroup kill of `destroy`) and waits for its exit.
   */
  abort(): Promise<void>;
  /**
   * Settles when the chain's process ends. Once sandboxd runs, that process is bubblewrap's monitor,
   * which ends as soon as sandboxd does, whatever else still runs in the sandbox (bwrap's pid 1 reports
   * its pid 2's exit over an eventfd and the monitor exits with it; bubblewrap.c, `do_init`,
   * `monitor_child`). Heard by this process only, the chain's parent (`sandboxd-watch.ts`).
   */
  readonly exited: Promise<void>;
}

/** Starts sandboxd's chain; its Node waits for the settings `ready` sends. */
export function spawnSandboxd(launch: SandboxdLaunch): StartingSandboxd {
  const child = spawn(
    'sh',
    [
      '-c',
      JOIN_CGROUPS_THEN_EXEC,
      'sh',
      ...launch.cgroupProcs,
      '--',
      'nsenter',
      `--net=${launch.netns}`,
      `--user=${launch.userns}`,
      '--setuid',
      '0',
      '--setgid',
      '0',
      '--',
      'bwrap',
      '--args',
      String(FD.args),
      // The command stays on the command line (bwrap reads only options from --args): no host path.
      SANDBOXD_NODE,
      ...SANDBOXD_NODE_FLAGS,
      SANDBOXD_ENTRY,
    ],
    // Nothing of the launcher's environment (an operator key, cloud credentials) goes into the sandbox.
    { stdio: ['pipe', 'pipe', 'ignore', 'pipe', 'pipe'], detached: true, env: HOST_TOOLS_ENV },
  );
  // stdin: sandboxd's settings; stdout: its ready line; 3: bwrap's options; 4: the seccomp program.
  const [stdin, stdout, , optionsPipe, seccompPipe] = child.stdio as [
    Writable,
    Readable,
    null,
    Writable,
    Writable,
  ];
  for (const pipe of [stdin, optionsPipe, seccompPipe]) pipe.on('error', () => undefined);
  optionsPipe.end(Buffer.from(launch.bwrapOptions.map((option) => `${option}\0`).join('')));
  seccompPipe.end(launch.seccomp);
  // Listened to from the start: an exit before `ready` is an exit during launch too.
  const exit = once(child, 'exit');
  exit.catch(() => undefined); // a spawn error: observed in `ready`
  const readyLine = once(createInterface({ input: stdout }), 'line');
  readyLine.catch(() => undefined); // observed in `ready`
  const finish = (): void => {
    stdout.destroy();
    child.unref();
  };
  return {
    exited: exit.then(
      () => undefined,
      () => undefined,
    ),
    async ready(settings, timeoutMs) {
      stdin.end(JSON.stringify(settings));
      const exited = exit.then(() => {
        throw new Error('sandboxd exited during launch');
      });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('sandboxd did not start in time')), timeoutMs);
      });
      try {
        await Promise.race([readyLine, exited, timeout]);
      } finally {
        clearTimeout(timer);
        finish();
      }
    },
    async abort() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exit.catch(() => undefined);
      }
      finish();
    },
  };
}
