/**
 * A local sandboxd for the files API tests: a fresh root folder (0755) holding the user's home (0750,
 * owned by uid 1000, as in a sandbox), the daemon, and `Files` and `Commands` clients of it.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  /** Stops the daemon and removes the root folder. */
  stop(): Promise<void>;
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
    stop: async () => {
      await daemon.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
