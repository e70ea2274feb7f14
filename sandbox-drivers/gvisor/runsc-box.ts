/**
 * A gVisor box's life on the host, through runsc (`runsc.ts`): started in the sandbox's cgroups (so the
 * gVisor kernel, its platform's stubs and its file server are bounded as sandbox code: memory, pids, CPU,
 * frozen by pause) and in the box's network namespace; ended by destroy. runsc keeps its state per driver
 * instance (`--root /run/sdk/gvisor/<instance>/state`), so one instance's runsc never sees another's
 * boxes; a box's container id is its sandbox id.
 *
 * sandboxd reaches the box only through runsc's control socket (urpc), which the driver links into a
 * folder of sandboxd's own, bound in sandboxd's root at `/run/sdk/box` (`BOX_CONTROL_DIR`): the socket
 * is sandboxd's (0600), and nothing in the box can reach it (it is a host file, outside every mount of
 * the box).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chown, chmod, link, mkdir, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { run, runQuietly } from '../namespace/host-commands.js';
import { HOST_TOOLS_ENV } from '../namespace/sandboxd-process.js';

/** Where runsc's state, the bundles and the control folders of a driver instance live. */
const GVISOR_DIR = '/run/sdk/gvisor';

/** Where sandboxd sees the box's control socket. */
export const BOX_CONTROL_DIR = '/run/sdk/box';
export const BOX_CONTROL_SOCKET = `${BOX_CONTROL_DIR}/control.sock`;

/** runsc's options for every box: the systrap platform (no KVM here), netstack, cgroups left to us. */
const RUNSC_FLAGS = [
  '--platform=systrap',
  '--network=sandbox',
  // The driver places runsc in the sandbox's cgroups itself (v1 and v2 side by side, as the namespace
  // driver's), and the box's processes follow.
  '--ignore-cgroups',
  // The view is the sandbox's copy-on-write layer already; gVisor writes through to it.
  '--overlay2=none',
  // The sandbox user's passwordless sudo, as in a namespace sandbox.
  '--allow-suid',
];

/** The host paths of a box. */
export interface BoxPaths {
  /** runsc's `--root`: the instance's. */
  readonly state: string;
  readonly bundle: string;
  /** The folder bound in sandboxd's root at `BOX_CONTROL_DIR`. */
  readonly control: string;
}

/** Ids of the boxes of driver `instance` that have a bundle on the host. */
export async function listBoxes(instance: string): Promise<string[]> {
  return readdir(join(GVISOR_DIR, instance, 'bundles')).catch(() => [] as string[]);
}

/** The paths of sandbox `id`'s box. */
export function boxPaths(instance: string, id: string): BoxPaths {
  const dir = join(GVISOR_DIR, instance);
  return { state: join(dir, 'state'), bundle: join(dir, 'bundles', id), control: join(dir, 'control', id) };
}

/** The runsc command line for `args` on the instance's state. */
export function runscArgs(paths: BoxPaths, args: readonly string[]): string[] {
  return [`--root=${paths.state}`, ...RUNSC_FLAGS, ...args];
}

/**
 * Makes the box's folders: its bundle (root's) and its control folder (sandboxd's, before sandboxd's
 * root binds it).
 */
export async function prepareBox(paths: BoxPaths, spec: object, sandboxdId: number): Promise<void> {
  // Made whole at once: the last destroy of the instance may be removing the folders above meanwhile.
  for (const dir of [paths.state, paths.bundle, paths.control])
    await mkdir(dir, { recursive: true, mode: 0o711 });
  await chmod(paths.bundle, 0o700);
  await writeFile(join(paths.bundle, 'config.json'), JSON.stringify(spec), { mode: 0o600 });
  await chmod(paths.control, 0o700);
  await chown(paths.control, sandboxdId, sandboxdId);
}

/**
 * The `oom_score_adj` of the box's stub processes on the host: Linux's, for sandbox code, as the
 * namespace driver gives its commands. Sandbox code's memory is all the box kernel's (one memory file),
 * so when it exhausts the sandbox's memory the host's OOM killer picks among the kernel, its file
 * server and the systrap platform's stubs (one per address space of sandbox code, the hog's mapping its
 * pages). With all at 0 it picked the kernel about as often as the hog's stub, ending the whole sandbox;
 * with the stubs at 1000 it picks a stub, and gVisor kills the processes of that address space, as Linux
 * kills the hog in a namespace sandbox. (Lowering the kernel's instead needs CAP_SYS_RESOURCE, which
 * hosts of this kind do not give root.) Set on the stubs there are when the box has started; every later
 * one is forked from the first (`globalPool.source` in gVisor's systrap) and inherits it.
 */
export const BOX_STUB_OOM_SCORE_ADJ = '1000';

/** Host pids of box kernel `kernelPid`'s children (every thread's): its stubs. */
export async function stubsOf(kernelPid: number): Promise<string[]> {
  const threads = await readdir(`/proc/${String(kernelPid)}/task`);
  const children = await Promise.all(
    threads.map((tid) => readFile(`/proc/${String(kernelPid)}/task/${tid}/children`, 'utf8').catch(() => '')),
  );
  return children
    .join(' ')
    .split(/\s+/)
    .filter((pid) => pid !== '');
}

/** Attempts, 20 ms apart, to find a restored box's first stub (its tasks make them as they run again). */
const STUB_ATTEMPTS = 100;

