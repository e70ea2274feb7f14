/**
 * The control plane (DESIGN.md §1): owns sandbox lifecycles. Each sandbox is a `SandboxActor`; every
 * event is journaled before it is applied; on start the journal is replayed and reconciled with what
 * the driver reports, so a control plane killed at any moment and started again loses no sandbox and
 * leaks nothing. Time reaches the machines only as journaled `clock` events.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import type { Observable } from 'rxjs';
import { Journal } from '../actors/journal.js';
import { ActorSystem, type InspectionRecord } from '../actors/actor-system.js';
import {
  EffectFailedError,
  SandboxActor,
  type JournalWriter,
  type SandboxEffects,
} from '../actors/sandbox-actor.js';
import type { SandboxMachineEvent, SandboxMachineInput } from '../machines/sandbox-machine.js';
import type { SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import { AuthenticationError, InvalidArgumentError, SandboxError } from '../rules/errors.js';
import { parseOptions } from '../rules/parse-options.js';
import {
  createSandboxRequestSchema,
  type CreateSandboxRequest,
  type SandboxEvent,
  type SandboxInfo,
} from '../protocol/control-plane-api.js';
import { SequencedLog } from '../actors/sequenced-log.js';
import {
  controlTokenFor,
  CredentialCheck,
  loadOrCreateControlKey,
  loadOrCreateOperatorKey,
} from './operator-key.js';
import { followDaemon } from './daemon-feed.js';
import { TRAFFIC_EVENTS } from '../protocol/daemon-events.js';
import { WarmPool, type LaunchedSandboxd, type LaunchSpec } from './warm-pool.js';

/** A state change as it is logged, before its sequence number. */
type SandboxChange = Omit<SandboxEvent, 'seq'>;

/** What the journal records. */
type JournalRecord =
  | { readonly kind: 'launching'; readonly id: string }
  | { readonly kind: 'launch_failed'; readonly id: string }
  | {
      readonly kind: 'created';
      readonly id: string;
      readonly input: SandboxMachineInput;
      readonly facts: SandboxFacts;
    }
  | {
      readonly kind: 'event';
      readonly id: string;
      /** The actor's sequence number of the event (absent in journals written before 0.10 actors). */
      readonly seq?: number;
      readonly event: SandboxMachineEvent;
    }
  /** Written by compaction: a live sandbox as its persisted snapshot, instead of its events so far. */
  | {
      readonly kind: 'snapshot';
      readonly id: string;
      readonly input: SandboxMachineInput;
      readonly facts: SandboxFacts;
      readonly seq: number;
      readonly snapshot: unknown;
    }
  /** Written by compaction: an ended sandbox, its facts only. */
  | { readonly kind: 'ended'; readonly id: string; readonly info: SandboxInfo; readonly facts: SandboxFacts };

/** What the control plane keeps about a sandbox beside its machine. */
interface SandboxFacts {
  readonly template: string;
  readonly allowInternetAccess: boolean;
  readonly daemonUrl: string;
  /** SHA-256 of the access token, hex: the token itself is never stored. */
  readonly tokenHash: string;
}

interface Entry {
  readonly actor: SandboxActor;
  /** What its machine started from (kept for compaction). */
  readonly input: SandboxMachineInput;
  readonly facts: SandboxFacts;
}

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
}

/** The launch specs the warm pool keeps ready. */
const WARM_SPECS: readonly LaunchSpec[] = [
  { template: 'sdk-base-caps', allowInternetAccess: false, memoryMb: 512, maxPids: 512, cpus: 1 },
  { template: 'sdk-base', allowInternetAccess: true, memoryMb: 512, maxPids: 512, cpus: 1 },
];

