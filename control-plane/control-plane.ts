/**
 * The control plane (DESIGN.md §1): owns sandbox lifecycles. Each sandbox is a `SandboxActor`; every
 * event is journaled before it is applied; on start the journal is replayed and reconciled with what
 * the driver reports, so a control plane killed at any moment and started again loses no sandbox and
 * leaks nothing. Time reaches the machines only as journaled `clock` events.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { Subject, type Observable } from 'rxjs';
import { Journal } from '../actors/journal.js';
import { SandboxActor, type SandboxEffects } from '../actors/sandbox-actor.js';
import type { SandboxMachineEvent, SandboxMachineInput } from '../machines/sandbox-machine.js';
import { readManifest } from '../sandbox-drivers/namespace/base-template.js';
import { NamespaceDriver } from '../sandbox-drivers/namespace/namespace-driver.js';
import type { SandboxDriver } from '../sandbox-drivers/sandbox-driver.js';
import { AuthenticationError, InvalidArgumentError, SandboxError } from '../spec/errors.js';
import { parseOptions } from '../spec/parse-options.js';
import {
  createSandboxRequestSchema,
  type CreateSandboxRequest,
  type SandboxEvent,
  type SandboxInfo,
} from './api-schemas.js';
import { WarmPool, type LaunchedSandboxd, type LaunchSpec } from './warm-pool.js';

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
  | { readonly kind: 'event'; readonly id: string; readonly event: SandboxMachineEvent };

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
  readonly facts: SandboxFacts;
}

/** Options of the control plane. */
export interface ControlPlaneOptions {
  /** Where the journal (and the driver's templates) live. */
  readonly stateDir: string;
  /** The isolation engine; the namespace driver by default. */
  readonly driver?: SandboxDriver;
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
}

/** The launch specs the warm pool keeps ready. */
const WARM_SPECS: readonly LaunchSpec[] = [
  { template: 'sdk-base-caps', allowInternetAccess: false, memoryMb: 512, maxPids: 512, cpus: 1 },
  { template: 'sdk-base', allowInternetAccess: true, memoryMb: 512, maxPids: 512, cpus: 1 },
];

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** The control plane. */
export class ControlPlane {
  readonly #journal: Journal<JournalRecord>;
  readonly #driver: SandboxDriver;
  readonly #stateDir: string;
  readonly #now: () => number;
  readonly #timers: boolean;
  /** True when time is the wall clock (so daemon timestamps compare with the machines' time). */
  readonly #wallClock: boolean;
  readonly #gatewayCa: string | undefined;
  readonly #gatewayTimeouts: ControlPlaneOptions['gatewayTimeouts'];
  readonly #entries = new Map<string, Entry>();
  readonly #events = new Subject<SandboxEvent>();
  readonly #effects: SandboxEffects;
  readonly #pool: WarmPool;
  readonly #stopExitWatch: () => void;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** State changes of every sandbox. */
  readonly events$: Observable<SandboxEvent> = this.#events.asObservable();

