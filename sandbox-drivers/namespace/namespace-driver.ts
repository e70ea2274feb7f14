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
import type { AgentTemplateSpec, BuiltTemplate } from '../../protocol/template-api.js';
import { policyOfInternetAccess, type EgressPolicy } from '../../rules/egress-policy.js';
import {
  BOX_LINK,
  createBoxNetwork,
  removeBoxNetwork,
  boxNetworkNames,
  updateBoxEgress,
} from '../gvisor/box-network.js';
import { boxHostTasks, boxSpec } from '../gvisor/box-spec.js';
import { watchBox } from '../gvisor/box-watch.js';
import {
  BOX_CONTROL_DIR,
  BOX_CONTROL_SOCKET,
  boxPaths,
  listBoxes,
  prepareBox,
  removeBox,
  startBox,
} from '../gvisor/runsc-box.js';
import { GVISOR_EXEC } from '../gvisor/gvisor-exec-path.js';
import { ensureRunsc } from '../gvisor/runsc.js';
import { restoreArgs } from '../gvisor/box-checkpoint.js';
import { restoreFiles } from './saved-files.js';
import { snapshotSandbox } from './sandbox-snapshot.js';
import { readSnapshotManifest } from './snapshot-manifest.js';
import type {
  Isolation,
  LaunchedSandbox,
  SavedSnapshot,
  LaunchRequest,
  SandboxDriver,
  SandboxUsage,
  TemplateBuildOptions,
  TemplateManifest,
} from '../sandbox-driver.js';
import { AGENTS_DIR, AGENTS_TREE, agentsSource, prefetchFiles } from './agent-template.js';
import { buildAgentTemplate } from './agent-template-build.js';
import { ensureBaseTemplates, readManifest, recipeOf } from './base-template.js';
import { collectUnusedLayers, type BuildContext } from './image-layers.js';
import type { ImageRecipe } from './image-recipe.js';
import { ensureRootImage } from './image-root.js';
import { collectUnusedImages, ensureSdkImage, keepImage } from './runtime-image.js';
import { SANDBOXD_NODE } from './sandboxd-process.js';
import { instanceIdOf } from './instance.js';
import { sandboxUsage } from './sandbox-usage.js';
import {
  cgroupPaths,
  createSandboxCgroups,
  freeze,
  killAndRemoveCgroups,
  killSandboxProcesses,
  listSandboxCgroups,
  procsFiles,
  sandboxProcsFiles,
  thaw,
  watchEmpty,
} from './sandbox-cgroups.js';
import {
  addSandboxNamespace,
  createSandboxNetwork,
  listSandboxNamespaces,
  networkNames,
  removeSandboxNetwork,
  sandboxAddressOf,
  updateSandboxEgress,
  type SandboxNetwork,
} from './sandbox-network.js';
import { sandboxdSeccompProgram, sandboxSeccompProgram } from './seccomp/seccomp-bpf.js';
import { COMMAND_CGROUP_DIR, SDK_DIR, sandboxdLayout, sandboxLayout } from './sandbox-layout.js';
import { SDK_EXEC, SDK_EXEC_IN_ROOT, spawnSandbox, type StartingSandbox } from './sandboxd-process.js';
import { watchSandboxd } from './sandboxd-watch.js';
import { listRootViews, mountRootView, removeRootView, type ViewPaths } from './root-view.js';
import { holdUserNamespace } from './user-namespace.js';
import { claimRange, claimsOf, releaseRange, sandboxdId } from './uid-ranges.js';

/**
 * Waits for every one of `work`, then throws the first failure: no step is still running when a failed
 * launch cleans up.
 */
