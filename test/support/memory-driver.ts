/**
 * An in-memory `SandboxDriver` for unit tests of the control plane: no root, no processes, no network.
 *
 * A `MemoryHost` is the machine: the sandboxes that have resources on it, each owned by one driver
 * instance (as the namespace driver names every resource after its instance). A `MemoryDriver` is one
 * driver instance in one process; `restarted()` is the same instance in the next process (same host,
 * same sandboxes, no watches, no listeners). Tests read the state (`sandbox(id)`, `list()`, `calls`) and
 * change it behind the control plane's back: a sandboxd dies (`exit`), resources vanish (`vanish`), an
 * operation fails (`failNext`), launches wait (`holdLaunches`).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOXD_VERSION } from '../../protocol/versions.js';
import type { AgentTemplateSpec, BuiltTemplate } from '../../protocol/template-api.js';
import type {
  LaunchedSandbox,
  LaunchRequest,
  SandboxDriver,
  SandboxUsage,
  SavedSnapshot,
  TemplateBuildOptions,
  TemplateManifest,
} from '../../sandbox-drivers/sandbox-driver.js';
import { MemoryTemplateBuilds } from './memory-template-build.js';
import type { EgressPolicy } from '../../rules/egress-policy.js';

/** One sandbox with resources on a `MemoryHost`. */
export interface MemorySandbox {
  readonly id: string;
  /** The driver instance that created it. */
  readonly instance: string;
  readonly request: LaunchRequest;
  /** Every process frozen, memory kept. Tests may set it to change the box behind the driver's back. */
  frozen: boolean;
  /** The egress policy `updateEgress` last applied (its launch request's until then). */
  egress?: EgressPolicy;
  /** False once its sandboxd has died (`exit`); its resources stay until `destroy`. */
  daemonAlive: boolean;
  /** False while its launch has not finished (sandboxd not answering yet). */
  ready: boolean;
  /** What `usage` reports, where a test set it (the defaults elsewhere). */
  usage?: Partial<SandboxUsage>;
}

/** The operations of `SandboxDriver` that name a sandbox or can fail. */
export type DriverOperation =
  'template' | 'launch' | 'snapshot' | 'egress' | 'pause' | 'resume' | 'destroy' | 'list' | 'watch';

/** One call a control plane made on a driver. */
export interface DriverCall {
  readonly operation: DriverOperation;
  /** The sandbox id (the template name for `template`); absent for `list`. */
  readonly id?: string;
}

/** An operation a driver attempted on a sandbox another instance owns. */
export interface Trespass {
  readonly instance: string;
  readonly operation: DriverOperation;
  readonly id: string;
}

/** The base templates as the namespace driver has them. */
export const MEMORY_BASE_TEMPLATES: readonly TemplateManifest[] = [
  { name: 'sdk-base', sandboxdVersion: SANDBOXD_VERSION, canCloseEgress: false },
  { name: 'sdk-base-caps', sandboxdVersion: SANDBOXD_VERSION, canCloseEgress: true },
];

/** The machine the drivers share. */
export class MemoryHost {
  readonly #sandboxes = new Map<string, MemorySandbox>();
  readonly #drivers = new Set<MemoryDriver>();
  /** Operations on a sandbox of another instance; a driver that keeps the ownership rule leaves it empty. */
  readonly trespasses: Trespass[] = [];

  /** The sandbox with resources under `id`, of any instance. */
  sandbox(id: string): MemorySandbox | undefined {
    return this.#sandboxes.get(id);
  }

