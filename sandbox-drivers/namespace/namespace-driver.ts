/**
 * The embedded default driver: sandboxd in bubblewrap (user, pid, ipc, uts and mount namespaces, the
 * template's image read-only as its root (`image-root.ts`), size-bounded tmpfs for every writable
 * place, a seccomp filter over every process) inside its own network namespace, in its own cgroups. The user namespace maps the sandbox's
 * ids to a host range of its own (`uid-ranges.ts`). The sandbox outlives the process that launched it
 * (so a restarted control plane adopts it); it ends with `destroy`, which kills through the cgroup and
 * removes every resource, or when its sandboxd exits, which `onExit` reports.
 *
 * Every resource name carries the driver's instance id (`instance.ts`): a driver lists, adopts and
 * destroys only the sandboxes it created.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_TEMPLATE } from '../../rules/names.js';
import type {
  LaunchedSandbox,
  LaunchRequest,
  SandboxDriver,
  SandboxMemory,
  TemplateManifest,
} from '../sandbox-driver.js';
import { ensureBaseTemplates, readManifest, recipeOf } from './base-template.js';
import type { StepListener } from './image-layers.js';
import type { ImageRecipe } from './image-recipe.js';
import { ensureRootImage } from './image-root.js';
import { collectUnusedImages, ensureAgentsImage, ensureSdkImage, keepImage } from './runtime-image.js';
import { SANDBOXD_NODE } from './sandboxd-process.js';
import { instanceIdOf } from './instance.js';
import {
  cgroupPaths,
  sandboxMemory,
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
import { bubblewrapArgs, COMMAND_CGROUP_DIR } from './bubblewrap-options.js';
import { startSandboxd } from './sandboxd-process.js';
import { holdUserNamespace } from './user-namespace.js';
import { claimRange, claimsOf, releaseRange } from './uid-ranges.js';

/** sandboxd's port inside every sandbox. */
export const SANDBOXD_PORT = 4000;

/**
 * The package root (holding `dist/`, `package.json`, `templates/`), whose sandboxd bundle
 * (`dist/sandboxd/`) is bound read-only at /opt/sdk through an image: the nearest folder above this
 * module with a `package.json` (this runs from `dist/` and, in tests, from the sources).
 */
const PACKAGE_ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

/** The agents' runtime of template `sdk-agent`, as `npm run template:agent` builds it in the package. */
const DEFAULT_AGENTS_DIR = join(PACKAGE_ROOT, 'templates', 'sdk-agent', 'build', 'opt-agents');

/** Options of the namespace driver. */
export interface NamespaceDriverOptions {
  /** Where templates are built and cached. */
  readonly stateDir: string;
  /**
   * The folder bound read-only at /opt/agents in sandboxes of template `sdk-agent` (through an image:
   * `runtime-image.ts`); `templates/sdk-agent/build/opt-agents` of the package by default. When it does
   * not exist such sandboxes are created without /opt/agents (an agent then ends `runtime_missing`).
   */
  readonly agentsDir?: string;
  /** How long sandboxd may take to answer after launch. */
  readonly startTimeoutMs?: number;
}

/** The namespace driver. */
export class NamespaceDriver implements SandboxDriver {
  readonly #options: NamespaceDriverOptions;
  /** This driver's instance id, part of every resource name. */
  readonly instance: string;
  readonly #watches = new Map<string, () => void>();
  readonly #exitListeners = new Set<(id: string) => void>();
  readonly #destroying = new Map<string, Promise<void>>();

  /** Recipe hash → its root image and the sandboxd image whose code cache its Node wrote. */
  readonly #images = new Map<string, Promise<{ readonly root: string; readonly sdk: string }>>();

  constructor(options: NamespaceDriverOptions) {
    this.#options = options;
    ensureBaseTemplates(options.stateDir);
    this.instance = instanceIdOf(options.stateDir);
    collectUnusedImages();
  }

  /**
   * Builds the base templates' images (or finds them built: layers are cached on the host) so the first
   * launch does not wait for them; `onStep` hears of each build step. Launches build what is missing too.
   *
   * @throws ImageBuildError naming the step that failed
   */
  async prepare(onStep?: StepListener): Promise<void> {
    const manifest = readManifest(this.#options.stateDir, AGENT_TEMPLATE);
    if (manifest !== undefined) await this.#imagesOf(recipeOf(manifest), onStep);
  }

  /**
   * The root image of `recipe` and sandboxd's image for it, built once per driver and again when the
   * host collected them (unused for an hour).
   */
  async #imagesOf(recipe: ImageRecipe, onStep?: StepListener): Promise<{ root: string; sdk: string }> {
    const key = JSON.stringify(recipe);
    const known = this.#images.get(key);
    if (known !== undefined) {
      const images = await known.catch(() => undefined);
      if (images !== undefined && keepImage(images.root) && keepImage(images.sdk)) return images;
    }
    const building = (async () => {
      const { dir: root } = await ensureRootImage(recipe, onStep);
      return { root, sdk: ensureSdkImage(PACKAGE_ROOT, join(root, SANDBOXD_NODE)) };
    })();
    this.#images.set(key, building);
    return building;
  }

  /** The manifest of a template built under the state folder (the base templates are built at construction). */
  template(name: string): Promise<TemplateManifest | undefined> {
    return Promise.resolve(readManifest(this.#options.stateDir, name));
  }

  /** The agents' runtime image for a sandbox of `template`, if it is `sdk-agent` and the folder exists. */
  #agentsImage(template: string): string | undefined {
    if (template !== AGENT_TEMPLATE) return undefined;
    const dir = this.#options.agentsDir ?? DEFAULT_AGENTS_DIR;
    return existsSync(dir) ? ensureAgentsImage(dir) : undefined;
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
        const images = await this.#imagesOf(recipeOf(manifest));
        await startSandboxd({
          cgroupProcs: procsFiles(this.instance, id),
          netns: `/run/netns/${networkNames(this.instance, id).namespace}`,
          userns: userns.path,
          bwrapOptions: bubblewrapArgs(
            { ...images, agents: this.#agentsImage(request.template) },
            cgroupPaths(this.instance, id).userMemory,
            request.memoryBytes,
          ),
          seccomp: sandboxSeccompProgram(),
          settings: {
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
          },
          timeoutMs: this.#options.startTimeoutMs ?? 10_000,
        });
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

  async memory(id: string): Promise<SandboxMemory | undefined> {
    return sandboxMemory(this.instance, id);
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
