/**
 * How every process of sandbox code starts (commands, files helpers, tar, agent runtimes).
 *
 * Inside a sandbox sandboxd lives beside it (sandbox-drivers/namespace/sandboxd-process.ts): it starts
 * each process through `sdk-exec enter`, which moves itself into the commands' memory cgroup, raises its
 * OOM score and sets its open-files limit while still sandboxd's, enters every namespace of the sandbox's
 * pid 1 but the network one sandboxd shares, and runs the program there as the account asked for, in a
 * session of its own: `root` (the sandbox's, with moby's capabilities) or `user` (none), under the
 * sandbox's seccomp filter. The program's environment travels on a pipe and becomes its whole
 * environment at `execve`, so nothing the caller chose (an `LD_PRELOAD`) acts earlier; the status pipe
 * says the program's pid in the sandbox, the root of its tree in sandboxd's view, or why it could not
 * start (a working directory the account cannot enter, say).
 *
 * Outside a sandbox (sandboxd run on a host, its tests) the program is spawned directly with the user's
 * ids; there is no root account there.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { statSync } from 'node:fs';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { ACCOUNT_HOMES, type SandboxAccount } from '../protocol/sandbox-accounts.js';

/** The sandbox sandboxd starts processes in. */
export interface SandboxBox {
  /** The sandbox's pid 1, in sandboxd's pid namespace. */
  readonly pid: number;
  /** `sdk-exec` in sandboxd's root. */
  readonly exec: string;
  /** The seccomp program every process of sandbox code runs under. */
  readonly seccomp: Buffer;
}

/** The account commands run as, and where they run. */
export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
  readonly home: string;
  /**
   * The `cgroup.procs` file of the memory cgroup every process of sandbox code joins before it runs
   * (inside a sandbox: the cgroup whose memory runs out before sandboxd's does).
   */
  readonly cgroupProcs?: string;
  /** The sandbox, when sandboxd runs beside one; undefined on a host. */
  readonly box?: SandboxBox;
}

/**
 * Open files of every process of sandbox code inside a sandbox (RLIMIT_NOFILE, soft and hard: only root
 * may raise it, up to sandboxd's own hard limit). Where the host's hard limit is lower, that one stays.
 */
export const COMMAND_OPEN_FILES = 4096;

/** What to start. */
export interface SpawnSpec {
  /** A shell command line (`/bin/sh -c`). */
  readonly cmd: string;
  readonly envs: Readonly<Record<string, string>>;
  /** Its working directory; the account's home when undefined. */
  readonly cwd: string | undefined;
  /**
   * The sandbox account it runs as: `user` (uid 1000, the default) or `root` (the root of the sandbox's
   * own user namespace, moby's default capabilities). Root exists only inside a sandbox.
   */
  readonly account?: SandboxAccount | undefined;
}

/** A started process of sandbox code. */
export interface SandboxProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /**
   * Resolves once the program runs, with its pid as sandbox code sees it and the pid of its tree's root
   * for `killTree` (sandboxd's view); rejects with why it could not start.
   */
  readonly started: Promise<{ readonly pid: number; readonly tree: number }>;
}

/** The error a process of sandbox code could not start with. */
export class StartError extends Error {
  constructor(
    /** The errno code (`ENOENT`, `EACCES`). */
    readonly code: string,
    /** Where it failed: `cwd` for a working directory the account cannot enter. */
    readonly stage: string,
  ) {
    super(`the command could not start: ${stage === 'cwd' ? 'cwd ' : ''}${code}`);
    this.name = 'StartError';
  }
}

/** True when `account: 'root'` can be served: only inside a sandbox. */
export function rootAvailable(user: SandboxUser): boolean {
  return user.box !== undefined;
}

const ROOT = { uid: 0, gid: 0, home: ACCOUNT_HOMES.root, name: 'root' } as const;

const errnoName = (errno: number): string =>
  Object.entries(constants.errno).find(([, value]) => value === errno)?.[0] ?? `errno ${String(errno)}`;

/** The environment a process of sandbox code starts with: nothing of sandboxd's own. */
function baseEnvironment(name: string, home: string): Record<string, string> {
  return {
    HOME: home,
    USER: name,
    LOGNAME: name,
    SHELL: '/bin/sh',
    PATH:
      name === 'root'
        ? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
        : '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
  };
}