  private constructor(options: ControlPlaneOptions) {
    this.#stateDir = options.stateDir;
    this.#journal = Journal.open(join(options.stateDir, 'journal.jsonl'));
    this.#driver = options.driver ?? new NamespaceDriver({ stateDir: options.stateDir });
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
    const manifest = readManifest(this.#stateDir, parsed.template);
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
    this.#journal.append({ kind: 'created', id, input, facts });
    this.#adopt(id, input, facts);
    this.#schedule();
    return { ...this.get(id), daemonUrl, accessToken };
  }

  /** Launches a sandbox (journaled as launching first, so a crash mid-launch leaks nothing). */
  async #launch(spec: LaunchSpec): Promise<LaunchedSandboxd> {
    const id = randomBytes(6).toString('hex');
    const accessToken = randomBytes(32).toString('base64url');
    this.#journal.append({ kind: 'launching', id });
    try {
      const { daemonUrl } = await this.#driver.launch({
        id,
        template: spec.template,
        allowInternetAccess: spec.allowInternetAccess,
        memoryBytes: spec.memoryMb * 2 ** 20,
        maxPids: spec.maxPids,
        cpus: spec.cpus,
        accessToken,
        ...(this.#gatewayCa === undefined ? {} : { gatewayCa: this.#gatewayCa }),
        ...(this.#gatewayTimeouts === undefined ? {} : { gatewayTimeouts: this.#gatewayTimeouts }),
      });
      return { id, accessToken, daemonUrl };
    } catch {
      if (!this.#closed) this.#journal.append({ kind: 'launch_failed', id });
      throw new SandboxError('the sandbox could not be launched', { code: 'sandbox_error' });
    }
  }

  /** Sandboxes of the warm pool ready to hand over. */
  get warmReady(): number {
    return this.#pool.readyCount;
  }

  /** A sandbox's public facts. */
  get(id: string): SandboxInfo {
    return this.#info(this.#entry(id));
  }

  /** Every sandbox this control plane knows, ended ones included. */
  list(): SandboxInfo[] {
    return [...this.#entries.values()].map((entry) => this.#info(entry));
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
    if (this.#tokenMatches(entry, token)) await this.#call(entry, { type: 'connect' });
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
      if (entry.actor.state === 'running') await this.#noteGatewayTraffic(entry, due);
      await this.#send(entry, { type: 'clock', now });
    }
    this.#schedule();
  }

  /**
   * Before an idle deadline is honoured: gateway requests count as traffic (SPEC idle policy). sandboxd
   * reports the time of its last gateway request; a later one than the sandbox's last activity is
   * journaled as `traffic` at that time. Only on the wall clock, where the two times compare.
   */
  async #noteGatewayTraffic(entry: Entry, dueAt: number): Promise<void> {
    if (!this.#wallClock) return;
    const lastTrafficAt = await fetch(`${entry.facts.daemonUrl}/v1/health`, {
      signal: AbortSignal.timeout(1_000),
    })
      .then(
        async (res) => ((await res.json()) as { lastTrafficAt?: number | null }).lastTrafficAt ?? undefined,
      )
      .catch(() => undefined);
    if (lastTrafficAt === undefined || lastTrafficAt <= entry.actor.snapshot.context.lastActivityAt) return;
    const journal = this.#journalFor(entry);
    await entry.actor.send(
      { type: 'clock', now: Math.min(lastTrafficAt, dueAt - 1) },
      journal,
      this.#effects,
    );
    await entry.actor.send({ type: 'traffic' }, journal, this.#effects);
  }

  /** Stops timers and closes the journal; sandboxes keep running (a later start adopts them). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopExitWatch();
    this.#driver.close();
    this.#pool.stop();
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#journal.close();
    this.#events.complete();
  }

  async #recover(): Promise<void> {
    const launching = new Set<string>();
    for (const record of this.#journal.records) {
      if (record.kind === 'launching') launching.add(record.id);
      else if (record.kind === 'launch_failed') launching.delete(record.id);
      else if (record.kind === 'created') {
        launching.delete(record.id);
        this.#adopt(record.id, record.input, record.facts);
      } else {
        this.#entries.get(record.id)?.actor.replay(record.event);
      }
    }
    const existing = new Set(await this.#driver.list());
    for (const [id, entry] of this.#entries) {
      const alive = existing.has(id);
      existing.delete(id);
      if (entry.actor.state === 'ended') {
        if (alive) await this.#driver.destroy(id); // a crash between journaling the end and destroying
      } else if (!alive) {
        await this.#send(entry, { type: 'kill' }); // gone while we were down
      } else {
        // Make the world match the journal; a sandbox whose sandboxd died meanwhile is reported by the
        // watch, which fires at once for an empty sandbox.
        await (entry.actor.state === 'suspended' ? this.#driver.pause(id) : this.#driver.resume(id)).catch(
          () => undefined,
        );
        this.#driver.watch(id);
      }
    }
    // Resources nobody journaled as created: launches cut short by a crash.
    for (const id of existing) await this.#driver.destroy(id);
    for (const id of launching) await this.#driver.destroy(id);
    await this.tick();
  }

  #adopt(id: string, input: SandboxMachineInput, facts: SandboxFacts): void {
    const actor = new SandboxActor(id, input);
    this.#entries.set(id, { actor, facts });
    actor.state$.subscribe((state) => {
      if (this.#closed) return;
      const { endReason } = actor.snapshot.context;
      this.#events.next({
        sandboxId: id,
        state,
        ...(state === 'ended' && endReason !== undefined ? { endReason } : {}),
      });
    });
  }

  #entry(id: string): Entry {
    const entry = this.#entries.get(id);
    if (entry === undefined) throw new SandboxError('no such sandbox', { code: 'sandbox_not_found' });
    return entry;
  }

  #authorized(id: string, token: string | undefined): Entry {
    const entry = this.#entry(id);
    if (!this.#tokenMatches(entry, token))
      throw new AuthenticationError('missing or invalid sandbox access token');
    return entry;
  }

  #tokenMatches(entry: Entry, token: string | undefined): boolean {
    const presented = Buffer.from(hashToken(token ?? ''), 'hex');
    return timingSafeEqual(presented, Buffer.from(entry.facts.tokenHash, 'hex'));
  }

  /**
   * A caller's call on a sandbox: time first, so a deadline that has passed is honoured before anything
   * else; then a sandbox that has ended refuses it (`sandbox_ended`), so no caller is ever pointed at,
   * or acts through, the address of a sandbox that is gone.
   */
  async #call(entry: Entry, event: SandboxMachineEvent | undefined): Promise<void> {
    if (entry.actor.state !== 'ended') {
      await entry.actor.send({ type: 'clock', now: this.#now() }, this.#journalFor(entry), this.#effects);
    }
    const { endReason } = entry.actor.snapshot.context;
    if (entry.actor.state === 'ended') {
      throw new SandboxError(`sandbox ${entry.actor.id} has ended (${endReason ?? 'killed'})`, {
        code: 'sandbox_ended',
      });
    }
    if (event !== undefined) await this.#send(entry, event);
  }

  async #send(entry: Entry, event: SandboxMachineEvent): Promise<void> {
    if (event.type !== 'clock' && entry.actor.state !== 'ended') {
      // Time first, so a deadline that has passed is honoured before anything else.
      await entry.actor.send({ type: 'clock', now: this.#now() }, this.#journalFor(entry), this.#effects);
    }
    await entry.actor.send(event, this.#journalFor(entry), this.#effects);
    this.#schedule();
  }

  #journalFor(entry: Entry): (event: SandboxMachineEvent) => void {
    return (event) => this.#journal.append({ kind: 'event', id: entry.actor.id, event });
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
    };
  }
}
