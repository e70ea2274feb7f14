/**
 * The embedded default driver: sandboxd in bubblewrap (user, pid, ipc, uts and mount namespaces, a
 * curated read-only root, size-bounded tmpfs for every writable place, a seccomp filter over every
 * process) inside its own network namespace, in its own cgroups. The user namespace maps the sandbox's
 * ids to a host range of its own (`uid-ranges.ts`). The sandbox outlives the process that launched it
 * (so a restarted control plane adopts it); it ends with `destroy`, which kills through the cgroup and
 * removes every resource, or when its sandboxd exits, which `onExit` reports.
 *
 * Every resource name carries the driver's instance id (`instance.ts`): a driver lists, adopts and
 * destroys only the sandboxes it created.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { LaunchedSandbox, LaunchRequest, SandboxDriver, TemplateManifest } from '../sandbox-driver.js';
import { ensureBaseTemplates, readManifest, templateDir } from './base-template.js';
import { ensureEtcImage, ensureSdkImage } from './runtime-image.js';
import { instanceIdOf } from './instance.js';
import {
  cgroupPaths,
  createSandboxCgroups,
  freeze,
  killAndRemoveCgroups,
  listSandboxCgroups,
  procsFiles,
  thaw,
  watchEmpty,
} from './sandbox-cgroups.js';
import {
  createSandboxNetwork,
  listSandboxNamespaces,
  networkNames,
  removeSandboxNetwork,
  sandboxAddressOf,
  type SandboxNetwork,
} from './sandbox-network.js';
import { sandboxSeccompProgram } from './seccomp/seccomp-bpf.js';
import { holdUserNamespace } from './user-namespace.js';
import { claimRange, claimsOf, releaseRange } from './uid-ranges.js';

/** sandboxd's port inside every sandbox. */
export const SANDBOXD_PORT = 4000;

/** Where a sandbox sees the memory cgroup of its commands (sandboxd moves each command there). */
export const COMMAND_CGROUP_DIR = '/run/sdk/memory';

/** Size of the small tmpfs mounts (/run, /var/tmp). */
const SMALL_TMPFS_BYTES = 16 * 2 ** 20;

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

/** The file descriptor numbers of the child: bwrap's options and the seccomp program. */
const FD = { args: 3, seccomp: 4 } as const;

/**
 * bubblewrap's options. They reach it on a file descriptor (`--args`), so no host path shows in the
 * sandbox's `/proc/1/cmdline`; read-only files come from the host's runtime image (`runtime-image.ts`).
 */
function bubblewrapArgs(
  images: { readonly etc: string; readonly sdk: string },
  userMemoryCgroup: string,
  memoryBytes: number,
): string[] {
  const tmpfs = (path: string, bytes: number, perms?: string): string[] => [
    ...(perms === undefined ? [] : ['--perms', perms]),
    '--size',
    String(bytes),
    '--tmpfs',
    path,
  ];
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
    images.etc,
    '/etc',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // Files in tmpfs are memory of sandbox code: together these leave it a quarter to run in.
    ...tmpfs('/tmp', Math.floor(memoryBytes / 4), '1777'),
    ...tmpfs('/home', Math.floor(memoryBytes / 2)),
    ...tmpfs('/run', SMALL_TMPFS_BYTES),
    '--bind',
    userMemoryCgroup,
    COMMAND_CGROUP_DIR,
    '--dir',
    '/var',
    ...tmpfs('/var/tmp', SMALL_TMPFS_BYTES, '1777'),
    '--ro-bind',
    images.sdk,
    '/opt/sdk',
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
    '--seccomp',
    String(FD.seccomp),
    '--chdir',
    '/',
  ];
}

/** The namespace driver. */
export class NamespaceDriver implements SandboxDriver {
  readonly #options: NamespaceDriverOptions;
  /** This driver's instance id, part of every resource name. */
  readonly instance: string;
  readonly #watches = new Map<string, () => void>();
  readonly #exitListeners = new Set<(id: string) => void>();
  readonly #destroying = new Map<string, Promise<void>>();

  readonly #sdkImage: string;
  /** Template name → its /etc image, found once per template manifest. */
  readonly #etcImages = new Map<string, { manifest: string; dir: string }>();

  constructor(options: NamespaceDriverOptions) {
    this.#options = options;
    ensureBaseTemplates(options.stateDir);
    this.instance = instanceIdOf(options.stateDir);
    this.#sdkImage = ensureSdkImage(PACKAGE_ROOT);
  }

