/**
 * A sandbox's user namespace, mapped to its host id range before anything runs in it: a holder process
 * (`unshare --user cat`) creates the namespace, the driver (host root) writes its uid and gid maps, the
 * sandbox's first process joins it with `nsenter --user=/proc/<holder>/ns/user`, and the holder then
 * ends; the namespace lives on with the sandbox's processes.
 *
 * The holder runs as sandboxd's host uid (`sandboxdId`), which makes that uid the namespace's owner:
 * sandboxd, outside the namespace, then holds every capability inside it (it enters the sandbox's
 * namespaces to start sandbox code) and nothing on the host, while no id inside maps to it. The kernel
 * charges per-user counts (inotify instances and watches, processes, user namespaces) of everything
 * inside to the owner as well, one level up: with host root as the owner, every sandbox would share
 * root's budget, so one sandbox could exhaust it for all the others and for the host.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOST_TOOLS_ENV } from './sandboxd-process.js';
import { MAPPED_IDS, sandboxdId, type UidRange } from './uid-ranges.js';

/** A mapped user namespace, held open until the sandbox has joined it. */
export interface HeldUserNamespace {
  /** `/proc/<holder>/ns/user`, for `nsenter --user=`. */
  readonly path: string;
  /** Ends the holder. */
  release(): void;
}

const ownNamespace = (): string => readlinkSync('/proc/self/ns/user');

/** Creates a user namespace mapping ids 0..65534 to `range`, owned by sandboxd's id. */
export async function holdUserNamespace(range: UidRange): Promise<HeldUserNamespace> {
  const owner = String(sandboxdId(range));
  const holder: ChildProcessWithoutNullStreams = spawn(
    'setpriv',
    [`--reuid=${owner}`, `--regid=${owner}`, '--clear-groups', 'unshare', '--user', 'cat'],
    { stdio: ['pipe', 'pipe', 'pipe'], env: HOST_TOOLS_ENV },
  );
  const release = (): void => {
    holder.stdin.destroy();
    if (holder.exitCode === null) holder.kill('SIGKILL');
  };
  try {
    const pid = holder.pid;
    if (pid === undefined) throw new Error('unshare did not start');
    const path = `/proc/${String(pid)}/ns/user`;
    const own = ownNamespace();
    for (let waited = 0; readlinkSync(path) === own; waited++) {
      if (holder.exitCode !== null || waited > 2_000) throw new Error('unshare --user did not start');
      await sleep(1);
    }
    const map = `0 ${String(range.hostBase)} ${String(MAPPED_IDS)}\n`;
    writeFileSync(`/proc/${String(pid)}/uid_map`, map);
    writeFileSync(`/proc/${String(pid)}/gid_map`, map);
    return { path, release };
  } catch (error) {
    release();
    throw error;
  }
}