  /** Ids of every sandbox with resources, of every instance, sorted. */
  ids(): string[] {
    return [...this.#sandboxes.keys()].sort();
  }

  /** sandboxd of `id` dies (out of memory, killed from outside): drivers watching it report it. */
  exit(id: string): void {
    const sandbox = this.#sandboxes.get(id);
    if (sandbox === undefined) throw new Error(`no sandbox ${id} on the host`);
    sandbox.daemonAlive = false;
    for (const driver of this.#drivers) driver.daemonDied(id);
  }

  /** The resources of `id` disappear without a `destroy` (a host reboot, an operator's cleanup). */
  vanish(id: string): void {
    this.#sandboxes.delete(id);
  }

  /** @internal the drivers' side */
  add(sandbox: MemorySandbox): void {
    this.#sandboxes.set(sandbox.id, sandbox);
  }

  /** @internal */
  remove(id: string): void {
    this.#sandboxes.delete(id);
  }

  /** @internal */
  register(driver: MemoryDriver): void {
    this.#drivers.add(driver);
  }
}

/** Options of the memory driver. */
export interface MemoryDriverOptions {
  /** The machine; a new one by default. */
  readonly host?: MemoryHost;
  /** The instance id (one per state folder in the namespace driver); random by default. */
  readonly instance?: string;
  /** Templates this driver can launch; the two base templates by default. */
  readonly templates?: readonly TemplateManifest[];
}

/** An in-memory driver instance. */
export class MemoryDriver implements SandboxDriver {
  readonly isolations = ['namespace', 'gvisor'] as const;
  readonly host: MemoryHost;
  readonly instance: string;
  /** Every call made on this driver, in order. */
  readonly calls: DriverCall[] = [];
  readonly #templates: Map<string, TemplateManifest>;
  readonly #watched = new Set<string>();
  readonly #exitListeners = new Set<(id: string) => void>();
  readonly #failures: { readonly operation: DriverOperation; readonly id: string | undefined }[] = [];
  #launchGate: Promise<void> | undefined;

  constructor(options: MemoryDriverOptions = {}) {
    this.host = options.host ?? new MemoryHost();
    this.instance = options.instance ?? randomBytes(4).toString('hex');
    this.#templates = new Map((options.templates ?? MEMORY_BASE_TEMPLATES).map((t) => [t.name, t]));
    this.templateBuilds = new MemoryTemplateBuilds(this.#templates);
    this.host.register(this);
  }

  /** Template builds in memory; `templateBuilds.behaviour` makes them fail or take time. */
  readonly templateBuilds: MemoryTemplateBuilds;

  buildTemplate(spec: AgentTemplateSpec, options?: TemplateBuildOptions): Promise<BuiltTemplate> {
    return this.templateBuilds.build(spec, options);
  }

  /** The same instance in a new process: same host and sandboxes, nothing watched, no listeners. */
  restarted(): MemoryDriver {
    return new MemoryDriver({
      host: this.host,
      instance: this.instance,
      templates: [...this.#templates.values()],
    });
  }

  /** This instance's sandbox `id`, if it has resources. */
  sandbox(id: string): MemorySandbox | undefined {
    const sandbox = this.host.sandbox(id);
    return sandbox?.instance === this.instance ? sandbox : undefined;
  }

  /** Whether this driver reports the death of `id`'s sandboxd. */
  watching(id: string): boolean {
    return this.#watched.has(id);
  }

  /** Ids this driver was called with for `operation`, in order. */
  idsCalled(operation: DriverOperation): string[] {
    return this.calls.flatMap((call) =>
      call.operation === operation && call.id !== undefined ? [call.id] : [],
    );
  }

  /** The next call of `operation` (on `id`, when given) rejects, changing nothing. */
  failNext(operation: DriverOperation, id?: string): void {
    this.#failures.push({ operation, id });
  }

  /**
   * Launches from now on create their resources and then wait, sandboxd not answering, until the returned
   * function is called.
   */
  holdLaunches(): () => void {
    let release = (): void => undefined;
    this.#launchGate = new Promise((resolve) => {
      release = () => {
        this.#launchGate = undefined;
        resolve();
      };
    });
    return release;
  }

  /** sandboxd of `id` dies (`MemoryHost.exit`). */
  exit(id: string): void {
    this.host.exit(id);
  }

  /** The resources of `id` disappear without a `destroy` (`MemoryHost.vanish`). */
  vanish(id: string): void {
    this.host.vanish(id);
  }

  template(name: string): Promise<TemplateManifest | undefined> {
    return this.#call('template', name, () => this.#templates.get(name));
  }

  async launch(request: LaunchRequest): Promise<LaunchedSandbox> {
    const { id } = request;
    await this.#call('launch', id, () => {
      if (!this.#templates.has(request.template)) throw new Error(`no template named ${request.template}`);
      if (this.host.sandbox(id) !== undefined) throw new Error(`sandbox ${id} exists`);
      this.host.add({ id, instance: this.instance, request, frozen: false, daemonAlive: true, ready: false });
    });
    await this.#launchGate;
    const sandbox = this.sandbox(id);
    // Destroyed while it started (a restarted control plane cleaning up), or its sandboxd died meanwhile:
    // the launch fails and leaves nothing behind.
    if (sandbox === undefined || !sandbox.daemonAlive) {
      this.host.remove(id);
      throw new Error('sandboxd exited during launch');
    }
    sandbox.ready = true;
    this.#watched.add(id);
    return { id, daemonUrl: daemonUrlOf(id) };
  }

  /** Writes the sandbox's launch request as its snapshot (a memory one for a gVisor sandbox). */
  snapshot(id: string, dir: string): Promise<SavedSnapshot> {
    return this.#call('snapshot', id, () => {
      const { request } = this.#own(id, 'snapshot');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const text = JSON.stringify({ from: id, isolation: request.isolation });
      writeFileSync(join(dir, 'memory-snapshot.json'), text, { mode: 0o600 });
      return { kind: request.isolation === 'gvisor' ? 'memory' : 'filesystem', bytes: text.length };
    });
  }

  updateEgress(id: string, policy: EgressPolicy): Promise<void> {
    return this.#call('egress', id, () => {
      this.#own(id, 'egress').egress = policy;
    });
  }

  pause(id: string): Promise<void> {
    return this.#call('pause', id, () => {
      this.#own(id, 'pause').frozen = true;
    });
  }

  resume(id: string): Promise<void> {
    return this.#call('resume', id, () => {
      this.#own(id, 'resume').frozen = false;
    });
  }

  destroy(id: string): Promise<void> {
    return this.#call('destroy', id, () => {
      const sandbox = this.host.sandbox(id);
      if (sandbox === undefined) return; // nothing left: a no-op
      if (sandbox.instance !== this.instance) {
        this.host.trespasses.push({ instance: this.instance, operation: 'destroy', id });
        return;
      }
      this.#watched.delete(id);
      this.host.remove(id);
    });
  }

  list(): Promise<string[]> {
    return this.#call('list', undefined, () =>
      this.host.ids().filter((id) => this.host.sandbox(id)?.instance === this.instance),
    );
  }

  /**
   * A live sandbox uses a tenth of its memory and nothing else (no box to measure), unless a test set
   * its `usage`.
   */
  usage(id: string): Promise<SandboxUsage | undefined> {
    const sandbox = this.sandbox(id);
    if (sandbox === undefined) return Promise.resolve(undefined);
    const limitBytes = sandbox.request.memoryBytes;
    return Promise.resolve({
      cpuUsec: 0,
      memoryUsedBytes: Math.round(limitBytes / 10),
      memoryLimitBytes: limitBytes,
      diskUsedBytes: 0,
      diskLimitBytes: 2 ** 30,
      netRxBytes: 0,
      netTxBytes: 0,
      ...sandbox.usage,
    });
  }

  onExit(listener: (id: string) => void): () => void {
    this.#exitListeners.add(listener);
    return () => this.#exitListeners.delete(listener);
  }

  watch(id: string): void {
    this.calls.push({ operation: 'watch', id });
    const sandbox = this.#own(id, 'watch');
    this.#watched.add(id);
    // Like a cgroup that is already empty: reported at once, after the caller's turn.
    if (!sandbox.daemonAlive) queueMicrotask(() => this.daemonDied(id));
  }

  close(): void {
    this.#watched.clear();
    this.#exitListeners.clear();
  }

  /** @internal `MemoryHost.exit`: reports a watched sandbox once. */
  daemonDied(id: string): void {
    if (!this.#watched.delete(id)) return;
    for (const listener of this.#exitListeners) listener(id);
  }

  #own(id: string, operation: DriverOperation): MemorySandbox {
    const sandbox = this.host.sandbox(id);
    if (sandbox !== undefined && sandbox.instance !== this.instance) {
      this.host.trespasses.push({ instance: this.instance, operation, id });
    }
    if (sandbox?.instance !== this.instance) throw new Error(`no sandbox ${id}`);
    return sandbox;
  }

  /** Logs the call, then fails it when a failure is pending for it, else runs it. */
  #call<T>(operation: DriverOperation, id: string | undefined, run: () => T): Promise<T> {
    this.calls.push(id === undefined ? { operation } : { operation, id });
    const at = this.#failures.findIndex(
      (f) => f.operation === operation && (f.id === undefined || f.id === id),
    );
    if (at >= 0) {
      this.#failures.splice(at, 1);
      return Promise.reject(new Error(`injected ${operation} failure`));
    }
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

function daemonUrlOf(id: string): string {
  return `http://${id}.sandbox.invalid:4000`;
}
