/**
 * SPEC `prepare` in sandboxd: which runtime is warmed up and with what. The runtime's binary is read
 * into the page cache; a runtime whose driver starts ahead (runtime_a) is started for the next run with
 * the request `prepare` names, or the one written last, once no execution runs, and held in the
 * `StandbySlot` (`runtime-standby.ts`) until a run that fits adopts it. A copy restored from a memory
 * snapshot adopts the one its original held (`adopt`).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { StartExecution } from '../protocol/agent-wire.js';
import type { CarriedStandby } from '../protocol/snapshot-carry.js';
import { runtimeDriver } from '../runtime-drivers/registry.js';
import type { RunFacts } from '../runtime-drivers/runtime-driver.js';
import type { AgentConfigs, StoredConfig } from './agent-configs.js';
import { ExecutionTree } from './execution-tree.js';
import type { ManagedProcess } from './managed-process.js';
import { RequestError } from './request-error.js';
import { attachRuntime, launchRuntime, type RuntimePlan } from './runtime-launch.js';
import { Prefetch, StandbySlot } from './runtime-standby.js';
import { processSpaceOf, type SandboxUser } from './sandbox-spawn.js';

/** What warming up needs of the agent host. */
export interface RuntimeWarmupOptions {
  readonly user: SandboxUser;
  readonly configs: AgentConfigs;
  /** Where executions' cgroups go (none: no warm-up). */
  readonly cgroupDir: () => string | undefined;
  /** A run's plan with the environment every runtime starts with. */
  readonly plan: (config: StoredConfig, run: RunFacts) => RuntimePlan;
  /** True while an execution runs or is being started. */
  readonly busy: () => boolean;
  /** Where a dropped runtime's tree goes (killed, its cgroup removed later). */
  readonly retire: (tree: ExecutionTree) => void;
}

/** The warm-up of one sandbox's runtimes. */
export class RuntimeWarmup {
  readonly #options: RuntimeWarmupOptions;
  readonly #slot: StandbySlot;
  readonly #prefetch = new Prefetch();
  /** The request written last of a runtime that starts ahead. */
  #lastConfig: StoredConfig | undefined;

  constructor(options: RuntimeWarmupOptions) {
    this.#options = options;
    this.#slot = new StandbySlot(options.retire);
  }

  /** A request was written: the last one of a runtime that starts ahead is what `prepare()` uses. */
  written(config: StoredConfig): void {
    if (config.driver.startsAhead) this.#lastConfig = config;
  }

  /**
   * Warms `runtime` up in the background.
   *
   * @throws SdkError `agent_config_missing` for a request this daemon does not hold
   */
  async prepare(runtime: StartExecution['runtime'], configHash?: string): Promise<void> {
    const { configs, user } = this.#options;
    const named = configHash === undefined ? undefined : configs.get(configHash);
    if (configHash !== undefined && named?.runtime !== runtime) {
      throw new RequestError('agent_config_missing', `no ${runtime} request with this hash: write it first`);
    }
    const driver = await runtimeDriver(runtime);
    if (driver === undefined) return;
    const binary = driver.binary(configs.site);
    if (!existsSync(binary)) return;
    this.#prefetch.read(binary);
    if (!driver.startsAhead) return;
    const config = named ?? (this.#lastConfig?.runtime === runtime ? this.#lastConfig : undefined);
    if (config === undefined || this.#options.busy() || this.#slot.running) return;
    let plan: RuntimePlan;
    try {
      plan = this.#options.plan(config, { reasoning: false, workdir: user.home });
    } catch {
      return; // a gateway gone since: the run says why
    }
    const tree = this.#tree();
    if (tree === undefined) return; // no cgroup, no warm-up: the run makes its own (and says why it cannot)
    // Held: beside a gVisor box a snapshot's copy takes it over (`adopt`).
    this.#slot.hold(config.hash, user.home, launchRuntime(plan, tree, user, true), tree);
  }

  /** The prepared runtime if `start` fits it, handed over; any other is ended first. */
  take(
    start: StartExecution,
  ): { readonly process: ManagedProcess; readonly tree: ExecutionTree } | undefined {
    return this.#slot.take(start);
  }

  /** The prepared runtime, for a memory snapshot's copies (`protocol/snapshot-carry.ts`). */
  carried(): CarriedStandby | undefined {
    return this.#slot.carried();
  }

  /**
   * Adopts the prepared runtime a copy restored from a memory snapshot holds (its sandboxd started with
   * it): the next run that fits it uses it, as on the original.
   */
  adopt(standby: CarriedStandby): void {
    const tree = this.#tree();
    if (tree === undefined) return; // no tree, no adoption: the runtime ends with the box's next run that does not fit
    const process = attachRuntime(standby.pid, standby.cmd, tree, this.#options.user);
    this.#slot.hold(standby.configHash, standby.workdir, process, tree);
  }

  /** Ends the prepared runtime, if any. */
  drop(): void {
    this.#slot.drop();
  }

  /** A prepared runtime's tree, or undefined when it cannot be made. */
  #tree(): ExecutionTree | undefined {
    const name = `agent-standby-${randomBytes(6).toString('hex')}`;
    try {
      return ExecutionTree.create(this.#options.cgroupDir(), name, processSpaceOf(this.#options.user));
    } catch {
      return undefined;
    }
  }
}
