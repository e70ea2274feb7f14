/**
 * The embedded default driver: sandboxd in bubblewrap (pid, ipc, uts and mount namespaces, a curated
 * read-only root, tmpfs for every writable place) inside its own network namespace, in its own cgroups.
 * The sandbox outlives the process that launched it (so a restarted control plane adopts it); it ends
 * only with `destroy`, which kills through the cgroup and removes every resource.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { LaunchedSandbox, LaunchRequest, SandboxDriver } from '../sandbox-driver.js';
import { ensureBaseTemplates, readManifest, templateDir } from './base-template.js';
import {
  createSandboxCgroups,
  freeze,
  killAndRemoveCgroups,
  listSandboxCgroups,
  procsFiles,
  thaw,
} from './sandbox-cgroups.js';
import {
  createSandboxNetwork,
  listSandboxNamespaces,
  removeSandboxNetwork,
  sandboxAddressOf,
} from './sandbox-network.js';

/** sandboxd's port inside every sandbox. */
export const SANDBOXD_PORT = 4000;

/**
 * The package root (holding `dist/`, `node_modules/`, `package.json`), bound read-only at /opt/sdk:
 * the nearest folder above this module with a `package.json` (this runs from `dist/` and, in tests,
 * from the sources).
 */
const PACKAGE_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** Options of the namespace driver. */
export interface NamespaceDriverOptions {
  /** Where templates are built and cached. */
  readonly stateDir: string;
  /** How long sandboxd may take to answer after launch. */
  readonly startTimeoutMs?: number;
}

// Joins the cgroups, then becomes the sandbox: `sh -c SCRIPT sh <procs files...> -- <command...>`.
const JOIN_CGROUPS_THEN_EXEC = 'while [ "$1" != -- ]; do echo $$ > "$1"; shift; done; shift; exec "$@"';

function bubblewrapArgs(templateRoot: string): string[] {
  return [
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--new-session',
    '--ro-bind',
    '/usr',
    '/usr',
    '--tmpfs',
    '/usr/local',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    '--symlink',
    'usr/sbin',
    '/sbin',
    '--ro-bind',
    join(templateRoot, 'etc'),
    '/etc',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    '1777',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/home',
    '--tmpfs',
    '/run',
    '--dir',
    '/var',
    '--perms',
    '1777',
    '--tmpfs',
    '/var/tmp',
    '--ro-bind',
    join(PACKAGE_ROOT, 'dist'),
    '/opt/sdk/dist',
    '--ro-bind',
    join(PACKAGE_ROOT, 'node_modules'),
    '/opt/sdk/node_modules',
    '--ro-bind',
    join(PACKAGE_ROOT, 'package.json'),
    '/opt/sdk/package.json',
    '--cap-drop',
    'ALL',
    '--cap-add',
    'CAP_SETUID',
    '--cap-add',
    'CAP_SETGID',
    '--cap-add',
    'CAP_KILL',
    '--cap-add',
    'CAP_CHOWN',
    // The command's cwd is entered before the uid changes, so sandboxd must search the user's folders.
    '--cap-add',
    'CAP_DAC_READ_SEARCH',
    '--chdir',
    '/',
    '/usr/bin/node',
    '/opt/sdk/dist/daemon/main.js',
  ];
}

/** The namespace driver. */
export class NamespaceDriver implements SandboxDriver {
  readonly #options: NamespaceDriverOptions;

  constructor(options: NamespaceDriverOptions) {
    this.#options = options;
    ensureBaseTemplates(options.stateDir);
  }

  async launch(request: LaunchRequest): Promise<LaunchedSandbox> {
    const manifest = readManifest(this.#options.stateDir, request.template);
    if (manifest === undefined) throw new Error(`no template named ${request.template}`);
    try {
      const network = await createSandboxNetwork(request.id, request.allowInternetAccess);
      await createSandboxCgroups(request.id, request.memoryBytes, request.maxPids);
      const child = spawn(
        'sh',
        [
          '-c',
          JOIN_CGROUPS_THEN_EXEC,
          'sh',
          ...procsFiles(request.id),
          '--',
          'ip',
          'netns',
          'exec',
          network.namespace,
          'bwrap',
          ...bubblewrapArgs(templateDir(this.#options.stateDir, request.template)),
        ],
        { stdio: ['pipe', 'pipe', 'ignore'], detached: true },
      );
      child.stdin.end(
        JSON.stringify({
          token: request.accessToken,
          host: network.sandboxAddress,
          port: SANDBOXD_PORT,
          user: { uid: 1000, gid: 1000, home: '/home/user' },
          prepareHome: true,
          version: manifest.sandboxdVersion,
          ...(request.gatewayCa === undefined ? {} : { gatewayCa: request.gatewayCa }),
          ...(request.gatewayTimeouts === undefined ? {} : { gatewayTimeouts: request.gatewayTimeouts }),
        }),
      );
      const ready = once(createInterface({ input: child.stdout }), 'line');
      const exited = once(child, 'exit').then(() => {
        throw new Error('sandboxd exited during launch');
      });
      const timeout = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error('sandboxd did not start in time')),
          this.#options.startTimeoutMs ?? 10_000,
        ).unref(),
      );
      await Promise.race([ready, exited, timeout]);
      child.stdout.destroy();
      child.unref();
      return { id: request.id, daemonUrl: `http://${network.sandboxAddress}:${String(SANDBOXD_PORT)}` };
    } catch (error) {
      await this.destroy(request.id);
      throw error;
    }
  }

  pause(id: string): Promise<void> {
    return freeze(id);
  }

  resume(id: string): Promise<void> {
    return thaw(id);
  }

  async destroy(id: string): Promise<void> {
    await killAndRemoveCgroups(id);
    await removeSandboxNetwork(id);
  }

  async list(): Promise<string[]> {
    const ids = new Set([...(await listSandboxNamespaces()), ...(await listSandboxCgroups())]);
    return [...ids].sort();
  }

  async daemonUrl(id: string): Promise<string | undefined> {
    const address = await sandboxAddressOf(id);
    return address === undefined ? undefined : `http://${address}:${String(SANDBOXD_PORT)}`;
  }
}
