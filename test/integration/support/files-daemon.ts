/**
 * A local sandboxd for the files API tests: a fresh root folder (0755) holding the user's home (0750,
 * owned by uid 1000, as in a sandbox), the daemon, and `Files` and `Commands` clients of it; with what
 * those tests look for (helper processes, typed error codes).
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { listHostProcesses } from '../../../daemon/process-space.js';
import { descendantsIn } from '../../../daemon/process-tree.js';
import { SandboxError } from '../../../rules/errors.js';
import { Commands } from '../../../sdk/commands.js';
import { DaemonClient } from '../../../sdk/daemon-client.js';
import { Files } from '../../../sdk/files.js';
import { startSandboxd, type LocalSandboxd } from './sandboxd.js';

/** A running files daemon and its clients. */
export interface FilesDaemon {
  readonly root: string;
  readonly home: string;
  readonly daemon: LocalSandboxd;
  readonly files: Files;
  readonly commands: Commands;
  /**
   * Pids of helper programs among this daemon's descendants (another file's daemon may run helpers of
   * its own beside it) whose command line has an argument starting with `marker` (the program: the
   * files helper, the watch) and every one of `args` (the operation, the path).
   */
  helpers(marker: string, ...args: string[]): number[];
  /** A fresh directory in the home, made by root and left the user's (as a user's program would see it). */
  freshDir(name: string): string;
  /** Stops the daemon and removes the root folder. */
  stop(): Promise<void>;
}

/** The first line of the files helper's program (`FILES_HELPER`), on its command line. */
export const FILES_HELPER_MARKER = '// sdk files helper';

/** The first line of the watch helper's program, on its command line. */
export const WATCH_HELPER_MARKER = '// sdk files watch';

/** The SandboxError code `promise` rejects with. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SandboxError);
  return (error as SandboxError).code;
}

/** Starts one, its root folder named after `prefix`. */
export async function startFilesDaemon(prefix: string): Promise<FilesDaemon> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('chmod', ['0755', root]);
  const home = join(root, 'home');
  execFileSync('mkdir', ['-m', '0750', home]);
  chownSync(home, 1000, 1000);
  const daemon = await startSandboxd(home);
  const client = new DaemonClient({ url: daemon.url, accessToken: daemon.token });
  return {
    root,
    home,
    daemon,
    files: new Files(client),
    commands: new Commands(client),
    helpers: (marker, ...args) =>
      [...descendantsIn(listHostProcesses(), daemon.pid).keys()].filter((pid) => {
        try {
          const argv = readFileSync(`/proc/${String(pid)}/cmdline`, 'utf8').split('\0');
          return argv.some((a) => a.startsWith(marker)) && args.every((a) => argv.includes(a));
        } catch {
          return false; // ended while we looked
        }
      }),
    freshDir: (name) => {
      const dir = join(home, name);
      mkdirSync(dir);
      chownSync(dir, 1000, 1000);
      return dir;
    },
    stop: async () => {
      await daemon.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