/**
 * Starts `spec.cmd` the way every process of sandbox code starts (see the top of this file). The caller
 * owns the child's stdin, stdout and stderr.
 *
 * @throws Error for `account: 'root'` outside a sandbox, or an environment value with a NUL byte
 */
export function spawnInSandbox(spec: SpawnSpec, user: SandboxUser): SandboxProcess {
  const account = spec.account === 'root' ? ROOT : { ...user, name: 'user' };
  const env = { ...baseEnvironment(account.name, account.home), ...spec.envs };
  if (Object.values(env).some((value) => value.includes('\0'))) {
    throw new Error('an environment value holds a NUL byte');
  }
  const box = user.box;
  if (box === undefined) {
    if (spec.account === 'root') throw new Error('root is offered only inside a sandbox');
    const child = spawn('/bin/sh', ['-c', spec.cmd], {
      uid: user.uid,
      gid: user.gid,
      cwd: spec.cwd ?? user.home,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const started = new Promise<{ pid: number; tree: number }>((resolve, reject) => {
      child.once('spawn', () => resolve({ pid: child.pid ?? 0, tree: child.pid ?? 0 }));
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(new StartError(error.code ?? 'EIO', 'spawn')),
      );
    });
    started.catch(() => undefined);
    return { child, started };
  }
  const child = spawn(
    box.exec,
    [
      'enter',
      '--target',
      String(box.pid),
      ...(user.cgroupProcs === undefined ? [] : ['--procs', user.cgroupProcs]),
      '--uid',
      String(account.uid),
      '--gid',
      String(account.gid),
      '--cwd',
      spec.cwd ?? account.home,
      '--nofile',
      String(COMMAND_OPEN_FILES),
      '--oom-score-adj',
      '1000',
      '--env-fd',
      '3',
      '--status-fd',
      '4',
      '--seccomp-fd',
      '5',
      '--',
      '/bin/sh',
      '-c',
      spec.cmd,
    ],
    { env: {}, stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'], detached: true },
  );
  const [, , , environment, status, seccomp] = child.stdio as unknown as [
    null,
    null,
    null,
    Writable,
    Readable,
    Writable,
  ];
  for (const pipe of [environment, seccomp]) pipe.on('error', () => undefined);
  environment.end(
    Object.entries(env)
      .map(([name, value]) => `${name}=${value}\0`)
      .join(''),
  );
  seccomp.end(box.seccomp);
  return { child, started: statusOf(child, status) };
}

/** Reads `sdk-exec enter`'s status lines until the pipe closes (the program runs) or it says why not. */
function statusOf(
  child: ChildProcessWithoutNullStreams,
  status: Readable,
): Promise<{ pid: number; tree: number }> {
  const started = new Promise<{ pid: number; tree: number }>((resolve, reject) => {
    let pid = 0;
    let tree = 0;
    let failure: StartError | undefined;
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(new StartError(error.code ?? 'EIO', 'spawn')),
    );
    const lines = createInterface({ input: status });
    lines.on('line', (line) => {
      const [word, value, errno] = line.split(' ');
      if (word === 'pid') pid = Number(value);
      else if (word === 'tree') tree = Number(value);
      else if (word === 'error') failure = new StartError(errnoName(Number(errno)), value ?? 'start');
    });
    lines.once('close', () => {
      if (failure !== undefined) reject(failure);
      else if (pid > 0 && tree > 0) resolve({ pid, tree });
      else reject(new StartError('EIO', 'start'));
    });
  });
  started.catch(() => undefined);
  return started;
}

/**
 * True when `dir` is a folder the sandbox user may enter, as sandbox code sees it (inside a sandbox its
 * paths are the sandbox's, not sandboxd's: a process is started there to find out).
 */
export async function canEnter(user: SandboxUser, dir: string): Promise<boolean> {
  if (user.box === undefined) {
    try {
      return statSync(dir).isDirectory();
    } catch {
      return false;
    }
  }
  const { child, started } = spawnInSandbox({ cmd: 'exit 0', envs: {}, cwd: dir }, user);
  child.stdin.end();
  child.stdout.resume();
  child.stderr.resume();
  return started.then(
    () => true,
    () => false,
  );
}

/** Starts `spec.cmd` as `spawnInSandbox` does, for callers that need only the child. */
export function spawnAsUser(spec: SpawnSpec, user: SandboxUser): ChildProcessWithoutNullStreams {
  return spawnInSandbox(spec, user).child;
}
