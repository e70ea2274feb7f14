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
 * Beside a gVisor box (sandbox-drivers/gvisor/) sandbox code runs in gVisor's kernel: `gvisor-exec enter`
 * asks it, over runsc's control socket, to start the program with the same stdio, ids, capabilities and
 * environment; the status pipe says the same things, pids being the box's.
 *
 * Outside a sandbox (sandboxd run on a host, its tests) the program is spawned directly with the user's
 * ids; there is no root account there.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { ACCOUNT_HOMES, type SandboxAccount } from '../protocol/sandbox-accounts.js';
import { GvisorProcesses } from './gvisor-processes.js';
import { hostProcesses, type ProcessSpace } from './process-space.js';
import { killTree } from './process-tree.js';

/** A namespace sandbox, which sandboxd enters. */
export interface NamespaceBox {
  readonly kind: 'namespace';
  /** The sandbox's pid 1, in sandboxd's pid namespace. */
  readonly pid: number;
  /** `sdk-exec` in sandboxd's root. */
  readonly exec: string;
  /** The seccomp program every process of sandbox code runs under. */
  readonly seccomp: Buffer;
}

/** A gVisor box, which sandboxd reaches through runsc's control socket. */
export interface GvisorBox {
  readonly kind: 'gvisor';
  /** The control socket, in sandboxd's root. */
  readonly socket: string;
  /** The box's container id. */
  readonly container: string;
  /** `gvisor-exec` in sandboxd's root. */
  readonly exec: string;
  /** sandboxd's address on its link to the box (where the box's gateway relay connects). */
  readonly link: string;
}

/** The sandbox sandboxd starts processes in. */
export type SandboxBox = NamespaceBox | GvisorBox;

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
  /**
   * Makes the program its tree's subreaper: an orphan of the tree stays in it (an agent's runtime in a
   * gVisor box, whose tree no cgroup holds).
   */
  readonly subreaper?: boolean;
  /**
   * Beside a gVisor box: the program outlives its bridge with its stdin open, waiting for another to
   * attach (`attach`): a prepared agent runtime, which a copy restored from a snapshot takes over.
   */
  readonly hold?: boolean;
  /**
   * Beside a gVisor box: instead of starting `cmd`, takes over the stdio of the held program of this pid
   * whose bridge is gone (`hold`); refused (`ESRCH`) when none waits by that pid.
   */
  readonly attach?: number;
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
 * @throws Error for `account: 'root'` outside a sandbox, `attach` beside no gVisor box, or an environment
 *   value with a NUL byte
 */
export function spawnInSandbox(spec: SpawnSpec, user: SandboxUser): SandboxProcess {
  const account = spec.account === 'root' ? ROOT : { ...user, name: 'user' };
  const env = { ...baseEnvironment(account.name, account.home), ...spec.envs };
  if (Object.values(env).some((value) => value.includes('\0'))) {
    throw new Error('an environment value holds a NUL byte');
  }
  const box = user.box;
  if (spec.attach !== undefined && box?.kind !== 'gvisor')
    throw new Error('only a gVisor box holds programs');
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
  const child = spawn(box.exec, enterArgs(box, account, spec, user), {
    env: {},
    stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
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
  // A gVisor box's kernel is the boundary itself: its processes get no filter of ours.
  seccomp.end(box.kind === 'namespace' ? box.seccomp : undefined);
  const started = statusOf(child, status);
  trees.set(child, { started, space: processSpaceOf(user) });
  return { child, started };
}

/** The helper's arguments: the environment on fd 3, its status on fd 4, the seccomp program on fd 5. */
function enterArgs(
  box: SandboxBox,
  account: { readonly uid: number; readonly gid: number; readonly home: string; readonly name: string },
  spec: SpawnSpec,
  user: SandboxUser,
): string[] {
  const program = ['--', '/bin/sh', '-c', spec.cmd];
  const common = [
    '--uid',
    String(account.uid),
    '--gid',
    String(account.gid),
    '--cwd',
    spec.cwd ?? account.home,
  ];
  const io = ['--env-fd', '3', '--status-fd', '4'];
  if (box.kind === 'gvisor') {
    const target = ['enter', '--socket', box.socket, '--container', box.container];
    if (spec.attach !== undefined) return [...target, '--attach', String(spec.attach), ...io];
    return [
      ...target,
      ...common,
      '--caps',
      account.name === 'root' ? 'root' : 'none',
      ...(spec.subreaper === true ? ['--subreaper', '1'] : []),
      ...(spec.hold === true ? ['--hold', '1'] : []),
      ...io,
      ...program,
    ];
  }
  return [
    'enter',
    '--target',
    String(box.pid),
    ...(user.cgroupProcs === undefined ? [] : ['--procs', user.cgroupProcs]),
    ...common,
    '--nofile',
    String(COMMAND_OPEN_FILES),
    '--oom-score-adj',
    '1000',
    ...io,
    '--seccomp-fd',
    '5',
    ...program,
  ];
}

/** Where each started process's tree is found, for `killProcessTree`. */
const trees = new WeakMap<
  ChildProcess,
  { readonly started: Promise<{ readonly tree: number }>; readonly space: ProcessSpace }
>();

/** The processes of sandbox code as sandboxd reaches them (`process-space.ts`). */
export function processSpaceOf(user: SandboxUser): ProcessSpace {
  const box = user.box;
  return box?.kind === 'gvisor' ? gvisorSpaces(box) : hostProcesses;
}

const spaces = new Map<string, ProcessSpace>();
function gvisorSpaces(box: GvisorBox): ProcessSpace {
  const key = `${box.socket}\0${box.container}`;
  let space = spaces.get(key);
  if (space === undefined) {
    space = new GvisorProcesses(box.socket, box.container);
    spaces.set(key, space);
  }
  return space;
}

/**
 * Ends a process `spawnInSandbox` started and everything under it (SIGKILL `graceMs` after SIGTERM),
 * in the sandbox's process space: the helper that started it is not the program beside a gVisor box.
 */
export async function killProcessTree(child: ChildProcess, graceMs = 0): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const entry = trees.get(child);
  if (entry === undefined || entry.space === hostProcesses) {
    await killTree(child.pid, graceMs);
    return;
  }
  const started = await entry.started.catch(() => undefined);
  if (started !== undefined) await killTree(started.tree, graceMs, entry.space);
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

/** Starts `spec.cmd` as `spawnInSandbox` does, for callers that need only the child. */
export function spawnAsUser(spec: SpawnSpec, user: SandboxUser): ChildProcessWithoutNullStreams {
  return spawnInSandbox(spec, user).child;
}
