/**
 * The sandbox's agent, hosted in sandboxd (issue 11 "Where executions live"): one actor of the agent
 * execution machine per sandbox, so `busy` holds whichever process calls, and timeout and abort hold
 * when the caller has died. The machine decides; this host runs its effects (start the runtime, SIGTERM
 * the tree, freeze and kill it, report the outcome), feeds it the runtime's step boundaries, its exit,
 * the clock at the machine's next deadline, and `tree_empty` once no process of the execution remains.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import type { Observable } from 'rxjs';
import type { ActorSystem } from '../actors/actor-system.js';
import { DeadlineTimer } from '../actors/deadline-timer.js';
import { HostedActor, stateName, type EmittedEvent, type Effects } from '../actors/hosted-actor.js';
import {
  agentExecutionMachine,
  agentNextDueAt,
  type AgentExecutionEvent,
  type ExecutionOutcome,
} from '../machines/agent-execution-machine.js';
import type { ProcessEvent } from '../protocol/process-events.js';
import type { CarriedStandby } from '../protocol/snapshot-carry.js';
import type {
  ExecutionList,
  AgentConfigWrite,
  AgentWireLine,
  StartExecution,
  WireExecutionLimits,
} from '../protocol/agent-wire.js';
import { AgentError } from '../rules/errors.js';
import { RequestError } from './request-error.js';
import type { RuntimeEvent } from '../runtime-drivers/run-accumulator.js';
import type { RunFacts } from '../runtime-drivers/runtime-driver.js';
import { AgentConfigs, type StoredConfig } from './agent-configs.js';
import { AgentExecution } from './agent-execution.js';
import { ExecutionTree } from './execution-tree.js';
import type { ManagedProcess } from './managed-process.js';
import { processSpaceOf, StartError, type SandboxUser } from './sandbox-spawn.js';
import { launchRuntime, type RuntimePlan } from './runtime-launch.js';
import { RuntimeWarmup } from './runtime-warmup.js';

type StartOrEnd = Extract<ProcessEvent, { type: 'start' | 'end' }>;
type AgentEffect = 'startRuntime' | 'terminateTree' | 'freezeAndKillTree';

const EFFECTS: readonly AgentEffect[] = ['startRuntime', 'terminateTree', 'freezeAndKillTree'];

/** Ended executions kept for late readers. */
const KEPT_EXECUTIONS = 3;

/** How often a stopping tree is looked at. */
const TREE_POLL_MS = 20;

/** What the host needs. */
export interface AgentHostOptions {
  /** The sandbox user; `cgroupProcs` names the commands' cgroup, under which executions get theirs. */
  readonly user: SandboxUser;
  /** Where transitions are reported. */
  readonly system?: ActorSystem | undefined;
  /** The requests written, with their runtimes' drivers. */
  readonly configs: AgentConfigs;
  /** Told when a runtime starts and ends, with its command line (never the prompt or environment). */
  readonly onProcess?: (pid: number, command: string, event: StartOrEnd) => void;
  /**
   * Variables every runtime starts with under its own (the credential broker's proxy and trust
   * variables, so the agent's tools reach what the sandbox's commands reach).
   */
  readonly environment?: () => Readonly<Record<string, string>>;
}

/** One execution and what runs it. */
interface Entry {
  readonly execution: AgentExecution;
  readonly tree: ExecutionTree;
  readonly start: StartExecution;
  process?: ManagedProcess | undefined;
  /** The runtime `start` spawned (or adopted), until the machine's `startRuntime` takes it on. */
  runtime?: ManagedProcess | undefined;
  promptSent: boolean;
  /** A step has started and not finished: only then is a `step_finished` taken. */
  stepOpen: boolean;
}

/** The agent of one sandbox. */
export class AgentHost {
  readonly #options: AgentHostOptions;
  readonly #configs: AgentConfigs;
  readonly #actor: HostedActor<typeof agentExecutionMachine, AgentEffect>;
  readonly #effects: Effects<AgentEffect, void>;
  readonly #entries = new Map<string, Entry>();
  /** Trees a normal end left populated: removed once they are empty. */
  readonly #leftTrees: ExecutionTree[] = [];
  #current: Entry | undefined;
  /** The tree of a runtime being spawned by `start` (not yet an execution). */
  #launching: ExecutionTree | undefined;
  /** `prepare()`: a runtime started for the next run. */
  readonly #warmup: RuntimeWarmup;
  /** The machine's next deadline (timeout, its grace), reached as a `clock` event. */
  readonly #clock: DeadlineTimer;
  #poll: NodeJS.Timeout | undefined;

