/**
 * Launches: a sandbox is journaled as launching before the driver starts it, so a crash mid-launch leaks
 * nothing (the next start destroys what no `created` record claims). The warm pool keeps sandboxes
 * launched ahead of demand for the base templates, so `create` only has to hand one over.
 */
import { randomBytes } from 'node:crypto';
import type { SnapshotCarry } from '../protocol/snapshot-carry.js';
import { isPlainEgress, type EgressPolicy } from '../rules/egress-policy.js';
import { InvalidArgumentError, SandboxError } from '../rules/errors.js';
import { defaultCpus, defaultMemoryMb } from '../rules/limits.js';
import type { Isolation, LaunchRequest, SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import type { SandboxJournal } from './journal-records.js';
import { controlTokenFor } from './operator-key.js';
import { WarmPool, type LaunchedSandboxd, type LaunchSpec } from './warm-pool.js';

/**
 * The launch specs the warm pool keeps ready: each base template with its usual egress, default limits,
 * in the control plane's default isolation.
 */
const warmSpecs = (isolation: Isolation): LaunchSpec[] => [
  { isolation, template: 'sdk-base-caps', allowInternetAccess: false, memoryMb: 512, maxPids: 512, cpus: 1 },
  { isolation, template: 'sdk-base', allowInternetAccess: true, memoryMb: 512, maxPids: 512, cpus: 1 },
];

/** A launch as a create asks for it: memory and CPUs default to the template's. */
export type LaunchRequestSpec = Omit<LaunchSpec, 'memoryMb' | 'cpus'> & {
  readonly memoryMb?: number | undefined;
  readonly cpus?: number | undefined;
  /** A snapshot's folder to start from (never from the warm pool). */
  readonly from?: string | undefined;
  /** What the snapshot's sandboxd left its copies (a memory snapshot's). */
  readonly carried?: SnapshotCarry | undefined;
  /** Its egress policy; `allowInternetAccess`'s open or closed when absent. */
  readonly egress?: EgressPolicy | undefined;
};

/** A launched sandbox, and what it was launched with. */
export type ObtainedSandbox = LaunchedSandboxd & { readonly spec: LaunchSpec };

/** What the launcher works with. */
export interface LauncherOptions {
  readonly journal: SandboxJournal;
  /** The launches in flight (the registry's): an id is added once its `launching` record is durable. */
  readonly launching: Set<string>;
  readonly driver: SandboxDriver;
  /** Derives each sandbox's credential for its daemon (event stream, agent reads, abort). */
  readonly controlKey: string;
  /** Sandboxes kept ready per warm spec (0: launch on demand only). */
  readonly warmPool: number;
  readonly gatewayCa: string | undefined;
  readonly gatewayTimeouts: LaunchRequest['gatewayTimeouts'];
  /** The isolation of the warm pool's sandboxes: the control plane's default. */
  readonly defaultIsolation: Isolation;
  /** DNS servers sandboxd's resolver asks (`address[:port]`). */
  readonly dnsServers: readonly string[];
}

/**
 * Launches sandboxes, from the warm pool when it has one of the spec.
 *
 * @example
 * ```ts
 * const launcher = new Launcher({ journal, launching, driver, controlKey, warmPool: 2, ... });
 * launcher.fill();
 * const { id, accessToken, daemonUrl } = await launcher.obtain(spec);
 * ```
 */
export class Launcher {
  readonly #journal: SandboxJournal;
  readonly #launching: Set<string>;
  readonly #driver: SandboxDriver;
  readonly #controlKey: string;
  readonly #gatewayCa: string | undefined;
  readonly #gatewayTimeouts: LaunchRequest['gatewayTimeouts'];
  readonly #pool: WarmPool;
  readonly #dnsServers: readonly string[];
  #closed = false;

  constructor(options: LauncherOptions) {
    this.#journal = options.journal;
    this.#launching = options.launching;
    this.#driver = options.driver;
    this.#controlKey = options.controlKey;
    this.#gatewayCa = options.gatewayCa;
    this.#gatewayTimeouts = options.gatewayTimeouts;
    this.#dnsServers = options.dnsServers;
    this.#pool = new WarmPool(options.warmPool, warmSpecs(options.defaultIsolation), (spec) =>
      this.#launch(spec),
    );
  }

  /** Sandboxes of the warm pool ready to hand over. */
  get warmReady(): number {
    return this.#pool.readyCount;
  }

  /** Starts filling the warm pool, in the background. */
  fill(): void {
    this.#pool.fill();
  }

  /**
   * A launched sandbox for `spec`, its template checked with the driver first: from the warm pool, or
   * launched now. Its id stays in `launching` until the caller journals it as created.
   *
   * @throws InvalidArgumentError `template`: no such template, or one that cannot close egress
   * @throws SandboxError `sandbox_error` when the launch failed
   */
  async obtain(request: LaunchRequestSpec): Promise<ObtainedSandbox> {
    if (!this.#driver.isolations.includes(request.isolation)) {
      throw new InvalidArgumentError(
        `isolation: this control plane offers ${this.#driver.isolations.join(' and ')}, not ${request.isolation}`,
        { field: 'isolation' },
      );
    }
    const manifest = await this.#driver.template(request.template);
    if (manifest === undefined) {
      throw new InvalidArgumentError(`template: no template named ${request.template}`, {
        field: 'template',
      });
    }
    const mode = request.egress?.mode ?? (request.allowInternetAccess ? 'open' : 'closed');
    if (mode === 'closed' && !manifest.canCloseEgress) {
      throw new InvalidArgumentError(
        `template: ${request.template} cannot close egress; use sdk-base-caps with allowInternetAccess: false`,
        { field: 'template' },
      );
    }
    // The template's own defaults (an agent template's memory), else the SDK's for its name.
    const { from, carried, egress, ...rest } = request;
    const spec: LaunchSpec = {
      ...rest,
      memoryMb: request.memoryMb ?? manifest.memoryMb ?? defaultMemoryMb(request.template),
      cpus: request.cpus ?? manifest.cpus ?? defaultCpus(request.template),
    };
    // The pool's sandboxes have their spec's plain egress (open or closed): a policy is launched for.
    const plain = egress === undefined || isPlainEgress(egress);
    const launched =
      (from === undefined && plain ? this.#pool.take(spec) : undefined) ??
      (await this.#launch(spec, { from, carried, egress }));
    return { ...launched, spec };
  }

  /** A sandboxd died: when its sandbox was in the pool, it is dropped, destroyed and journaled as failed. */
  async discard(id: string): Promise<void> {
    if (!this.#pool.discard(id)) return;
    await this.#driver.destroy(id).catch(() => undefined);
    if (this.#closed) return;
    await this.#journal.append({ kind: 'launch_failed', id }).catch(() => undefined);
    this.#launching.delete(id);
  }

  /** Stops launching into the pool; a launch that ends meanwhile fails (see `#launch`). */
  close(): void {
    this.#closed = true;
    this.#pool.stop();
  }

  /** Launches a sandbox (journaled as launching first, so a crash mid-launch leaks nothing). */
  async #launch(
    spec: LaunchSpec,
    { from, carried, egress }: Pick<LaunchRequestSpec, 'from' | 'carried' | 'egress'> = {},
  ): Promise<LaunchedSandboxd> {
    const id = randomBytes(6).toString('hex');
    const accessToken = randomBytes(32).toString('base64url');
    await this.#journal.append({ kind: 'launching', id });
    this.#launching.add(id);
    try {
      const { daemonUrl } = await this.#driver.launch({
        id,
        isolation: spec.isolation,
        template: spec.template,
        allowInternetAccess: spec.allowInternetAccess,
        memoryBytes: spec.memoryMb * 2 ** 20,
        maxPids: spec.maxPids,
        cpus: spec.cpus,
        accessToken,
        controlToken: controlTokenFor(this.#controlKey, id),
        ...(this.#gatewayCa === undefined ? {} : { gatewayCa: this.#gatewayCa }),
        ...(this.#gatewayTimeouts === undefined ? {} : { gatewayTimeouts: this.#gatewayTimeouts }),
        ...(from === undefined ? {} : { from }),
        ...(carried === undefined ? {} : { carried }),
        ...(egress === undefined ? {} : { egress }),
        ...(this.#dnsServers.length === 0 ? {} : { dnsServers: this.#dnsServers }),
      });
      // Stopped meanwhile: the journal is closed, so the sandbox stays `launching` for the next start.
      if (this.#closed) throw new Error('the control plane stopped during the launch');
      return { id, accessToken, daemonUrl };
    } catch {
      if (!this.#closed) {
        await this.#journal.append({ kind: 'launch_failed', id }).catch(() => undefined);
        this.#launching.delete(id);
      }
      throw new SandboxError('the sandbox could not be launched', { code: 'sandbox_error' });
    }
  }
}