async function settleAll(work: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((result) => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** The sandbox user's ids inside every sandbox. */
const SANDBOX_USER = { uid: 1000, gid: 1000 } as const;

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

/** The agents' runtime of agent templates, as `npm run template:agent` builds it in the package. */
const DEFAULT_AGENTS_DIR = join(PACKAGE_ROOT, 'templates', 'sdk-agent', 'build', 'opt-agents');

/** What builds it (idempotent; a template build runs it when the folder is missing or out of date). */
const AGENTS_BUILD_SCRIPT = join(PACKAGE_ROOT, 'templates', 'sdk-agent', 'build.mjs');

/** Options of the namespace driver. */
export interface NamespaceDriverOptions {
  /** Where templates are built and cached. */
  readonly stateDir: string;
  /**
   * The agents' runtime agent templates place at /opt/agents: `templates/sdk-agent/build/opt-agents` of
   * the package by default, built by the package's script when missing. Another folder is taken as it
   * is (a template build fails at its step when it does not exist).
   */
  readonly agentsDir?: string;
  /** How long sandboxd may take to answer after launch. */
  readonly startTimeoutMs?: number;
  /**
   * The isolations it launches: `namespace` alone by default; with `gvisor`, runsc is built (once per
   * host, `../gvisor/runsc.ts`) by `prepare` or the first gVisor launch.
   */
  readonly isolations?: readonly Isolation[];
}

/** The namespace driver. */
export class NamespaceDriver implements SandboxDriver {
  readonly #options: NamespaceDriverOptions;
  readonly isolations: readonly Isolation[];
  /** runsc's path once built (gVisor launches wait for it). */
  #runsc: Promise<string> | undefined;
  /** This driver's instance id, part of every resource name. */
  readonly instance: string;
  readonly #watches = new Map<string, () => void>();
  readonly #exitListeners = new Set<(id: string) => void>();
  readonly #destroying = new Map<string, Promise<void>>();

  /** Recipe hash → its root image and the sandboxd image whose code cache its Node wrote. */
  readonly #images = new Map<string, Promise<{ readonly root: string; readonly sdk: string }>>();

  constructor(options: NamespaceDriverOptions) {
    this.#options = options;
    this.isolations = options.isolations ?? ['namespace'];
    ensureBaseTemplates(options.stateDir);
    this.instance = instanceIdOf(options.stateDir);
    collectUnusedImages();
    collectUnusedLayers();
  }

  /**
   * Builds the images of `templates` (the base templates' by default; `sdk-agent` too when asked) or
   * finds them built (layers are cached on the host), so no launch waits for them; `onStep` hears of
   * each step. Launches build what is missing too.
   *
   * @throws ImageBuildError naming the step that failed
   */
  async prepare(
    onStep?: BuildContext['onStep'],
    templates: readonly string[] = ['sdk-base-caps'],
  ): Promise<void> {
    for (const name of templates) {
      const manifest = readManifest(this.#options.stateDir, name);
      if (manifest !== undefined)
        await this.#imagesOf(recipeOf(manifest), onStep === undefined ? {} : { onStep });
    }
  }

  /**
   * Builds runsc (once per host, about 2 minutes on 2 cores; `../gvisor/runsc.ts`) or finds it built, so
   * no gVisor launch waits for it; `onStep` hears of the step. The first gVisor launch builds it too.
   *
   * @throws ImageBuildError naming the step that failed
   */
  async prepareGvisor(onStep?: BuildContext['onStep']): Promise<void> {
    await this.#runscPath(onStep === undefined ? {} : { onStep });
  }

  /** runsc, built once per host (a layer of the cache) and found once per driver. */
  #runscPath(context: BuildContext = {}): Promise<string> {
    if (this.#runsc === undefined) {
      this.#runsc = ensureRunsc(context);
      this.#runsc.catch(() => (this.#runsc = undefined)); // a later launch tries again
    }
    return this.#runsc;
  }

  /**
   * Builds the agent template `spec` describes (SPEC "Image tooling"): its image, then its manifest, so
   * a template is there whole or not at all. One of the same options already built is left as it is
   * unless `force`; one of other options is replaced only with `force`.
   *
   * @throws InvalidArgumentError when a template of that name has other options and `force` is false
   * @throws ImageBuildError naming the step that failed (or timed out)
   */
  buildTemplate(spec: AgentTemplateSpec, options: TemplateBuildOptions = {}): Promise<BuiltTemplate> {
    return buildAgentTemplate(this.#options.stateDir, spec, options, (recipe, context) =>
      this.#imagesOf(recipe, context, true),
    );
  }

  /**
   * The root image of `recipe` and sandboxd's image for it, built once per driver and again when the
   * host collected them (unused for an hour) or a build asks (`fresh`).
   */
  async #imagesOf(
    recipe: ImageRecipe,
    context: BuildContext & { readonly force?: boolean } = {},
    fresh = false,
  ): Promise<{ root: string; sdk: string }> {
    const key = JSON.stringify(recipe);
    const known = this.#images.get(key);
    if (known !== undefined && !fresh) {
      const images = await known.catch(() => undefined);
      if (images !== undefined && keepImage(images.root) && keepImage(images.sdk)) return images;
    }
    const building = (async () => {
      const agentsDir = this.#options.agentsDir ?? DEFAULT_AGENTS_DIR;
      const trees =
        recipe.trees?.some((tree) => tree.name === AGENTS_TREE) === true
          ? {
              [AGENTS_TREE]: await agentsSource(
                agentsDir,
                this.#options.agentsDir === undefined ? AGENTS_BUILD_SCRIPT : undefined,
                context,
              ),
            }
          : {};
      const { dir: root } = await ensureRootImage(recipe, context, trees);
      return { root, sdk: ensureSdkImage(PACKAGE_ROOT, join(root, SANDBOXD_NODE)) };
    })();
    this.#images.set(key, building);
    return building;
  }

  /** The manifest of a template built under the state folder (the base templates are built at construction). */
  template(name: string): Promise<TemplateManifest | undefined> {
    return Promise.resolve(readManifest(this.#options.stateDir, name));
  }

  async launch(request: LaunchRequest): Promise<LaunchedSandbox> {
    const manifest = readManifest(this.#options.stateDir, request.template);
    if (manifest === undefined) throw new Error(`no template named ${request.template}`);
    if (!this.isolations.includes(request.isolation))
      throw new Error(`this driver does not launch ${request.isolation} sandboxes`);
    const { id, memoryBytes } = request;
    const gvisor = request.isolation === 'gvisor';
    const egress = request.egress ?? policyOfInternetAccess(request.allowInternetAccess);
    const from = request.from === undefined ? undefined : await readSnapshotManifest(request.from);
    if (from?.kind === 'memory' && !gvisor) throw new Error('a memory snapshot starts only a gVisor sandbox');
    let viewing: Promise<ViewPaths> | undefined;
    try {
      const range = claimRange(this.instance, id);
      const owners = {
        root: range.hostBase,
        user: range.hostBase + SANDBOX_USER.uid,
        sandboxd: sandboxdId(range),
      };
      // The template's images, the user namespace's holder and then the sandbox's view are made while
      // the network's namespace and the cgroups are made (none needs another).
      const imaging = this.#imagesOf(recipeOf(manifest));
      const holding = holdUserNamespace(range);
      const runsc = gvisor ? this.#runscPath() : undefined;
      viewing = Promise.all([imaging, holding]).then(([images, userns]) =>
        mountRootView(this.instance, id, {
          image: images.root,
          userns: userns.path,
          sdkExec: join(images.sdk, SDK_EXEC),
          layerBytes: Math.floor(memoryBytes / 4),
          homeBytes: Math.floor(memoryBytes / 2),
          owners,
          ...(request.from === undefined || from === undefined
            ? {}
            : {
                fill: (part: 'layer' | 'home', view: ViewPaths) =>
                  restoreFiles(request.from ?? '', part, view, from.hostBase, range.hostBase),
              }),
        }),
      );
      // Observed below; marked now so a failure while other steps run is not an unhandled rejection.
      for (const step of [imaging, holding, viewing, runsc]) step?.catch(() => undefined);
      let networking: Promise<SandboxNetwork> | undefined;
      let sandbox: StartingSandbox | undefined;
      let boxing: Promise<number> | undefined;
      try {
        // Both chains enter the network namespace and join the cgroups: those first (a few ms). The
        // network's devices, addresses and tables are made while sandboxd's Node starts (some 45 ms they
        // overlap); sandboxd reads its settings, its listening address among them, only once the network
        // is whole, so nothing in the sandbox listens or runs before.
        await settleAll([
          addSandboxNamespace(this.instance, id),
          createSandboxCgroups(
            this.instance,
            id,
            {
              memoryBytes,
              maxPids: gvisor ? boxHostTasks(request.maxPids) : request.maxPids,
              cpus: request.cpus,
            },
            owners.sandboxd,
          ),
        ]);
        networking = createSandboxNetwork(this.instance, id, egress, {
          hostUid: owners.sandboxd,
          port: SANDBOXD_PORT,
        }).then(async (network) => {
          if (gvisor) await createBoxNetwork(this.instance, id, egress, SANDBOXD_PORT);
          return network;
        });
        networking.catch(() => undefined); // observed below
        const [userns, images, view] = await Promise.all([holding, imaging, viewing]);
        const agents = join(images.root, AGENTS_DIR);
        const seccomp = sandboxSeccompProgram();
        const paths = boxPaths(this.instance, id);
        if (gvisor) {
          const netns = `/run/netns/${boxNetworkNames(this.instance, id).namespace}`;
          const spec = boxSpec({
            view,
            sdkImage: images.sdk,
            netns,
            hostBase: range.hostBase,
            memoryBytes,
            maxPids: request.maxPids,
          });
          await prepareBox(paths, spec, owners.sandboxd);
        }
        sandbox = spawnSandbox({
          sdkExec: join(images.sdk, SDK_EXEC),
          netns: `/run/netns/${networkNames(this.instance, id).namespace}`,
          userns: userns.path,
          sandboxd: {
            cgroupProcs: procsFiles(this.instance, id),
            layout: [
              ...sandboxdLayout(
                view,
                { ...images, agents: existsSync(agents) ? agents : undefined },
                cgroupPaths(this.instance, id).userMemory,
              ),
              ...(gvisor ? ['--bind', paths.control, BOX_CONTROL_DIR] : []),
            ],
            id: owners.sandboxd,
            seccomp: sandboxdSeccompProgram(),
          },
          ...(gvisor
            ? {}
            : {
                sandbox: {
                  cgroupProcs: sandboxProcsFiles(this.instance, id),
                  layout: sandboxLayout(view, images.sdk, memoryBytes),
                  seccomp,
                },
              }),
        });
        // The gVisor box starts once its network is whole (netstack takes the interface as it finds it).
        boxing =
          runsc === undefined
            ? undefined
            : Promise.all([runsc, networking]).then(([path]) =>
                startBox(
                  path,
                  paths,
                  id,
                  sandboxProcsFiles(this.instance, id),
                  owners.sandboxd,
                  from?.kind === 'memory' && request.from !== undefined
                    ? restoreArgs(paths, id, request.from)
                    : undefined,
                ),
              );
        boxing?.catch(() => undefined); // observed below
        const [network, boxPid] = await Promise.all([networking, sandbox.placed, boxing]);
        await sandbox.ready(
          {
            token: request.accessToken,
            ...(request.controlToken === undefined ? {} : { controlToken: request.controlToken }),
            host: network.sandboxAddress,
            port: SANDBOXD_PORT,
            user: { ...SANDBOX_USER, home: '/home/user' },
            // A gVisor box's processes are no host processes: no host cgroup holds them one by one.
            ...(gvisor ? {} : { commandCgroup: join(COMMAND_CGROUP_DIR, 'cgroup.procs') }),
            box: gvisor
              ? {
                  kind: 'gvisor',
                  socket: BOX_CONTROL_SOCKET,
                  container: id,
                  exec: `${SDK_DIR}/${GVISOR_EXEC}`,
                  link: BOX_LINK.sandboxd,
                }
              : {
                  kind: 'namespace',
                  pid: boxPid,
                  exec: SDK_EXEC_IN_ROOT,
                  seccomp: seccomp.toString('base64'),
                },
            version: manifest.sandboxdVersion,
            prefetch: prefetchFiles(manifest),
            egress: { policy: egress, dnsServers: request.dnsServers ?? [] },
            ...(request.gatewayCa === undefined ? {} : { gatewayCa: request.gatewayCa }),
            ...(request.gatewayTimeouts === undefined ? {} : { gatewayTimeouts: request.gatewayTimeouts }),
            ...(from?.kind === 'memory' && request.carried !== undefined ? { carried: request.carried } : {}),
          },
          this.#options.startTimeoutMs ?? 10_000,
        );
        this.#watch(id, Promise.race([sandbox.exited, sandbox.sandboxExited]));
        return { id, daemonUrl: `http://${network.sandboxAddress}:${String(SANDBOXD_PORT)}` };
      } catch (error) {
        await sandbox?.abort();
        await networking?.catch(() => undefined); // a network still being made is removed with the rest
        await boxing?.catch(() => undefined); // and a box still starting
        throw error;
      } finally {
        // The chains have joined the user namespace (or are gone): its holder may end.
        void holding.then(
          (held) => held.release(),
          () => undefined,
        );
      }
    } catch (error) {
      await viewing?.catch(() => undefined); // a view still being mounted is removed with the rest
      await this.destroy(id);
      throw error;
    }
  }

  snapshot(id: string, dir: string): Promise<SavedSnapshot> {
    return snapshotSandbox(this.instance, id, dir, () => this.#runscPath());
  }

  async updateEgress(id: string, policy: EgressPolicy): Promise<void> {
    const address = await sandboxAddressOf(this.instance, id);
    const range = claimsOf(this.instance).get(id);
    if (address === undefined || range === undefined) throw new Error(`no sandbox ${id} on this host`);
    const daemon = { hostUid: sandboxdId(range), port: SANDBOXD_PORT };
    await updateSandboxEgress(this.instance, id, address, policy, daemon);
    if (existsSync(`/run/netns/${boxNetworkNames(this.instance, id).namespace}`)) {
      await updateBoxEgress(this.instance, id, policy, SANDBOXD_PORT);
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
      if (this.#hasBox(id)) {
        const runsc = await this.#runsc?.catch(() => undefined);
        await removeBox(runsc, boxPaths(this.instance, id), id);
        await removeBoxNetwork(this.instance, id);
      }
      await removeSandboxNetwork(this.instance, id);
      await removeRootView(this.instance, id);
      releaseRange(this.instance, id);
    })().finally(() => this.#destroying.delete(id));
    this.#destroying.set(id, destroying);
    return destroying;
  }

  /**
   * Whether sandbox `id` is, or was being made, a gVisor box: also for a driver that launches none (a
   * control plane restarted without gVisor adopts the boxes of its earlier run and must remove them).
   */
  #hasBox(id: string): boolean {
    return (
      this.isolations.includes('gvisor') ||
      existsSync(boxPaths(this.instance, id).bundle) ||
      existsSync(`/run/netns/${boxNetworkNames(this.instance, id).namespace}`)
    );
  }

  async list(): Promise<string[]> {
    const ids = new Set([
      ...(await listSandboxNamespaces(this.instance)),
      ...(await listSandboxCgroups(this.instance)),
      ...(await listRootViews(this.instance)),
      ...(await listBoxes(this.instance)),
      ...claimsOf(this.instance).keys(),
    ]);
    return [...ids].sort();
  }

  async usage(id: string): Promise<SandboxUsage | undefined> {
    return sandboxUsage(this.instance, id);
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

  /**
   * Reports the sandbox, once, when its sandboxd died without `destroy`: when sandboxd is seen dead
   * (`sandboxd-watch.ts`: the launch chain's exit, `exited`, for a sandbox this driver launched; its
   * process looked at every half second, all a driver that adopted the sandbox has), after killing
   * what else of the sandbox still runs (bubblewrap's pid 1 keeps the sandbox alive while any process
   * does); or when its last process has ended (the cgroup's `populated 0`). `destroy` and `close` stop
   * the watch first, so no destroy is reported as a death.
   */
  #watch(id: string, exited?: Promise<void>): void {
    if (this.#watches.has(id)) return;
    let stopped = false;
    let seen = false;
    // Both sources report asynchronously, never while they are being set up.
    let stopDaemon = (): void => undefined;
    let stopEmpty = (): void => undefined;
    let stopBox = (): void => undefined;
    const stopSources = (): void => {
      stopEmpty();
      stopDaemon();
      stopBox();
    };
    const stop = (): void => {
      stopped = true;
      stopSources();
    };
    const report = (): void => {
      if (stopped) return; // destroyed or closed meanwhile
      stopped = true;
      if (this.#watches.get(id) === stop) this.#watches.delete(id);
      for (const listener of this.#exitListeners) listener(id);
    };
    const ended = (kill: boolean): void => {
      if (seen || stopped) return;
      seen = true;
      stopSources();
      if (!kill) {
        report();
        return;
      }
      // sandboxd died: whatever sandbox code it left is killed before the end is reported.
      void killSandboxProcesses(this.instance, id).then(report, report);
    };
    stopDaemon = watchSandboxd(this.instance, id, exited, () => ended(true));
    stopEmpty = watchEmpty(this.instance, id, () => ended(false));
    // A gVisor box's kernel may die alone (its memory ran out): sandboxd then has no sandbox left.
    const paths = boxPaths(this.instance, id);
    if (existsSync(paths.bundle)) stopBox = watchBox(paths, id, () => ended(true));
    this.#watches.set(id, stop);
  }
}