/** Traffic closer than this (or a quarter of the idle time) to the last activity is not journaled again. */
const TRAFFIC_RESOLUTION_MS = 1_000;

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The control plane. */
export class ControlPlane {
  readonly #journal: Journal<JournalRecord>;
  readonly #driver: SandboxDriver;
  readonly #now: () => number;
  readonly #timers: boolean;
  /** True when time is the wall clock (so daemon timestamps compare with the machines' time). */
  readonly #wallClock: boolean;
  readonly #gatewayCa: string | undefined;
  readonly #gatewayTimeouts: ControlPlaneOptions['gatewayTimeouts'];
  /** Live sandboxes. */
  readonly #entries = new Map<string, Entry>();
  /** Launches journaled and not yet created or failed. */
  readonly #launching = new Set<string>();
  readonly #compactAfter: number;
  /** Ended sandboxes, released from memory but for their facts (the journal keeps their history). */
  readonly #ended = new Map<string, { readonly info: SandboxInfo; readonly facts: SandboxFacts }>();
  /** Every state change, by sandbox; a sandbox's stream ends with its `ended` event. */
  readonly #events = new SequencedLog<SandboxChange>(
    (change) => change.sandboxId,
    (change) => change.state === 'ended',
  );
  readonly #operator: CredentialCheck;
  readonly #effects: SandboxEffects;
  readonly #pool: WarmPool;
  readonly #stopExitWatch: () => void;
  readonly #system = new ActorSystem();
  /** Derives each sandbox's read-only credential for its daemon's event stream. */
  readonly #controlKey: string;
  /** Sandbox id → stops following its daemon's event stream. */
  readonly #feeds = new Map<string, () => void>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /**
   * State changes with sequence numbers, of one sandbox or of every sandbox: after the cursor `after`
   * when given, else from each sandbox's current state; then live (see `EventLog.stream`).
   */
  events(
    options: { readonly sandboxId?: string; readonly after?: number | undefined } = {},
  ): Observable<SandboxEvent> {
    if (options.sandboxId !== undefined) this.#factsOf(options.sandboxId);
    return this.#events.stream({ key: options.sandboxId, after: options.after });
  }

  /** Every transition of every sandbox actor (replayed ones included): the inspection feed. */
  get inspect$(): Observable<InspectionRecord> {
    return this.#system.inspect$;
  }

  /** True when `bearer` is the operator key. */
  isOperator(bearer: string | undefined): boolean {
    return this.#operator.admits(bearer);
  }

  /**
   * Refuses a caller who holds neither the sandbox's access token nor the operator key.
   *
   * @throws AuthenticationError
   */
  authorize(id: string, bearer: string | undefined): void {
    this.#checkToken(id, bearer);
  }

  private constructor(options: ControlPlaneOptions) {
    this.#operator = new CredentialCheck(
      options.operatorKey ?? loadOrCreateOperatorKey(options.stateDir).key,
    );
    this.#controlKey = loadOrCreateControlKey(options.stateDir);
    this.#compactAfter = options.compactAfter ?? 10_000;
    this.#journal = Journal.open(join(options.stateDir, 'journal.jsonl'));
    this.#driver = options.driver;
    this.#now = options.now ?? Date.now;
    this.#timers = options.timers ?? true;
    this.#wallClock = options.now === undefined;
    this.#gatewayCa = options.gatewayCa;
    this.#gatewayTimeouts = options.gatewayTimeouts;
    this.#pool = new WarmPool(options.warmPool ?? 0, WARM_SPECS, (spec) => this.#launch(spec));
    this.#effects = {
      freeze: (id) => this.#driver.pause(id),
      thaw: (id) => this.#driver.resume(id),
      destroy: (id) => this.#driver.destroy(id),
    };
    this.#stopExitWatch = this.#driver.onExit((id) => void this.#daemonExited(id));
  }

  /** A sandbox's sandboxd died: the sandbox ends as failed (a pooled one is dropped and destroyed). */
  async #daemonExited(id: string): Promise<void> {
    if (this.#closed) return;
    const entry = this.#entries.get(id);
    if (entry !== undefined) await this.#send(entry, { type: 'daemon_exited' }).catch(() => undefined);
    else if (this.#pool.discard(id)) await this.#driver.destroy(id).catch(() => undefined);
  }

  /** Opens the journal, replays it, reconciles with the driver and starts the timers. */
  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const plane = new ControlPlane(options);
    await plane.#recover();
    plane.#pool.fill();
    return plane;
  }

  /** Creates a sandbox; the access token is returned here only. */
  async create(
    request: CreateSandboxRequest,
  ): Promise<SandboxInfo & { daemonUrl: string; accessToken: string }> {
    const parsed = parseOptions(createSandboxRequestSchema, request, 'Sandbox.create');
    const manifest = await this.#driver.template(parsed.template);
    if (manifest === undefined) {
      throw new InvalidArgumentError(`template: no template named ${parsed.template}`, { field: 'template' });
    }
    if (!parsed.allowInternetAccess && !manifest.canCloseEgress) {
      throw new InvalidArgumentError(
        `template: ${parsed.template} cannot close egress; use sdk-base-caps with allowInternetAccess: false`,
        { field: 'template' },
      );
    }
    const spec: LaunchSpec = {
      template: parsed.template,
      allowInternetAccess: parsed.allowInternetAccess,
      memoryMb: parsed.memoryMb,
      maxPids: parsed.maxPids,
      cpus: parsed.cpus,
    };
    const { id, accessToken, daemonUrl } = this.#pool.take(spec) ?? (await this.#launch(spec));
    const input: SandboxMachineInput = {
      now: this.#now(),
      timeoutMs: parsed.timeoutMs,
      maxIdleMs: parsed.idlePolicy.maxIdleSeconds * 1000,
      autoResume: parsed.idlePolicy.autoResume,
    };
    const facts: SandboxFacts = {
      template: parsed.template,
      allowInternetAccess: parsed.allowInternetAccess,
      daemonUrl,
      tokenHash: hashToken(accessToken),
    };
    await this.#journal.append({ kind: 'created', id, input, facts });
    this.#launching.delete(id);
    this.#follow(this.#adopt(id, input, facts));
    this.#schedule();
    return { ...this.get(id), daemonUrl, accessToken };
  }

  /** Launches a sandbox (journaled as launching first, so a crash mid-launch leaks nothing). */
  async #launch(spec: LaunchSpec): Promise<LaunchedSandboxd> {
    const id = randomBytes(6).toString('hex');
    const accessToken = randomBytes(32).toString('base64url');
    await this.#journal.append({ kind: 'launching', id });
    this.#launching.add(id);
    try {
      const { daemonUrl } = await this.#driver.launch({
        id,
        template: spec.template,
        allowInternetAccess: spec.allowInternetAccess,
        memoryBytes: spec.memoryMb * 2 ** 20,
        maxPids: spec.maxPids,
        cpus: spec.cpus,
        accessToken,
        controlToken: controlTokenFor(this.#controlKey, id),
        ...(this.#gatewayCa === undefined ? {} : { gatewayCa: this.#gatewayCa }),
        ...(this.#gatewayTimeouts === undefined ? {} : { gatewayTimeouts: this.#gatewayTimeouts }),
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

  /** Sandboxes of the warm pool ready to hand over. */
  get warmReady(): number {
    return this.#pool.readyCount;
  }

  /** A sandbox's public facts. */
  get(id: string): SandboxInfo {
    const ended = this.#ended.get(id);
    return ended?.info ?? this.#info(this.#entry(id));
  }

  /** Every sandbox this control plane knows, ended ones included. */
  list(): SandboxInfo[] {
    return [
      ...[...this.#entries.values()].map((entry) => this.#info(entry)),
      ...[...this.#ended.values()].map((ended) => ended.info),
    ];
  }

  /** Suspends a running sandbox, memory kept. */
  async pause(id: string, token: string | undefined): Promise<SandboxInfo> {
    await this.#call(this.#authorized(id, token), { type: 'pause' });
    return this.get(id);
  }

  /** Resumes a suspended sandbox (or touches a running one) and says where its daemon is. */
  async connect(id: string, token: string | undefined): Promise<SandboxInfo & { daemonUrl: string }> {
    const entry = this.#entry(id);
    // SPEC Authentication 1: a token the sandbox refuses does not fail connect; it resumes nothing, and
    // the error surfaces at the first authenticated call. An ended sandbox has no daemon to point at.
    if (this.#tokenMatches(entry.facts, token)) await this.#call(entry, { type: 'connect' });
    else await this.#call(entry, undefined);
    return { ...this.get(id), daemonUrl: entry.facts.daemonUrl };
  }

  /** An SDK call is about to reach the sandbox: resumes it when suspended with autoResume. */
  async activity(id: string, token: string | undefined): Promise<SandboxInfo> {
    await this.#call(this.#authorized(id, token), { type: 'sdk_call' });
    return this.get(id);
  }

  /** Ends a sandbox and removes every resource. */
  async kill(id: string, token: string | undefined): Promise<SandboxInfo> {
    await this.#call(this.#authorized(id, token), { type: 'kill' });
    return this.get(id);
  }

  /** Sends `clock { now }` to every sandbox whose next deadline has come. */
  async tick(): Promise<void> {
    const now = this.#now();
    for (const entry of this.#entries.values()) {
      const due = entry.actor.nextDueAt;
      if (due === undefined || due > now) continue;
      await this.#send(entry, { type: 'clock', now });
    }
    await this.#compactIfDue();
    this.#schedule();
  }

  /**
   * Once the journal holds `compactAfter` records beyond its start, it is rewritten as one record per
   * sandbox (a live one's persisted snapshot, an ended one's facts) and the launches in flight, so replay
   * time stays bounded as history grows. Runs from the timer, where every resolved append is applied.
   */
  async #compactIfDue(): Promise<void> {
    if (this.#closed || this.#journal.appendedSinceOpenOrCompaction < this.#compactAfter) return;
    const records: JournalRecord[] = [
      ...[...this.#ended].map(([id, ended]): JournalRecord => ({ kind: 'ended', id, ...ended })),
      ...[...this.#entries.values()].map((entry): JournalRecord => ({
        kind: 'snapshot',
        id: entry.actor.id,
        input: entry.input,
        facts: entry.facts,
        ...entry.actor.persisted(),
      })),
      ...[...this.#launching].map((id): JournalRecord => ({ kind: 'launching', id })),
    ];
    await this.#journal.compact(records);
  }

  /**
   * Follows a sandbox's daemon: what it saw (calls to its API, requests through its gateway routes) is
   * traffic for the idle policy, journaled at the time the daemon saw it. At most one `traffic` a second
   * (or per quarter of the idle time, when shorter) is journaled per sandbox. Only on the wall clock, where daemon times compare with the machines'.
   */
  #follow(entry: Entry): void {
    if (
      !this.#wallClock ||
      this.#closed ||
      entry.actor.state === 'ended' ||
      this.#feeds.has(entry.actor.id)
    ) {
      return;
    }
    const stop = followDaemon({
      url: entry.facts.daemonUrl,
      token: controlTokenFor(this.#controlKey, entry.actor.id),
      onEvent: (event) => {
        if (TRAFFIC_EVENTS.has(event.type)) void this.#noteTraffic(entry, event.at);
        // Gateway routes live in sandboxd; their transitions join the inspection feed from its stream.
        if (event.type === 'route') {
          this.#system.record({
            actorId: `${entry.actor.id}/${event.route}`,
            kind: 'gateway_route',
            seq: event.seq,
            event: { type: event.event },
            state: event.event === 'opened' ? 'open' : event.event,
            at: event.at,
            replayed: false,
          });
        }
      },
    });
    this.#feeds.set(entry.actor.id, stop);
  }

  async #noteTraffic(entry: Entry, at: number): Promise<void> {
    const { lastActivityAt, maxIdleMs } = entry.actor.snapshot.context;
    const resolution = Math.min(TRAFFIC_RESOLUTION_MS, maxIdleMs / 4);
    if (entry.actor.state !== 'running' || at < lastActivityAt + resolution) return;
    const journal = this.#journalFor(entry);
    await entry.actor.send({ type: 'clock', now: Math.min(at, this.#now()) }, journal, this.#effects);
    await entry.actor.send({ type: 'traffic' }, journal, this.#effects);
    this.#schedule();
  }

  /** Stops timers and closes the journal; sandboxes keep running (a later start adopts them). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stop of this.#feeds.values()) stop();
    this.#feeds.clear();
    this.#stopExitWatch();
    this.#driver.close();
    this.#pool.stop();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#events.close();
    this.#system.close();
    await this.#journal.close(); // the records appended before are durable when this resolves
  }

  async #recover(): Promise<void> {
    const launching = this.#launching;
    for (const record of this.#journal.records) {
      if (record.kind === 'launching') launching.add(record.id);
      else if (record.kind === 'launch_failed') launching.delete(record.id);
      else if (record.kind === 'created') {
        launching.delete(record.id);
        this.#adopt(record.id, record.input, record.facts);
      } else if (record.kind === 'snapshot') {
        launching.delete(record.id);
        this.#adopt(record.id, record.input, record.facts, { snapshot: record.snapshot, seq: record.seq });
      } else if (record.kind === 'ended') {
        this.#ended.set(record.id, { info: record.info, facts: record.facts });
      } else {
        this.#entries.get(record.id)?.actor.replay(record.event, record.seq);
      }
    }
    const existing = new Set(await this.#driver.list());
    for (const [id, entry] of this.#entries) {
      const alive = existing.has(id);
      existing.delete(id);
      if (entry.actor.state === 'ended') {
        if (alive) await this.#driver.destroy(id); // a crash between journaling the end and destroying
        this.#release(entry);
      } else if (!alive) {
        await this.#send(entry, { type: 'kill' }); // gone while we were down
      } else {
        // Make the world match the journal; a sandbox whose sandboxd died meanwhile is reported by the
        // watch, which fires at once for an empty sandbox.
        await (entry.actor.state === 'suspended' ? this.#driver.pause(id) : this.#driver.resume(id)).catch(
          () => undefined,
        );
        this.#driver.watch(id);
        this.#follow(entry);
      }
    }
    // Resources nobody journaled as created: launches cut short by a crash.
    for (const id of existing) await this.#driver.destroy(id);
    for (const id of launching) await this.#driver.destroy(id);
    launching.clear();
    await this.tick();
  }

  #adopt(
    id: string,
    input: SandboxMachineInput,
    facts: SandboxFacts,
    restore?: { readonly snapshot: unknown; readonly seq: number },
  ): Entry {
    const actor = new SandboxActor(id, input, {
      system: this.#system,
      ...(restore === undefined ? {} : { restore }),
    });
    const entry = { actor, input, facts };
    this.#entries.set(id, entry);
    actor.state$.subscribe((state) => {
      if (state === 'ended') {
        this.#feeds.get(id)?.();
        this.#feeds.delete(id);
      }
      if (this.#closed) return;
      const { endReason } = actor.snapshot.context;
      this.#events.append({
        sandboxId: id,
        state,
        ...(state === 'ended' && endReason !== undefined ? { endReason } : {}),
      });
    });
    return entry;
  }

  /** A live sandbox; an ended one is refused with `sandbox_ended`. */
  #entry(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry !== undefined) return entry;
    const ended = this.#ended.get(id);
    if (ended === undefined) throw new SandboxError('no such sandbox', { code: 'sandbox_not_found' });
    throw new SandboxError(`sandbox ${id} has ended (${ended.info.endReason ?? 'killed'})`, {
      code: 'sandbox_ended',
    });
  }

  /** The facts of a sandbox, live or ended. */
  #factsOf(id: string): SandboxFacts {
    const facts = this.#entries.get(id)?.facts ?? this.#ended.get(id)?.facts;
    if (facts === undefined) throw new SandboxError('no such sandbox', { code: 'sandbox_not_found' });
    return facts;
  }

  /** Refuses a caller without the sandbox's token or the operator key (the sandbox may have ended). */
  #checkToken(id: string, token: string | undefined): void {
    if (!this.#tokenMatches(this.#factsOf(id), token))
      throw new AuthenticationError('missing or invalid sandbox access token');
  }

  /** A live sandbox for a caller holding its token or the operator key. */
  #authorized(id: string, token: string | undefined): Entry {
    this.#checkToken(id, token);
    return this.#entry(id);
  }

  /** The sandbox's access token, or the operator key (the operator may act on any sandbox). */
  #tokenMatches(facts: SandboxFacts, token: string | undefined): boolean {
    const presented = Buffer.from(hashToken(token ?? ''), 'hex');
    const ownToken = timingSafeEqual(presented, Buffer.from(facts.tokenHash, 'hex'));
    return this.#operator.admits(token) || ownToken;
  }

  /** An ended sandbox leaves memory; its facts stay for reads, its history in the journal. */
  #release(entry: Entry): void {
    if (entry.actor.state !== 'ended' || this.#entries.get(entry.actor.id) !== entry) return;
    this.#ended.set(entry.actor.id, { info: this.#info(entry), facts: entry.facts });
    this.#entries.delete(entry.actor.id);
  }

  /**
   * A caller's call on a sandbox: time first, so a deadline that has passed is honoured before anything
   * else; then a sandbox that has ended refuses it (`sandbox_ended`), so no caller is ever pointed at,
   * or acts through, the address of a sandbox that is gone.
   */
  async #call(entry: Entry, event: SandboxMachineEvent | undefined): Promise<void> {
    await this.#send(entry, { type: 'clock', now: this.#now() });
    this.#entry(entry.actor.id); // ended (by that clock, or before): `sandbox_ended`
    if (event !== undefined) await this.#send(entry, event);
  }

  async #send(entry: Entry, event: SandboxMachineEvent): Promise<void> {
    if (event.type !== 'clock' && entry.actor.state !== 'ended') {
      // Time first, so a deadline that has passed is honoured before anything else.
      await entry.actor.send({ type: 'clock', now: this.#now() }, this.#journalFor(entry), this.#effects);
    }
    try {
      await entry.actor.send(event, this.#journalFor(entry), this.#effects);
    } catch (error) {
      // The failure is journaled and applied already (the state says what is true); the caller hears it.
      if (error instanceof EffectFailedError) {
        throw new SandboxError(`the sandbox could not ${error.effect === 'freeze' ? 'pause' : 'resume'}`);
      }
      throw error;
    } finally {
      this.#release(entry);
      this.#schedule();
    }
  }

  #journalFor(entry: Entry): JournalWriter {
    return (event, seq) => this.#journal.append({ kind: 'event', id: entry.actor.id, seq, event });
  }

  #schedule(): void {
    if (!this.#timers || this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const dues = [...this.#entries.values()].flatMap((e) =>
      e.actor.nextDueAt === undefined ? [] : [e.actor.nextDueAt],
    );
    if (dues.length === 0) return;
    const wait = Math.max(0, Math.min(...dues) - this.#now());
    this.#timer = setTimeout(() => void this.tick(), Math.min(wait, 2 ** 31 - 1));
    this.#timer.unref();
  }

  #info(entry: Entry): SandboxInfo {
    const { context } = entry.actor.snapshot;
    return {
      sandboxId: entry.actor.id,
      template: entry.facts.template,
      state: entry.actor.state,
      allowInternetAccess: entry.facts.allowInternetAccess,
      endReason: context.endReason ?? null,
      suspendReason: entry.actor.state === 'suspended' ? (context.suspendReason ?? null) : null,
      deadlineAt: context.deadlineAt,
      seq: this.#events.latestSeq(entry.actor.id),
    };
  }
}