  #etcImage(template: string): string {
    const manifest = JSON.stringify(readManifest(this.#options.stateDir, template));
    const known = this.#etcImages.get(template);
    if (known?.manifest === manifest) return known.dir;
    const dir = ensureEtcImage(join(templateDir(this.#options.stateDir, template), 'etc'));
    this.#etcImages.set(template, { manifest, dir });
    return dir;
  }

  /** The manifest of a template built under the state folder (the base templates are built at construction). */
  template(name: string): Promise<TemplateManifest | undefined> {
    return Promise.resolve(readManifest(this.#options.stateDir, name));
  }

  async launch(request: LaunchRequest): Promise<LaunchedSandbox> {
    const manifest = readManifest(this.#options.stateDir, request.template);
    if (manifest === undefined) throw new Error(`no template named ${request.template}`);
    const { id } = request;
    try {
      const range = claimRange(this.instance, id);
      // The user namespace's holder starts while the network and cgroups are made (it needs neither).
      const holding = holdUserNamespace(range);
      let network: SandboxNetwork;
      try {
        network = await createSandboxNetwork(this.instance, id, request.allowInternetAccess, {
          hostUid: range.hostBase,
          port: SANDBOXD_PORT,
        });
        await createSandboxCgroups(
          this.instance,
          id,
          { memoryBytes: request.memoryBytes, maxPids: request.maxPids, cpus: request.cpus },
          range.hostBase,
        );
      } catch (error) {
        void holding.then(
          (held) => held.release(),
          () => undefined,
        );
        throw error;
      }
      const userns = await holding;
      try {
        const child = spawn(
          'sh',
          [
            '-c',
            JOIN_CGROUPS_THEN_EXEC,
            'sh',
            ...procsFiles(this.instance, id),
            '--',
            'nsenter',
            `--net=/run/netns/${networkNames(this.instance, id).namespace}`,
            `--user=${userns.path}`,
            '--setuid',
            '0',
            '--setgid',
            '0',
            '--',
            'bwrap',
            '--args',
            String(FD.args),
            // The command stays on the command line (bwrap reads only options from --args): no host path.
            '/usr/bin/node',
            '/opt/sdk/dist/daemon/main.js',
          ],
          { stdio: ['pipe', 'pipe', 'ignore', 'pipe', 'pipe'], detached: true },
        );
        const args = bubblewrapArgs(
          { etc: this.#etcImage(request.template), sdk: this.#sdkImage },
          cgroupPaths(this.instance, id).userMemory,
          request.memoryBytes,
        );
        // stdin: sandboxd's settings; stdout: its ready line; 3: bwrap's arguments; 4: the seccomp program.
        const [stdin, stdout, , argsPipe, seccompPipe] = child.stdio as [
          Writable,
          Readable,
          null,
          Writable,
          Writable,
        ];
        for (const pipe of [stdin, argsPipe, seccompPipe]) pipe.on('error', () => undefined);
        argsPipe.end(Buffer.from(args.map((arg) => `${arg}\0`).join('')));
        seccompPipe.end(sandboxSeccompProgram());
        stdin.end(
          JSON.stringify({
            token: request.accessToken,
            ...(request.controlToken === undefined ? {} : { controlToken: request.controlToken }),
            host: network.sandboxAddress,
            port: SANDBOXD_PORT,
            user: { uid: 1000, gid: 1000, home: '/home/user' },
            prepareHome: true,
            commandCgroup: join(COMMAND_CGROUP_DIR, 'cgroup.procs'),
            version: manifest.sandboxdVersion,
            ...(request.gatewayCa === undefined ? {} : { gatewayCa: request.gatewayCa }),
            ...(request.gatewayTimeouts === undefined ? {} : { gatewayTimeouts: request.gatewayTimeouts }),
          }),
        );
        const ready = once(createInterface({ input: stdout }), 'line');
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
        stdout.destroy();
        child.unref();
      } finally {
        userns.release();
      }
      this.#watch(id);
      return { id, daemonUrl: `http://${network.sandboxAddress}:${String(SANDBOXD_PORT)}` };
    } catch (error) {
      await this.destroy(id);
      throw error;
    }
  }

  pause(id: string): Promise<void> {
    return freeze(this.instance, id);
  }

  resume(id: string): Promise<void> {
    return thaw(this.instance, id);
  }

  destroy(id: string): Promise<void> {
    // One destroy per sandbox at a time: a second caller (a deadline and a shutdown, say) waits for it.
    const running = this.#destroying.get(id);
    if (running !== undefined) return running;
    const destroying = (async () => {
      this.#watches.get(id)?.();
      this.#watches.delete(id);
      await killAndRemoveCgroups(this.instance, id);
      await removeSandboxNetwork(this.instance, id);
      releaseRange(this.instance, id);
    })().finally(() => this.#destroying.delete(id));
    this.#destroying.set(id, destroying);
    return destroying;
  }

  async list(): Promise<string[]> {
    const ids = new Set([
      ...(await listSandboxNamespaces(this.instance)),
      ...(await listSandboxCgroups(this.instance)),
      ...claimsOf(this.instance).keys(),
    ]);
    return [...ids].sort();
  }

  async daemonUrl(id: string): Promise<string | undefined> {
    const address = await sandboxAddressOf(this.instance, id);
    return address === undefined ? undefined : `http://${address}:${String(SANDBOXD_PORT)}`;
  }

  onExit(listener: (id: string) => void): () => void {
    this.#exitListeners.add(listener);
    return () => this.#exitListeners.delete(listener);
  }

  watch(id: string): void {
    this.#watch(id);
  }

  close(): void {
    for (const stop of this.#watches.values()) stop();
    this.#watches.clear();
    this.#exitListeners.clear();
  }

  /** Reports the sandbox once its last process has ended without `destroy` (sandboxd died). */
  #watch(id: string): void {
    if (this.#watches.has(id)) return;
    const stop = watchEmpty(this.instance, id, () => {
      this.#watches.delete(id);
      for (const listener of this.#exitListeners) listener(id);
    });
    this.#watches.set(id, stop);
  }
}
