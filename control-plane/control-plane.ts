/**
 * The control plane (DESIGN.md §1): owns sandbox lifecycles. Each sandbox is a `SandboxActor`; every
 * event is journaled before it is applied; on start the journal is replayed and reconciled with what
 * the driver reports, so a control plane killed at any moment and started again loses no sandbox and
 * leaks nothing. Time reaches the machines only as journaled `clock` events.
 *
 * This class wires the parts, one concept a file: `journal-records.ts` (what is journaled),
 * `recovery.ts` (replay, reconciliation, compaction), `sandbox-registry.ts` (live sandboxes, tombstones),
 * `projection.ts` (state events, inspection feed, public facts), `authorization.ts`, `scheduler.ts`
 * (time first, deadlines), `launcher.ts` (launches, warm pool), `daemon-followers.ts`, `webhooks.ts`
 * (signed lifecycle events).
 */
import type { Agent } from 'undici';
import { tunnelAgent } from './daemon-tunnel.js';
import { PreviewProxy } from './preview-proxy.js';
import { DaemonAccess } from './daemon-access.js';
import { DaemonProxy } from './daemon-proxy.js';
import { Previews } from './previews.js';
import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import { join } from 'node:path';
import type { Observable } from 'rxjs';
import type { InspectionRecord } from '../actors/actor-system.js';
import type { SandboxMachineInput } from '../machines/sandbox-machine.js';
import {
  createSandboxRequestSchema,
  type CreateSandboxRequest,
  type SandboxEvent,
  type SandboxInfo,
  setTimeoutRequestSchema,
  metricsQuerySchema,
  type SandboxMetrics,
  type SnapshotInfo,
} from '../protocol/control-plane-api.js';
import { LIMITS } from '../rules/limits.js';
import { matchesMetadata, type SandboxMetadata } from '../rules/sandbox-metadata.js';
import type { ExecutionList } from '../protocol/agent-wire.js';
import type { InspectorSandboxes, SandboxHistory } from '../protocol/inspector-api.js';
import type { TemplateBuildLine } from '../protocol/template-api.js';
import { AuthenticationError, InvalidArgumentError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import type { Isolation, SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import { Authorization, hashToken } from './authorization.js';
import { abortExecution, listExecutions, relayExecutionEvents, putEgress } from './daemon-agent.js';
import { DaemonFollowers } from './daemon-followers.js';
import { InspectorView } from './inspector-view.js';
import { SandboxJournal, type SandboxFacts } from './journal-records.js';
import { DEFAULT_SNAPSHOT_BYTES, SnapshotStore } from './snapshot-store.js';
import { Launcher, type LaunchRequestSpec } from './launcher.js';
import {
  loadOrCreateControlKey,
  loadOrCreateOperatorKey,
  loadOrCreateWebhookSecret,
} from './operator-key.js';
import { Projection } from './projection.js';
import { compactionRecords, recover } from './recovery.js';
import { HistoryReader } from './sandbox-history.js';
import type { SandboxRecord } from './sandbox-records.js';
import { SandboxRegistry, type LiveSandbox } from './sandbox-registry.js';
import { Scheduler } from './scheduler.js';
import { TemplateBuilds } from './template-builds.js';
import { egressPolicySchema, policyOfInternetAccess, type EgressPolicy } from '../rules/egress-policy.js';
import { checkDnsServers, defaultDnsServers } from './dns-servers.js';
import { Webhooks } from './webhooks.js';
import { METRICS_INTERVAL_MS, MetricsSampler } from './metrics-sampler.js';
import { OperatorTerminals } from './operator-terminals.js';
import { SnapshotCalls, type ForkedSandboxes } from './snapshot-calls.js';

/** Options of the control plane. */
export interface ControlPlaneOptions {
  /** Where the journal lives. */
  readonly stateDir: string;
  /**
   * The isolation engine, templates included. The entry points build it (`sdk serve` and the embedded
   * default: the namespace driver); the control plane sees only the interface.
   */
  readonly driver: SandboxDriver;
  /** The clock, in milliseconds; `Date.now` by default. */
  readonly now?: () => number;
  /** Run real timers for deadlines (default true); with false, time moves only through `tick()`. */
  readonly timers?: boolean;
  /**
   * Sandboxes kept launched ahead of demand for each base template with its usual egress and the default
   * limits (`sdk-base-caps` closed, `sdk-base` open); 0 (the default) launches on demand only.
   */
  readonly warmPool?: number;
  /** Trust roots for the gateways' upstreams in every sandbox, PEM (a private CA). */
  readonly gatewayCa?: string;
  /** Gateway time-outs in every sandbox, milliseconds; the spec's (10 s, 600 s) by default. */
  readonly gatewayTimeouts?: { readonly connectMs: number; readonly headersMs: number };
  /** The operator key (create, list, the all-sandbox feed); the state folder's key file by default. */
  readonly operatorKey?: string;
  /** Records past the journal's start after which it is compacted (10 000 by default). */
  readonly compactAfter?: number;
  /**
   * The isolation of a sandbox whose create names none, and of the warm pool's: one of the driver's,
   * its first by default.
   */
  readonly defaultIsolation?: Isolation;
  /** What every snapshot of this control plane may take together, bytes (16 GiB by default). */
  readonly snapshotBytes?: number;
  /**
   * DNS servers (`address[:port]`) sandboxd's resolver asks for the names sandbox code may reach;
   * `defaultDnsServers()` by default (`SDK_DNS_SERVERS`, else the host's resolv.conf).
   */
  readonly dnsServers?: readonly string[];
  /**
   * Where every sandbox's lifecycle events are POSTed, signed (issue 28, `sdk serve --webhook`): http or
   * https URLs. A sandbox's own `webhookUrl` (at create) gets its events too.
   */
  readonly webhooks?: readonly string[];
  /**
   * The secret webhooks are signed with, at least 16 characters; the state folder's `webhook-secret`
   * file (made on first start) by default.
   */
  readonly webhookSecret?: string;
  /** Between two metrics samples of a running sandbox, ms (`sbx.getMetrics()`; 5 s by default). */
  readonly metricsIntervalMs?: number;
}

/**
 * The control plane.
 *
 * @example
 * ```ts
 * const plane = await ControlPlane.start({ stateDir, driver: new NamespaceDriver({ stateDir }) });
 * const { sandboxId, accessToken } = await plane.create({ template: 'sdk-base-caps' });
 * await plane.pause(sandboxId, accessToken);
 * await plane.close(); // sandboxes keep running; the next start adopts them
 * ```
 */
export class ControlPlane {
  readonly #driver: SandboxDriver;
  readonly #defaultIsolation: Isolation;
  readonly #snapshots: SnapshotStore;
  readonly #now: () => number;
  readonly #projection = new Projection();
  readonly #registry = new SandboxRegistry(this.#projection, (sandbox, restored) =>
    this.#webhooks.track(sandbox, restored),
  );
  readonly #authorization: Authorization;
  readonly #journal: SandboxJournal;
  readonly #launcher: Launcher;
  readonly #scheduler: Scheduler;
  readonly #followers: DaemonFollowers;
  readonly #view: InspectorView;
  /** Each sandbox's sandboxd, for a caller it admits. */
  readonly #daemons: DaemonAccess;
  readonly #histories: HistoryReader;
  readonly #templateBuilds: TemplateBuilds;
  readonly #stopExitWatch: () => void;
  readonly #webhooks: Webhooks;
  readonly #metrics: MetricsSampler;
  readonly #snapshotCalls: SnapshotCalls;
  #closed = false;
  readonly #tunnels: Agent;
  /** Preview URLs (issue 28): who may reach a sandbox's port, and its public ports. */
  readonly previews: Previews;
  /** Forwards admitted preview requests to sandbox code's ports. */
  readonly previewProxy: PreviewProxy;
  /** Terminals for the operator (the inspector's panel), on sandboxd with the control plane's credential. */
  readonly terminals: OperatorTerminals;
  /** The SDKs' calls to a sandbox's sandboxd, resuming a suspended one with auto-resume on the way. */
  readonly daemonProxy = new DaemonProxy({
    reach: (id, bearer, use) => this.#daemons.reach(id, bearer, use),
  });

  /**
   * State changes with sequence numbers, of one sandbox or of every sandbox: after the cursor `after`
   * when given, else from each sandbox's current state; then live (see `SequencedLog.stream`).
   */
  events(
    options: { readonly sandboxId?: string; readonly after?: number | undefined } = {},
  ): Observable<SandboxEvent> {
    if (options.sandboxId !== undefined) this.#registry.factsOf(options.sandboxId);
    return this.#projection.events(options);
  }

  /** Every transition of every sandbox actor (replayed ones included): the inspection feed. */
  get inspect$(): Observable<InspectionRecord> {
    return this.#projection.inspect$;
  }

  /** The inspection feed with cursors (`?after=` of `GET /v1/inspect`): see `Projection.inspections`. */
  inspections(after?: number): Observable<InspectionRecord & { readonly cursor: number }> {
    return this.#projection.inspections(after);
  }

  /**
   * Builds an agent template (`POST /v1/templates`, operator only): its steps, then how it ended.
   *
   * @throws AuthenticationError without the operator key
   * @throws InvalidArgumentError for a malformed request, before anything is built
   */
  buildTemplate(body: unknown, bearer: string | undefined): Observable<TemplateBuildLine> {
    if (!this.isOperator(bearer)) throw new AuthenticationError('missing or invalid operator key');
    return this.#templateBuilds.build(body);
  }

  /** True when `bearer` is the operator key. */
  isOperator(bearer: string | undefined): boolean {
    return this.#authorization.isOperator(bearer);
  }

  /**
   * Refuses a caller who holds neither the sandbox's access token nor the operator key.
   *
   * @throws AuthenticationError
   */
  authorize(id: string, bearer: string | undefined): void {
    this.#authorization.check(id, bearer);
  }

  private constructor(options: ControlPlaneOptions) {
    this.#authorization = new Authorization(
      options.operatorKey ?? loadOrCreateOperatorKey(options.stateDir).key,
      this.#registry,
    );
    const controlKey = loadOrCreateControlKey(options.stateDir);
    this.#histories = new HistoryReader(join(options.stateDir, 'journal.jsonl'));
    this.#journal = new SandboxJournal(options.stateDir, options.compactAfter ?? 10_000);
    this.#driver = options.driver;
    const defaultIsolation = options.defaultIsolation ?? options.driver.isolations[0] ?? 'namespace';
    if (!options.driver.isolations.includes(defaultIsolation)) {
      throw new InvalidArgumentError(
        `isolation: this control plane offers ${options.driver.isolations.join(' and ')}, not ${defaultIsolation}`,
        { field: 'isolation' },
      );
    }
    this.#defaultIsolation = defaultIsolation;
    this.#snapshots = new SnapshotStore(
      options.stateDir,
      this.#journal,
      options.driver,
      options.snapshotBytes ?? DEFAULT_SNAPSHOT_BYTES,
    );
    this.#templateBuilds = new TemplateBuilds(options.driver);
    this.#view = new InspectorView(options.driver);
    this.#now = options.now ?? Date.now;
    this.#metrics = new MetricsSampler({
      driver: options.driver,
      now: this.#now,
      intervalMs: options.metricsIntervalMs ?? METRICS_INTERVAL_MS,
      timers: options.timers ?? true,
    });
    this.#webhooks = new Webhooks({
      destinations: options.webhooks ?? [],
      secret: options.webhookSecret ?? loadOrCreateWebhookSecret(options.stateDir),
      journal: this.#journal,
      now: this.#now,
      timers: options.timers ?? true,
    });
    this.#launcher = new Launcher({
      journal: this.#journal,
      launching: this.#registry.launching,
      driver: this.#driver,
      controlKey,
      warmPool: options.warmPool ?? 0,
      gatewayCa: options.gatewayCa,
      gatewayTimeouts: options.gatewayTimeouts,
      defaultIsolation: this.#defaultIsolation,
      dnsServers:
        options.dnsServers === undefined
          ? defaultDnsServers()
          : checkDnsServers(options.dnsServers, 'dnsServers'),
    });
    this.#scheduler = new Scheduler({
      journal: this.#journal,
      registry: this.#registry,
      driver: this.#driver,
      now: this.#now,
      timers: options.timers ?? true,
      afterTick: () =>
        this.#journal.compactIfDue(() => compactionRecords(this.#registry, this.#snapshots, this.#webhooks)),
    });
    this.#daemons = new DaemonAccess({
      authorization: this.#authorization,
      registry: this.#registry,
      scheduler: this.#scheduler,
      controlKey,
    });
    this.previews = new Previews({
      registry: this.#registry,
      authorization: this.#authorization,
      scheduler: this.#scheduler,
      journal: this.#journal,
      controlKey,
    });
    const previews = this.previews;
    this.#tunnels = tunnelAgent((sandboxId) => previews.targetOf(sandboxId));
    this.previewProxy = new PreviewProxy(this.previews, this.#tunnels);
    this.#snapshotCalls = new SnapshotCalls({
      store: this.#snapshots,
      now: this.#now,
      isOperator: (bearer) => this.isOperator(bearer),
      authorized: (id, bearer) => this.#authorization.authorized(id, bearer),
      target: (id, bearer) => this.#daemons.target(id, bearer),
      activity: (id, bearer) => this.activity(id, bearer),
      create: (request) => this.create(request),
      kill: (id, bearer) => this.kill(id, bearer),
    });
    this.terminals = new OperatorTerminals({
      target: (id, bearer) => this.#daemons.target(id, bearer),
      activity: (id, bearer) => this.activity(id, bearer),
    });
    this.#followers = new DaemonFollowers({
      controlKey,
      wallClock: options.now === undefined,
      onTraffic: (sandbox, at) => this.#scheduler.traffic(sandbox, at),
      onEvent: (sandboxId, event) => {
        this.#view.record(sandboxId, event);
        // Only the actors the records took (a bounded number per sandbox) reach the inspection feed.
        if (event.type === 'transition' && this.#view.records.hosts(sandboxId, event.actorId)) {
          this.#projection.recordDaemonTransition(sandboxId, event);
        }
      },
    });
    this.#stopExitWatch = this.#driver.onExit((id) => void this.#daemonExited(id));
  }

  /** Follows a live sandbox's daemon and keeps its records for the inspector. */
  #follow(sandbox: LiveSandbox): void {
    this.#view.watch(sandbox, () => this.#projection.info(sandbox.actor, sandbox.facts, sandbox.input));
    this.#followers.follow(sandbox);
    this.#metrics.watch(sandbox);
  }

  /** A sandbox's sandboxd died: the sandbox ends as failed (a pooled one is dropped and destroyed). */
  async #daemonExited(id: string): Promise<void> {
    if (this.#closed) return;
    const sandbox = this.#registry.find(id);
    if (sandbox !== undefined) {
      await this.#scheduler.send(sandbox, { type: 'daemon_exited' }).catch(() => undefined);
    } else await this.#launcher.discard(id);
  }

  /** Opens the journal, replays it, reconciles with the driver and starts the timers. */
  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const plane = new ControlPlane(options);
    await recover({
      records: plane.#journal.records,
      registry: plane.#registry,
      snapshots: plane.#snapshots,
      driver: plane.#driver,
      send: (sandbox, event) => plane.#scheduler.send(sandbox, event),
      follow: (sandbox) => plane.#follow(sandbox),
      webhooks: plane.#webhooks,
    });
    await plane.#scheduler.tick(); // deadlines that passed while no control plane ran
    plane.#projection.settle(
      [...plane.#registry.liveSandboxes()].map((sandbox) => sandbox.actor),
      [...plane.#registry.tombstones()].map(([, ended]) => ended.info),
    );
    plane.#launcher.fill();
    return plane;
  }

  /** Creates a sandbox; the access token is returned here only. */
  async create(
    request: CreateSandboxRequest,
  ): Promise<SandboxInfo & { daemonUrl: string; accessToken: string; previewKey: string }> {
    const parsed = parseOptions(createSandboxRequestSchema, request, 'Sandbox.create');
    if (
      parsed.egress !== undefined &&
      request.allowInternetAccess === false &&
      parsed.egress.mode !== 'closed'
    ) {
      throw new InvalidArgumentError("egress: allowInternetAccess false is mode 'closed'", {
        field: 'egress',
      });
    }
    if (parsed.snapshot === undefined) {
      const egress = parsed.egress ?? policyOfInternetAccess(parsed.allowInternetAccess);
      return this.#createFrom(parsed, {
        isolation: parsed.isolation ?? this.#defaultIsolation,
        template: parsed.template,
        allowInternetAccess: egress.mode !== 'closed',
        egress,
        memoryMb: parsed.memoryMb,
        maxPids: parsed.maxPids,
        cpus: parsed.cpus,
      });
    }
    const snapshot = this.#snapshots.get(parsed.snapshot);
    // A snapshot fixes what the sandbox is made of: a create may repeat it, not change it.
    const fixed = { template: snapshot.template, isolation: snapshot.isolation, ...snapshot.launch };
    for (const field of ['template', 'isolation', 'memoryMb', 'maxPids', 'cpus'] as const) {
      const given = (request as Record<string, unknown>)[field];
      if (given !== undefined && given !== fixed[field]) {
        throw new InvalidArgumentError(`${field}: a sandbox started from a snapshot has the snapshot's`, {
          field,
        });
      }
    }
    // Egress as the snapshot's sandbox had it, unless the create says otherwise.
    const egress =
      parsed.egress ??
      (request.allowInternetAccess === undefined
        ? (snapshot.launch.egress ?? policyOfInternetAccess(snapshot.launch.allowInternetAccess))
        : policyOfInternetAccess(request.allowInternetAccess));
    return this.#createFrom(
      parsed,
      {
        ...fixed,
        allowInternetAccess: egress.mode !== 'closed',
        egress,
        from: this.#snapshots.folderOf(snapshot.snapshotId),
        carried: snapshot.carried,
      },
      snapshot.snapshotId,
    );
  }

  /** Launches and journals a sandbox; its clocks, token and network are its own. */
  async #createFrom(
    parsed: z.output<typeof createSandboxRequestSchema>,
    launch: LaunchRequestSpec,
    snapshotId?: string,
  ): Promise<SandboxInfo & { daemonUrl: string; accessToken: string; previewKey: string }> {
    const { id, accessToken, daemonUrl, spec } = await this.#launcher.obtain(launch);
    const input: SandboxMachineInput = {
      now: this.#now(),
      timeoutMs: parsed.timeoutMs,
      maxIdleMs: parsed.idlePolicy.maxIdleSeconds * 1000,
      autoResume: parsed.idlePolicy.autoResume,
    };
    const facts: SandboxFacts = {
      template: spec.template,
      isolation: spec.isolation,
      allowInternetAccess: spec.allowInternetAccess,
      egress: launch.egress ?? policyOfInternetAccess(spec.allowInternetAccess),
      daemonUrl,
      tokenHash: hashToken(accessToken),
      limits: { memoryMb: spec.memoryMb, maxPids: spec.maxPids, cpus: spec.cpus },
      ...(snapshotId === undefined ? {} : { snapshotId }),
      ...(parsed.metadata === undefined ? {} : { metadata: parsed.metadata }),
      ...(parsed.webhookUrl === undefined ? {} : { webhookUrl: parsed.webhookUrl }),
    };
    await this.#journal.append({ kind: 'created', id, input, facts });
    this.#registry.launching.delete(id);
    this.#follow(this.#registry.adopt(id, input, facts));
    // Watched again now that it is created: a sandboxd that died between its launch (or its time in
    // the warm pool) and here is reported at once and ends the sandbox as failed.
    this.#driver.watch(id);
    this.#scheduler.schedule();
    return { ...this.get(id), daemonUrl, accessToken, previewKey: this.previews.keyOf(id) };
  }

  /**
   * Takes a snapshot of a sandbox, which goes on running (see `SnapshotCalls.take`).
   *
   * @throws AuthenticationError, SandboxError `sandbox_not_found`, `sandbox_ended`, `sandbox_suspended`,
   *   `no_space` (the snapshots' cap)
   */
  async snapshot(id: string, token: string | undefined): Promise<SnapshotInfo> {
    return this.#snapshotCalls.take(id, token);
  }

  /**
   * Takes a snapshot of a sandbox and starts `count` sandboxes from it, all or none (operator key; see
   * `SnapshotCalls.fork`).
   *
   * @throws AuthenticationError without the operator key; InvalidArgumentError for a bad count
   */
  async fork(id: string, body: unknown, bearer: string | undefined): Promise<ForkedSandboxes> {
    return this.#snapshotCalls.fork(id, body, bearer);
  }

  /**
   * Every snapshot (operator key), or those of one sandbox.
   *
   * @throws AuthenticationError without the operator key
   */
  snapshots(bearer: string | undefined, sandboxId?: string): SnapshotInfo[] {
    return this.#snapshotCalls.list(bearer, sandboxId);
  }

  /**
   * Deletes a snapshot and its files (operator key).
   *
   * @throws AuthenticationError; InvalidArgumentError `snapshot` for an unknown id
   */
  async deleteSnapshot(snapshotId: string, bearer: string | undefined): Promise<void> {
    await this.#snapshotCalls.delete(snapshotId, bearer);
  }

  /** Sandboxes of the warm pool ready to hand over. */
  get warmReady(): number {
    return this.#launcher.warmReady;
  }

  /** A sandbox's public facts. */
  get(id: string): SandboxInfo {
    return this.#registry.info(id);
  }

  /**
   * Every sandbox this control plane knows, ended ones included; with a filter, those in one of
   * `states` whose metadata holds every entry of `metadata`.
   */
  list(
    filter: { readonly states?: readonly SandboxInfo['state'][]; readonly metadata?: SandboxMetadata } = {},
  ): SandboxInfo[] {
    return this.#registry
      .list()
      .filter(
        (info) =>
          (filter.states === undefined || filter.states.includes(info.state)) &&
          (filter.metadata === undefined || matchesMetadata(info.metadata, filter.metadata)),
      );
  }

  /**
   * Sets the sandbox to end `timeoutMs` from now (longer or shorter than before), journaled; never past
   * SPEC's longest lifetime counted from its creation (running plus suspended). A suspended sandbox stays
   * suspended.
   *
   * @throws InvalidArgumentError `timeoutMs` (before anything changes); AuthenticationError; SandboxError
   */
  async setTimeout(id: string, body: unknown, token: string | undefined): Promise<SandboxInfo> {
    const { timeoutMs } = parseOptions(setTimeoutRequestSchema, body, 'sbx.setTimeout');
    const sandbox = this.#authorization.authorized(id, token);
    const deadlineAt = this.#now() + timeoutMs;
    const latest = sandbox.input.now + LIMITS.sandboxMaxTimeoutMs;
    if (deadlineAt > latest) {
      throw new InvalidArgumentError(
        `timeoutMs: past the sandbox's longest lifetime (8 h from its creation, running plus suspended); at most ${String(latest - this.#now())} ms from now`,
        { field: 'timeoutMs' },
      );
    }
    await this.#scheduler.call(sandbox, { type: 'set_deadline', deadlineAt });
    this.#scheduler.schedule();
    return this.get(id);
  }

  /**
   * The sandbox's metrics samples (CPU, memory, disk, network) taken while it ran, oldest first, those
   * in `[start, end]` (ms since the epoch) when given; kept for a while after it ended.
   *
   * @throws InvalidArgumentError for a malformed range (before anything is read); AuthenticationError
   */
  metrics(id: string, query: unknown, token: string | undefined): SandboxMetrics {
    const range = parseOptions(metricsQuerySchema, query, 'sbx.getMetrics');
    this.#authorization.check(id, token);
    return { metrics: this.#metrics.metrics(id, range) };
  }

  /** Suspends a running sandbox, memory kept. */
  async pause(id: string, token: string | undefined): Promise<SandboxInfo> {
    await this.#scheduler.call(this.#authorization.authorized(id, token), { type: 'pause' });
    return this.get(id);
  }

  /**
   * Changes a running sandbox's egress policy (resumed first when suspended with autoResume): journaled,
   * then applied to its network's tables and to sandboxd's resolver and name checks. Connections open
   * before stay open.
   *
   * @throws InvalidArgumentError for a bad policy (before anything changes), SandboxError
   *   `sandbox_suspended`, AuthenticationError
   */
  async updateEgress(id: string, body: unknown, token: string | undefined): Promise<EgressPolicy> {
    const policy = parseOptions(egressPolicySchema, body, 'sbx.egress.update');
    this.#authorization.authorized(id, token);
    const { template } = this.#registry.factsOf(id);
    if (policy.mode === 'closed' && (await this.#driver.template(template))?.canCloseEgress !== true) {
      throw new InvalidArgumentError(`mode: template ${template} cannot close egress; use sdk-base-caps`, {
        field: 'mode',
      });
    }
    await this.activity(id, token);
    const target = this.#daemons.target(id, token);
    await this.#journal.append({ kind: 'egress', id, egress: policy });
    this.#registry.setEgress(id, policy);
    await this.#driver.updateEgress(id, policy);
    await putEgress(target, policy);
    return policy;
  }

  /** Resumes a suspended sandbox (or touches a running one) and says where its daemon is. */
  async connect(
    id: string,
    token: string | undefined,
  ): Promise<SandboxInfo & { daemonUrl: string; previewKey?: string }> {
    const sandbox = this.#registry.live(id);
    // SPEC Authentication 1: a token the sandbox refuses does not fail connect; it resumes nothing, and
    // the error surfaces at the first authenticated call. An ended sandbox has no daemon to point at.
    // A caller without the token journals nothing (not even the time) and learns no preview key.
    if (!this.#authorization.admits(sandbox.facts, token)) {
      return { ...this.get(id), daemonUrl: sandbox.facts.daemonUrl };
    }
    await this.#scheduler.call(sandbox, { type: 'connect' });
    return { ...this.get(id), daemonUrl: sandbox.facts.daemonUrl, previewKey: this.previews.keyOf(id) };
  }

  /** An SDK call is about to reach the sandbox: resumes it when suspended with autoResume. */
  async activity(id: string, token: string | undefined): Promise<SandboxInfo> {
    await this.#scheduler.call(this.#authorization.authorized(id, token), { type: 'sdk_call' });
    return this.get(id);
  }

  /** Ends a sandbox and removes every resource. */
  async kill(id: string, token: string | undefined): Promise<SandboxInfo> {
    await this.#scheduler.call(this.#authorization.authorized(id, token), { type: 'kill' });
    return this.get(id);
  }

  /** The inspector's sandbox table: live sandboxes, then the last ones that ended here. */
  async inspectorSandboxes(): Promise<InspectorSandboxes> {
    const now = this.#now();
    const sandboxes = await this.#view.rows(this.#registry.liveSandboxes(), (sandbox) =>
      this.#projection.info(sandbox.actor, sandbox.facts, sandbox.input),
    );
    return { now, sandboxes };
  }

  /**
   * The records sandboxd reported for a sandbox (commands, gateway requests, routes, transitions), after
   * the cursor `after` (all still held by default), then live until it ends.
   */
  records(
    id: string,
    bearer: string | undefined,
    after?: number,
  ): Observable<SandboxRecord & { seq: number }> {
    this.#authorization.check(id, bearer);
    return this.#view.records.stream(id, after, this.#registry.find(id) !== undefined);
  }

  /** A sandbox's history replayed from the journal, state by state (time travel). */
  async history(id: string, bearer: string | undefined): Promise<SandboxHistory> {
    this.#authorization.check(id, bearer);
    return await this.#histories.history(id);
  }

  /** The sandbox's agent executions, asked of its sandboxd with the control plane's credential. */
  async executions(id: string, bearer: string | undefined): Promise<ExecutionList> {
    return await listExecutions(this.#daemons.target(id, bearer));
  }

  /** Relays an execution's event stream to `res` (see `relayExecutionEvents`). */
  async executionEvents(
    id: string,
    bearer: string | undefined,
    executionId: string,
    after: number | undefined,
    res: ServerResponse,
  ): Promise<void> {
    await relayExecutionEvents(this.#daemons.target(id, bearer), executionId, after, res);
  }

  /** Aborts an execution in the sandbox (SPEC: no grace). */
  async abortExecution(id: string, bearer: string | undefined, executionId: string): Promise<void> {
    await abortExecution(this.#daemons.target(id, bearer), executionId);
  }

  /**
   * Sends `clock { now }` to every sandbox whose next deadline has come (and compacts when due), then
   * sends the webhooks due (with timers off, only this sends them).
   */
  async tick(): Promise<void> {
    await this.#scheduler.tick();
    await this.#webhooks.tick();
    await this.#metrics.sample();
  }

  /** Stops timers and closes the journal; sandboxes keep running (a later start adopts them). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#followers.close();
    void this.#tunnels.destroy().catch(() => undefined);
    void this.daemonProxy.close().catch(() => undefined);
    this.#stopExitWatch();
    this.#metrics.close();
    this.#driver.close();
    this.#launcher.close();
    this.#scheduler.close();
    await this.#webhooks.close();
    this.#projection.close();
    this.#view.close();
    await this.#histories.close();
    await this.#journal.close(); // the records appended before are durable when this resolves
  }
}
