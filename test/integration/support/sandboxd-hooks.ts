/**
 * A local sandboxd for one integration test file: a fresh home the commands' user may write, the daemon
 * started on it before the file's tests and stopped, home removed, after them.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startSandboxd, type LocalSandboxd } from './sandboxd.js';

/** How the daemon is started. */
export interface SandboxdHookOptions {
  /** The daemon's own environment. */
  readonly env?: Record<string, string>;
  /**
   * The CA the daemon's gateways trust, read in `beforeAll`: a gateway world's PKI exists only once its
   * own `beforeAll` has run.
   */
  readonly gatewayCa?: () => string;
}

/** The file's daemon, usable from `beforeAll` on, and its home. */
export interface HookedSandboxd extends LocalSandboxd {
  /** The home of the commands' user (uid 1000), mode 0777 so that user may write it. */
  readonly home: string;
}

/**
 * Registers `beforeAll`/`afterAll` hooks starting and stopping the daemon. Call it after
 * `useGatewayWorld` when `gatewayCa` reads that world, so the world is built first and torn down last.
 */
export function useSandboxd(options: SandboxdHookOptions = {}): HookedSandboxd {
  let home = '';
  let daemon: LocalSandboxd | undefined;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sdk-home-'));
    chmodSync(home, 0o777);
    const settings = options.gatewayCa === undefined ? {} : { gatewayCa: options.gatewayCa() };
    daemon = await startSandboxd(home, options.env ?? {}, settings);
  });

  afterAll(async () => {
    await daemon?.stop();
    if (home !== '') rmSync(home, { recursive: true, force: true });
  });

  const need = (): LocalSandboxd => {
    if (daemon === undefined) throw new Error('sandboxd is not started');
    return daemon;
  };

  // Delegates, so a test file reads `daemon.url` as it would from `startSandboxd`.
  return {
    get home() {
      return home;
    },
    get url() {
      return need().url;
    },
    get token() {
      return need().token;
    },
    get pid() {
      return need().pid;
    },
    stderr: () => need().stderr(),
    running: () => need().running(),
    stop: () => need().stop(),
  };
}