  constructor(options: AgentHostOptions) {
    this.#options = options;
    this.#configs = options.configs;
    this.#actor = new HostedActor(agentExecutionMachine, {
      id: 'agent',
      kind: 'agent_execution',
      effects: EFFECTS,
      system: options.system,
    });
    this.#actor.on('outcome', (event) => this.#reportOutcome(event.outcome));
    this.#warmup = new RuntimeWarmup({
      user: options.user,
      configs: options.configs,
      cgroupDir: () => this.#cgroupDir,
      plan: (config, run) => this.#plan(config, run),
      busy: () => this.#current !== undefined || this.#launching !== undefined,
      retire: (tree) => this.#leftTrees.push(tree),
    });
    this.#clock = new DeadlineTimer({
      now: Date.now,
      dues: () => [agentNextDueAt(this.#actor.snapshot)],
      fire: (now) => this.#send({ type: 'clock', now }),
    });
    this.#effects = {
      startRuntime: (_, params) => this.#startRuntime(params?.['executionId']),
      terminateTree: () => {
        void this.#current?.tree.signal('SIGTERM').catch(() => undefined);
        this.#watchTree();
      },
      freezeAndKillTree: () => {
        void this.#current?.tree.freezeAndKill().catch(() => undefined);
        this.#watchTree();
      },
    };
  }

  /**
   * Keeps a request under its hash, checked by its runtime's driver.
   *
   * @throws RequestError `invalid_argument` for an unknown runtime or a request it cannot run
   */
  async writeConfig(config: AgentConfigWrite): Promise<{ hash: string }> {
    const stored = await this.#configs.write(config);
    this.#warmup.written(stored);
    return { hash: stored.hash };
  }

  /**
   * Starts an execution: the runtime spawns and waits for its prompt.
   *
   * @throws AgentError `busy` while one runs, `runtime_missing` without the runtime binary
   * @throws SdkError `agent_config_missing` for a configuration this daemon does not hold, `invalid_argument` for a
   *   working directory that does not exist or the sandbox user cannot enter
   */
  async start(start: StartExecution): Promise<string> {
    // On a host the folder is sandboxd's own to look at; in a sandbox the runtime's start says (below).
    if (this.#options.user.box === undefined && !isDirectory(start.workdir)) throw noSuchWorkdir();
    this.#send({ type: 'clock', now: Date.now() });
    const limits = machineLimits(start.limits);
    // A start whose runtime is being spawned counts as running: one execution at a time.
    if (this.#launching !== undefined) {
      throw new AgentError('busy', 'another agent execution is running on this sandbox');
    }
    if (this.#actor.peek({ type: 'run', limits }).some((e) => e.type === 'busy')) {
      throw new AgentError('busy', 'another agent execution is running on this sandbox');
    }
    const config = this.#configs.get(start.configHash);
    if (config?.runtime !== start.runtime) {
      throw new RequestError(
        'agent_config_missing',
        `no ${start.runtime} request with this hash: write it first`,
      );
    }
    const plan = this.#plan(config, start);
    if (!plan.files.every((file) => existsSync(file))) {
      throw new AgentError('runtime_missing', 'the runtime is not in this sandbox image');
    }
    const standby = this.#warmup.take(start);
    this.#collectLeftTrees();
    const id = `exe_${randomBytes(12).toString('hex')}`;
    const tree = standby?.tree ?? this.#newTree(`agent-${id}`);
    // The only wait: the runtime spawned in its working directory, which the account may not enter.
    const runtime = standby?.process ?? (await this.#launch(plan, tree));
    const entry: Entry = {
      execution: new AgentExecution({
        id,
        limits: start.limits,
        startedAt: Date.now(),
        sessionId: start.sessionId,
        reasoning: start.reasoning,
        parse: plan.parse,
      }),
      tree,
      start,
      runtime,
      promptSent: false,
      stepOpen: false,
    };
    this.#entries.set(id, entry);
    this.#forgetOldEntries();
    this.#send({ type: 'run', limits, executionId: id });
    return id;
  }

  /** Writes the prompt to the runtime's stdin and closes it (once per execution). */
  prompt(id: string, prompt: Buffer): void {
    const entry = this.#entry(id);
    if (entry.promptSent)
      throw new RequestError('invalid_argument', 'the prompt of this execution was sent already');
    entry.promptSent = true;
    void entry.process?.writeStdin(prompt); // bounded (MAX_PROMPT_BYTES); the stream flushes it before closing
    entry.process?.closeStdin();
  }

  /** The execution's lines after `after`, then live ones; completes after its final event. */
  lines(id: string, after = 0): Observable<Exclude<AgentWireLine, { keepalive: true }>> {
    return this.#entry(id).execution.lines(after);
  }

  /** Aborts the execution if it is the running one (an ended one stays as it ended). */
  abort(id: string): void {
    const entry = this.#entry(id);
    if (entry === this.#current) this.#send({ type: 'abort' });
  }

  /** The running execution and the ones kept. */
  list(): ExecutionList {
    const { value, context } = this.#actor.snapshot;
    const live = { state: stateName(value), steps: context.steps, totalTokens: context.totalTokens };
    return {
      current: this.#current?.execution.id ?? null,
      executions: [...this.#entries.values()].map(({ execution, start }) =>
        execution.info(start.runtime, this.#current?.execution === execution ? live : undefined),
      ),
    };
  }

  /**
   * Warms `runtime` up in the background (SPEC `prepare`, `runtime-warmup.ts`): reads its binary into
   * the page cache and, for a runtime that starts ahead (runtime_a) once a request was written and no
   * execution runs, starts one for the next run with request `configHash`, or the last one written.
   *
   * @throws SdkError `agent_config_missing` for a request this daemon does not hold
   */
  prepare(runtime: StartExecution['runtime'], configHash?: string): Promise<void> {
    return this.#warmup.prepare(runtime, configHash);
  }

  /**
   * The environment every runtime starts with changed (the credential broker started): a prepared
   * runtime, started without it, is let go, so the next run starts one that has it.
   */
  environmentChanged(): void {
    this.#warmup.drop();
  }

  /** The run's plan from its driver, with the environment every runtime starts with under its own. */
  #plan(config: StoredConfig, run: RunFacts): RuntimePlan {
    const plan = this.#configs.plan(config, run);
    const extra = this.#options.environment?.() ?? {};
    return { ...plan, environment: { ...extra, ...plan.environment }, workdir: run.workdir };
  }

  /** The prepared runtime, for a memory snapshot's copies (`protocol/snapshot-carry.ts`). */
  carried(): CarriedStandby | undefined {
    return this.#warmup.carried();
  }

  /** Adopts the prepared runtime a copy restored from a memory snapshot holds (`runtime-warmup.ts`). */
  adopt(standby: CarriedStandby): void {
    this.#warmup.adopt(standby);
  }

  /** Kills the running execution's tree and a prepared runtime (sandboxd is stopping). */
  close(): void {
    this.#clock.close();
    clearInterval(this.#poll);
    void this.#current?.tree.signal('SIGKILL').catch(() => undefined);
    void this.#launching?.signal('SIGKILL').catch(() => undefined);
    this.#warmup.drop();
    this.#actor.stop();
  }

  /**
   * Spawns the runtime of a new execution in `tree` and waits until it runs: a working directory the
   * account cannot enter is refused here, as a bad argument, with nothing left behind. Any other failure
   * to start is the execution's (`runtime_missing`, reported once it runs).
   */
  async #launch(plan: RuntimePlan, tree: ExecutionTree): Promise<ManagedProcess> {
    this.#launching = tree;
    try {
      const runtime = launchRuntime(plan, tree, this.#options.user);
      const failure = await runtime.started.then(
        () => undefined,
        (error: unknown) => error,
      );
      if (failure instanceof StartError && failure.stage === 'cwd') {
        if (!tree.remove()) this.#leftTrees.push(tree); // its process not yet gone: removed later
        throw noSuchWorkdir();
      }
      return runtime;
    } finally {
      this.#launching = undefined;
    }
  }

  /** The execution's tree in a cgroup of its own; refused when the cgroup cannot be made. */
  #newTree(name: string): ExecutionTree {
    try {
      return ExecutionTree.create(this.#cgroupDir, name, processSpaceOf(this.#options.user));
    } catch {
      throw new RequestError('sandbox_error', "the execution's cgroup could not be made");
    }
  }

  get #cgroupDir(): string | undefined {
    return cgroupDirOf(this.#options.user.cgroupProcs);
  }

  #entry(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new RequestError('not_found', 'no agent execution with this id');
    return entry;
  }

  /** Sends `event` to the machine; returns what it emitted (after the `on` listeners heard it). */
  #send(event: AgentExecutionEvent): EmittedEvent[] {
    const emitted = this.#actor.sendNow(event, this.#effects);
    this.#clock.schedule();
    return emitted;
  }

  #startRuntime(executionId: unknown): void {
    const entry = typeof executionId === 'string' ? this.#entries.get(executionId) : undefined;
    const proc = entry?.runtime;
    if (entry === undefined || proc === undefined) return;
    entry.runtime = undefined;
    this.#current = entry;
    entry.process = proc;
    proc.started.catch(() => {
      if (this.#current === entry) this.#send({ type: 'runtime_failed', reason: 'runtime_missing' });
    });
    proc.follow((event) => {
      if (event.type === 'start') this.#options.onProcess?.(event.pid, proc.cmd, event);
      if (event.type === 'data' && event.stream === 'stdout') {
        for (const parsed of entry.execution.output(Buffer.from(event.data, 'base64'))) {
          this.#runtimeEvent(entry, parsed);
        }
      }
      if (event.type !== 'end') return;
      this.#options.onProcess?.(proc.pid, proc.cmd, event);
      for (const parsed of entry.execution.flush()) this.#runtimeEvent(entry, parsed);
      entry.execution.exited(event.exitCode);
      entry.process = undefined; // its kept output history goes with it
      if (this.#current !== entry) return;
      this.#send(
        event.exitCode === 0 && !entry.execution.runtimeReportedFailure
          ? { type: 'runtime_exited' }
          : { type: 'runtime_failed', reason: 'runtime_error' },
      );
    });
  }

  /**
   * Step boundaries go through the machine; nothing is emitted once it stopped the run. The runtime is
   * sandbox code: a `step_finished` outside a step is dropped, so step events stay within 2 × maxSteps.
   */
  #runtimeEvent(entry: Entry, event: RuntimeEvent): void {
    const active = (): boolean =>
      this.#current === entry && this.#actor.snapshot.matches({ running: 'active' });
    if (!active()) return;
    if (event.type === 'step_started') {
      this.#send({ type: 'step_started' });
      if (!active()) return;
      entry.stepOpen = true;
      entry.execution.emit(event);
      return;
    }
    if (event.type === 'step_finished') {
      if (!entry.stepOpen) return;
      entry.stepOpen = false;
      entry.execution.emit(event);
      this.#send({ type: 'step_finished', totalTokens: event.usage.total });
      return;
    }
    entry.execution.emit(event);
  }

  #watchTree(): void {
    if (this.#poll !== undefined) return;
    let looking = false;
    this.#poll = setInterval(() => {
      if (looking) return;
      looking = true;
      const tree = this.#current?.tree;
      void (tree === undefined ? Promise.resolve(true) : tree.isEmpty()).then(
        (empty) => {
          looking = false;
          if (empty && this.#current?.tree === tree) this.#send({ type: 'tree_empty' });
        },
        () => (looking = false), // not read this time: the next tick looks again
      );
    }, TREE_POLL_MS);
  }

  /** The machine emitted its outcome: the execution's last event, then its tree let go. */
  #reportOutcome(outcome: ExecutionOutcome | undefined): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
    const entry = this.#current;
    this.#current = undefined;
    if (entry === undefined) return;
    entry.execution.finish(
      outcome === undefined || outcome.kind === 'done'
        ? { type: 'done' }
        : { type: 'agent_failed', reason: outcome.reason },
    );
    // Processes an agent left running after a normal end are not killed; their cgroup goes later.
    if (!entry.tree.remove()) this.#leftTrees.push(entry.tree);
  }

  #collectLeftTrees(): void {
    for (let i = this.#leftTrees.length - 1; i >= 0; i--) {
      if (this.#leftTrees[i]?.remove() === true) this.#leftTrees.splice(i, 1);
    }
  }

  #forgetOldEntries(): void {
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= KEPT_EXECUTIONS) return;
      if (entry.execution.outcome !== undefined) this.#entries.delete(id);
    }
  }
}

function machineLimits(limits: WireExecutionLimits) {
  return { timeoutMs: limits.timeoutMs, maxSteps: limits.maxSteps, maxTotalTokens: limits.maxTotalTokens };
}

function cgroupDirOf(procsFile: string | undefined): string | undefined {
  return procsFile === undefined ? undefined : procsFile.slice(0, procsFile.lastIndexOf('/'));
}

/** True when `path` is a folder of sandboxd's own filesystem. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The refusal of a working directory the sandbox user cannot enter (or that does not exist). */
function noSuchWorkdir(): RequestError {
  return new RequestError('invalid_argument', 'workdir: no such directory in the sandbox', undefined, {
    field: 'workdir',
  });
}