/**
 * Raises every stub of box kernel `kernelPid` to `BOX_STUB_OOM_SCORE_ADJ`. A started box has its first
 * stubs when runsc returns (its pid 1's); a restored one makes them as its tasks run again, so they are
 * waited for a moment; without any the kernel keeps Linux's choice (stubs and kernel alike at 0).
 */
async function raiseStubsOomScore(kernelPid: number): Promise<void> {
  let stubs = await stubsOf(kernelPid);
  for (let attempt = 1; stubs.length === 0 && attempt < STUB_ATTEMPTS; attempt++) {
    await sleep(20);
    stubs = await stubsOf(kernelPid);
  }
  // A stub gone meanwhile is gVisor's business; the source stub, forked first, stays.
  await Promise.all(
    stubs.map((pid) =>
      writeFile(`/proc/${pid}/oom_score_adj`, BOX_STUB_OOM_SCORE_ADJ).catch(() => undefined),
    ),
  );
}

/**
 * Starts the box from its bundle: runsc joins `cgroupProcs` first, then runs the container detached
 * (its init is the box's pid 1); resolves once it runs, with the host pid of its gVisor kernel. Then
 * raises its stubs' `oom_score_adj` (`BOX_STUB_OOM_SCORE_ADJ`) and links the control socket into
 * sandboxd's folder, sandboxd's alone.
 *
 * @throws Error with runsc's last words when the box could not start
 */
export async function startBox(
  runsc: string,
  paths: BoxPaths,
  id: string,
  cgroupProcs: readonly string[],
  sandboxdId: number,
  /** `runsc` arguments that start the box otherwise (`restoreArgs`: from a snapshot's memory). */
  start: readonly string[] = ['run', '--detach', `--bundle=${paths.bundle}`, id],
): Promise<number> {
  // `sh` joins the cgroups, then becomes runsc: everything runsc forks starts inside them.
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      'runsc=$1; shift; while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$runsc" "$@"',
      'sh',
      runsc,
      ...cgroupProcs,
      '--',
      ...runscArgs(paths, start),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: HOST_TOOLS_ENV },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const [code] = (await once(child, 'exit')) as [number | null];
  // The box holds runsc's stdio as its pid 1's (a restored box too): the driver stops reading.
  child.stderr.destroy();
  if (code !== 0)
    throw new Error(`runsc could not start the box: ${stderr.trim().split('\n').slice(-2).join(' | ')}`);
  const state = await readBoxState(paths, id);
  if (state === undefined) throw new Error('runsc left no state for the box');
  const { pid, socket } = state;
  await raiseStubsOomScore(pid);
  const linked = join(paths.control, 'control.sock');
  await link(socket, linked);
  await chown(linked, sandboxdId, sandboxdId);
  await chmod(linked, 0o600);
  return pid;
}

/**
 * What runsc's state says of box `id`: the host pid of its gVisor kernel and its control socket;
 * undefined when runsc has no such box.
 */
export async function readBoxState(
  paths: BoxPaths,
  id: string,
): Promise<{ readonly pid: number; readonly socket: string } | undefined> {
  const text = await readFile(stateFile(paths, id), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const { sandbox } = JSON.parse(text) as { sandbox?: { pid?: number; controlSocketPath?: string } };
  return sandbox?.pid === undefined || sandbox.controlSocketPath === undefined
    ? undefined
    : { pid: sandbox.pid, socket: sandbox.controlSocketPath };
}

const stateFile = (paths: BoxPaths, id: string): string => join(paths.state, `${id}_sandbox:${id}.state`);

/**
 * Ends the box and removes everything runsc and the driver kept of it; a no-op when nothing is left.
 * Its processes are the cgroups' (the driver kills them there first); runsc forgets the container.
 */
export async function removeBox(runsc: string | undefined, paths: BoxPaths, id: string): Promise<void> {
  if (runsc !== undefined) await runQuietly(runsc, runscArgs(paths, ['delete', '--force', id]));
  // What runsc could not remove (it was not built, or the box died mid-start) goes by name.
  for (const name of [`${id}_sandbox:${id}.state`, `${id}_sandbox:${id}.lock`, `runsc-${id}.sock`])
    await rm(join(paths.state, name), { force: true });
  await rm(paths.bundle, { recursive: true, force: true });
  await rm(paths.control, { recursive: true, force: true });
  // The instance's folders go with its last box (a launch makes them again, `prepareBox`), and the
  // empty network namespace runsc pins there for its file servers (a bind mount, `null-netns`).
  const left = await readdir(paths.state).catch(() => [] as string[]);
  if (left.some((name) => name.endsWith('.state'))) return;
  for (let mounts = 0; mounts < 8; mounts++) {
    if ((await run('umount', ['--lazy', join(paths.state, NULL_NETNS)]).catch(() => undefined)) === undefined)
      break;
  }
  await rm(join(paths.state, NULL_NETNS), { force: true });
  for (const dir of [
    join(paths.bundle, '..'),
    join(paths.control, '..'),
    paths.state,
    join(paths.state, '..'),
  ])
    await rmdir(dir).catch(() => undefined);
}

/** What runsc names the empty network namespace it pins under `--root` (runsc/specutils/namespace.go). */
const NULL_NETNS = 'null-netns';
