/**
 * `Sandbox`: the handle on one isolated sandbox. It talks to the control plane for its own sandbox
 * (pause, resume, kill, state) and to the sandbox's daemon for commands and gateways, with the sandbox
 * access token; an ended sandbox refuses every call before any traffic. Launching or connecting a sandbox
 * is `sandbox-lifecycle.ts`'s, which returns data and never imports this module; handles are built here,
 * on what it returns, and the calls that need no handle are inherited from its `SandboxApi`.
 */
import { inspect, type InspectOptions } from 'node:util';
import { map, type Observable } from 'rxjs';
import {
  connectedSandboxSchema,
  sandboxInfoSchema,
  setTimeoutRequestSchema,
  type SandboxEvent,
  type SandboxInfo,
  forkedSandboxesSchema,
  forkRequestSchema,
  snapshotSchema,
  type SnapshotInfo,
} from '../protocol/control-plane-api.js';
import { AuthenticationError, InvalidArgumentError, SandboxError } from '../rules/errors.js';
import { Commands } from './commands.js';
import { Files } from './files.js';
import { operatorKey, type ControlPlaneClient } from './control-plane-client.js';
import { Snapshot } from './snapshot.js';
import { parseOptions } from '../rules/parse-options.js';
import { DaemonClient } from './daemon-client.js';
import { daemonEventSchema, type DaemonEvent } from '../protocol/daemon-events.js';
import { resumableFeed } from '../protocol/resumable-feed.js';
import { ndjsonFeed } from './ndjson-feed.js';
import { SandboxAgent } from './sandbox-agent.js';
import { readMetrics, type MetricsRange, type SandboxMetric } from './sandbox-metrics.js';
import { SandboxGateways } from './sandbox-gateways.js';
import type { HomePersistence } from './home-persistence.js';
import {
  SandboxApi,
  connectLaunched,
  launchForCreate,
  type CreatingHandle,
  type HandleOpening,
  type LaunchedSandbox,
  type SandboxConnectOptions,
} from './sandbox-lifecycle.js';
import { deliverSecrets } from './sandbox-secrets.js';
import type { SandboxOptions } from './sandbox-options.js';
import { SandboxEgress } from './sandbox-egress.js';
import { SandboxCredentials } from './sandbox-credentials.js';
import { SandboxPorts } from './sandbox-ports.js';
import { Pty } from './pty.js';

/** A sandbox's state. */
export type SandboxState = SandboxInfo['state'];

export type { SandboxConnectOptions, SandboxEvent, SandboxInfo };

/**
 * The key of `Sandbox`'s static that opens a handle on a launched sandbox: for the pool and the E2B
 * shim, not in the package entry.
 */
export const openHandle: unique symbol = Symbol('openHandle');

/**
 * A sandbox handle.
 *
 * @example
 * ```ts
 * const sbx = await Sandbox.create({ template: 'sdk-base-caps', allowInternetAccess: false });
 * const { stdout } = await sbx.commands.run('echo hello');
 * await sbx.pause();
 * await sbx.connect(); // resumed, memory kept
 * await sbx.kill();
 * ```
 */
export class Sandbox extends SandboxApi {
  /** The sandbox id. */
  readonly sandboxId: string;
  /** Commands in the sandbox (a suspended sandbox with auto-resume is resumed where the call reaches it). */
  readonly commands: Commands;
  /** Files in the sandbox, read and written as its user. */
  readonly files: Files;
  /** Terminals in the sandbox (issue 28): `create`, `connect`. */
  readonly pty: Pty;
  /**
   * The access token, private so that no `console.log(sbx)`, `util.inspect`, `JSON.stringify` or
   * spread of the handle shows it: `accessToken` (a getter on the prototype) is the only way to it.
   */
  readonly #accessToken: string;
  readonly #plane: ControlPlaneClient;
  readonly #daemon: DaemonClient;
  readonly #gateways: SandboxGateways;
  readonly #egress: SandboxEgress;
  readonly #credentials: SandboxCredentials;
  readonly #ports: SandboxPorts;
  /** The options this handle created its sandbox with (creating handles only). */
  readonly #createdWith: SandboxOptions | undefined;
  /** The sequence number of the first state this handle saw: `state$` starts there. */
  readonly #firstSeq: number;
  /** Where `checkpointFiles` saves the home (a handle created with `persist`). */
  readonly #home: HomePersistence | undefined;
  #agent: SandboxAgent | undefined;
  /** Why the sandbox ended, once this handle has learnt it: every later call fails before any traffic. */
  #endReason: string | undefined;

  private constructor(launched: LaunchedSandbox, creating?: CreatingHandle) {
    super();
    this.sandboxId = launched.sandboxId;
    this.#accessToken = launched.accessToken;
    this.#plane = launched.plane;
    this.#firstSeq = launched.seq;
    this.#createdWith = creating?.createdWith;
    this.#home = creating?.home;
    this.#daemon = new DaemonClient({
      url: launched.daemonUrl,
      accessToken: launched.accessToken,
      requestTimeoutMs: launched.plane.requestTimeoutMs,
      beforeCall: () => {
        this.#refuseWhenEnded();
      },
      onRefusal: (error) => {
        if (error instanceof SandboxError && error.code === 'sandbox_ended') this.#endReason ??= 'ended';
      },
    });
    this.commands = new Commands(this.#daemon);
    this.files = new Files(this.#daemon);
    this.pty = new Pty(this.#daemon);
    this.#gateways = new SandboxGateways(this.#daemon, creating?.gateways ?? {}, creating?.secretCache);
    this.#egress = new SandboxEgress(this.#plane, this.sandboxId, () => this.#accessToken);
    this.#credentials = new SandboxCredentials(
      this.#daemon,
      creating?.credentials ?? [],
      creating?.secretCache,
    );
    this.#ports = new SandboxPorts(this.#plane, this.sandboxId, () => this.#accessToken, launched.ports);
  }

  /** Preview URLs of the sandbox's loopback ports (issue 28): `url(port)`, `token`, `expose`. */
  get ports(): SandboxPorts {
    return this.#ports;
  }

  /**
   * The preview URL of `port` (as `ports.url`): a URL on the control plane that reaches the sandbox's
   * `127.0.0.1:<port>`, HTTP, server-sent events and WebSockets, its token in the query.
   */
  getHost(port: number): string {
    return this.#ports.url(port);
  }

  /**
   * The sandbox access token: give it to another process so it can `Sandbox.connect`. A getter, so it
   * is never among the handle's own properties: `console.log(sbx)`, `util.inspect` and `JSON.stringify`
   * (`toJSON`) leave it out. Never log what this returns.
   */
  get accessToken(): string {
    return this.#accessToken;
  }

  /** What `JSON.stringify(sbx)` gives: the sandbox id, never the access token. */
  toJSON(): { sandboxId: string } {
    return { sandboxId: this.sandboxId };
  }

  /**
   * What `console.log(sbx)` and `util.inspect(sbx)` show: `Sandbox { sandboxId: '…' }`. Without it,
   * `inspect` with `showHidden` and `getters` would call the `accessToken` getter.
   */
  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `Sandbox ${inspect(this.toJSON(), options)}`;
  }

  /** The gateway routes: definitions and state on the creating handle, state only on a connected one. */
  get gateways(): SandboxGateways {
    return this.#gateways;
  }

  /**
   * The credential broker: `status` and `refresh()` (`SandboxCredentials`); the rules on the creating
   * handle only.
   */
  get credentials(): SandboxCredentials {
    return this.#credentials;
  }

  /** Where the sandbox's code may connect: `get()` and `update()` (`SandboxEgress`). */
  get egress(): SandboxEgress {
    return this.#egress;
  }

  /**
   * Creates a sandbox. Every argument is checked first, so a malformed one raises
   * `InvalidArgumentError` before any call. With `pool`, the sandbox is `pool.take()`'s. `secrets`
   * puts secret values in the environment of every command: unlike a gateway's key, any sandbox code
   * can read them.
   *
   * @example
   * ```ts
   * const sbx = await Sandbox.create({ secrets: { GITHUB_TOKEN: 'github-token' } });
   * await sbx.commands.run('git clone https://x-access-token:$GITHUB_TOKEN@github.example/org/repo');
   * ```
   * @throws InvalidArgumentError for a malformed option
   * @throws SecretNotFoundError when a secret of `gateways` or `secrets` is missing; the new sandbox is
   * then ended unless `keepOnFailure`
   * @throws SandboxError when the sandbox cannot be launched
   */
  static async create(options: SandboxOptions = {}): Promise<Sandbox> {
    const plan = await launchForCreate(options);
    return 'pool' in plan ? plan.pool.take() : Sandbox[openHandle](plan.launched, plan.opening);
  }

  /**
   * Connects to an existing sandbox (resuming it when suspended). The token comes from `accessToken` or
   * the environment variable `SDK_ACCESS_TOKEN`.
   *
   * @throws AuthenticationError without a token, or with one the sandbox refuses
   */
  static async connect(sandboxId: string, options: SandboxConnectOptions = {}): Promise<Sandbox> {
    const sbx = new Sandbox(await connectLaunched(sandboxId, options));
    // SPEC Authentication 1: a refused token leaves the gateways empty; the first authenticated call raises.
    await sbx.gateways.readState().catch((error: unknown) => {
      if (!(error instanceof AuthenticationError)) throw error;
    });
    return sbx;
  }

  /**
   * A new creating handle on a launched sandbox, its gateways opened: secrets resolved now and
   * ConfigureSandbox sent, then its credential rules, then its `secrets`. When that fails the sandbox is
   * ended unless `keepOnFailure`. For `create`, the pool's `take` and the E2B shim; keyed by a symbol
   * the package entry does not export.
   */
  static async [openHandle](launched: LaunchedSandbox, opening: HandleOpening): Promise<Sandbox> {
    const sbx = new Sandbox(launched, opening.creating);
    const { gateways, secrets = {}, credentials = [] } = opening.creating;
    const none = Object.keys(gateways).length === 0 && Object.keys(secrets).length === 0;
    if (none && credentials.length === 0) return sbx;
    try {
      if (Object.keys(gateways).length > 0) await sbx.gateways.configure();
      // Before any command of the caller's runs: every one gets the proxy and the CA.
      if (credentials.length > 0) await sbx.credentials.configure();
      await deliverSecrets(
        {
          url: launched.daemonUrl,
          accessToken: launched.accessToken,
          requestTimeoutMs: launched.plane.requestTimeoutMs,
        },
        secrets,
        opening.creating.secretCache,
      );
    } catch (error) {
      if (!opening.keepOnFailure) await sbx.kill().catch(() => undefined);
      throw error;
    }
    return sbx;
  }

  /**
   * A new sandbox created with this handle's options and gateways (secrets read again), for a sandbox
   * that ended or must be replaced. Only the handle that created its sandbox with gateways has them.
   *
   * @throws InvalidArgumentError on a connected handle or one created without gateways, before any call
   */
  async reincarnate(): Promise<Sandbox> {
    const options = this.#createdWith;
    if (options === undefined || this.gateways.definitionNames().length === 0) {
      throw new InvalidArgumentError(
        'reincarnate: only the handle that created its sandbox with gateways can reincarnate it',
        { field: 'gateways' },
      );
    }
    return Sandbox.create(options);
  }

  /**
   * The agent of this sandbox (`run`, `stream`, `prepare`, `executions`, `attach`); touching it makes
   * no call.
   */
  get agent(): SandboxAgent {
    this.#agent ??= new SandboxAgent({
      sandboxId: this.sandboxId,
      client: this.#daemon,
      gateways: this.#gateways,
    });
    return this.#agent;
  }

  /**
   * Saves the sandbox user's home (`/home/user`, agent sessions included) to the `persist` location,
   * `<prefix>/<name>/home.tar.gz`, under `executionRoleArn`; a sandbox created later with the same
   * `persist` starts with it. Streamed, never whole in memory. The object is replaced only by a whole
   * archive: when anything fails (tar in the sandbox, S3, the role) the one saved before stays. A
   * file that changes while it is read fails the save too, so save while the agent is idle.
   *
   * @example
   * ```ts
   * const persist = new S3Prefix({ bucket: 'team-homes', prefix: 'homes', name: 'alice' });
   * const sbx = await Sandbox.create({ persist, executionRoleArn: 'arn:aws:iam::123456789012:role/sbx' });
   * await sbx.commands.run('echo notes > ~/notes.txt');
   * await sbx.checkpointFiles(); // s3://team-homes/homes/alice/home.tar.gz
   * ```
   * @throws InvalidArgumentError on a handle not created with `persist` (a connected one), before any call
   * @throws SandboxError when the role cannot be assumed, the bucket is missing or refuses, or tar failed
   */
  async checkpointFiles(): Promise<void> {
    if (this.#home === undefined) {
      throw new InvalidArgumentError(
        'checkpointFiles: only the handle that created its sandbox with persist knows where to save',
        { field: 'persist' },
      );
    }
    await this.#home.save(this.#daemon, this.sandboxId);
  }

  /**
   * Sets the sandbox to end `timeoutMs` from now, longer or shorter than before, never past 8 h from
   * its creation (running plus suspended). A suspended sandbox stays suspended.
   *
   * @throws InvalidArgumentError past that cap (before anything changes), or for a bad `timeoutMs`
   */
  async setTimeout(timeoutMs: number): Promise<SandboxInfo> {
    const checked = parseOptions(setTimeoutRequestSchema.shape.timeoutMs, timeoutMs, 'sbx.setTimeout', [
      'timeoutMs',
    ]);
    return this.#acting(() =>
      this.#plane.call('POST', `/v1/sandboxes/${this.sandboxId}/timeout`, sandboxInfoSchema, {
        token: this.#accessToken,
        body: { timeoutMs: checked },
      }),
    );
  }

  /**
   * The samples of the sandbox's CPU, memory, disk and network the control plane took while it ran
   * (every few seconds; coarser further back in a long life), oldest first, those taken in
   * `[start, end]` when given. Never resumes the sandbox; kept for a while after it ended.
   *
   * @example
   * ```ts
   * const [latest] = (await sbx.getMetrics({ start: Date.now() - 60_000 })).slice(-1);
   * console.log(latest?.cpuUsedPct, latest?.memUsedBytes);
   * ```
   */
  async getMetrics(range: MetricsRange = {}): Promise<SandboxMetric[]> {
    return readMetrics(this.#plane, this.sandboxId, range, this.#accessToken, 'sbx.getMetrics');
  }

  /** The sandbox's facts now (also once it has ended: they come from the control plane's record). */
  async getInfo(): Promise<SandboxInfo> {
    return this.#learn(
      await this.#plane.call('GET', `/v1/sandboxes/${this.sandboxId}`, sandboxInfoSchema, {
        token: this.#accessToken,
      }),
    );
  }

  /**
   * Takes a snapshot of the sandbox, which goes on running: with gVisor its processes, memory and
   * files (`kind: 'memory'`), with namespaces its files (`'filesystem'`). A suspended sandbox is resumed
   * first (with autoResume, as any call). `Sandbox.create({ snapshot })` starts a new sandbox from it.
   *
   * @throws SandboxError (`no_space` past the control plane's cap of snapshots, `sandbox_ended`, ...)
   */
  async snapshot(): Promise<Snapshot> {
    let taken: SnapshotInfo | undefined;
    // As any call: refused at once on an ended sandbox, and an end learnt here is remembered.
    await this.#acting(async () => {
      taken = await this.#plane.call('POST', `/v1/sandboxes/${this.sandboxId}/snapshots`, snapshotSchema, {
        token: this.#accessToken,
      });
      return this.getInfo();
    });
    if (taken === undefined) throw new SandboxError('the control plane took no snapshot');
    return new Snapshot(taken);
  }

  /**
   * Takes a snapshot and starts `count` sandboxes from it at once (1 to 100), each with its own id,
   * token, network and clocks, none with gateways (give them with `Sandbox.create({ snapshot, gateways
   * })` instead). All of them or none. Needs the operator key (`SDK_API_KEY`), as `Sandbox.create`.
   *
   * @throws InvalidArgumentError for a bad count, before any call
   */
  async fork(options: { readonly count?: number } = {}): Promise<Sandbox[]> {
    const { count } = parseOptions(forkRequestSchema, options, 'sbx.fork');
    const forked = await this.#plane.call(
      'POST',
      `/v1/sandboxes/${this.sandboxId}/fork`,
      forkedSandboxesSchema,
      {
        token: operatorKey(),
        body: { count },
      },
    );
    return forked.sandboxes.map(
      (created) =>
        new Sandbox({
          sandboxId: created.sandboxId,
          accessToken: created.accessToken,
          daemonUrl: created.daemonUrl,
          plane: this.#plane,
          seq: created.seq,
          ports: { previewUrl: created.previewUrl, previewKey: created.previewKey },
        }),
    );
  }

  /** Suspends the sandbox with its memory kept. */
  async pause(): Promise<void> {
    await this.#action('pause');
  }

  /** Resumes a suspended sandbox (a running one stays as it is). */
  async connect(): Promise<this> {
    await this.#action('connect');
    return this;
  }

  /**
   * Ends the sandbox and removes every resource.
   *
   * @throws SandboxError (code `sandbox_ended`) when the sandbox has already ended
   */
  async kill(): Promise<void> {
    await this.#acting(() =>
      this.#plane.call('DELETE', `/v1/sandboxes/${this.sandboxId}`, sandboxInfoSchema, {
        token: this.#accessToken,
      }),
    );
  }

  /**
   * The sandbox's state now and at every change, until it ends: one stream that starts with the current
   * state and goes on in sequence, so no transition falls between a read and a subscription.
   */
  get state$(): Observable<SandboxState> {
    return this.#plane
      .events({ sandboxId: this.sandboxId, token: this.#accessToken, after: Math.max(0, this.#firstSeq - 1) })
      .pipe(map((event) => event.state));
  }

  /**
   * What sandboxd sees, as it happens: calls to it, requests its gateway routes received, commands
   * started and ended, route changes and the transitions of the actors it hosts (routes, the agent),
   * each with its sequence number, from the oldest sandboxd still holds. A broken connection is opened
   * again after the last number seen, so nothing is missed or repeated. Never a header value, a body or
   * output.
   *
   * @example
   * ```ts
   * sbx.events$.subscribe((event) => console.log(event.seq, event.type));
   * ```
   */
  get events$(): Observable<DaemonEvent> {
    const url = `${this.#daemon.url}/v1/events`;
    const parse = (value: unknown): DaemonEvent | undefined => daemonEventSchema.safeParse(value).data;
    return resumableFeed(
      (after) => ndjsonFeed(`${url}?after=${String(after ?? 0)}`, this.#accessToken, parse),
      (event) => event.seq,
    );
  }

  #action(verb: 'pause' | 'connect'): Promise<SandboxInfo> {
    const schema = verb === 'connect' ? connectedSandboxSchema : sandboxInfoSchema;
    return this.#acting(() =>
      this.#plane.call('POST', `/v1/sandboxes/${this.sandboxId}/${verb}`, schema, {
        token: this.#accessToken,
      }),
    );
  }

  /** Refuses before any traffic once the handle knows its sandbox ended. */
  #refuseWhenEnded(): void {
    if (this.#endReason !== undefined) {
      throw new SandboxError(`sandbox ${this.sandboxId} has ended (${this.#endReason})`, {
        code: 'sandbox_ended',
      });
    }
  }

  /**
   * Runs a call that acts on the sandbox: refused before any traffic once the handle knows its sandbox
   * ended; an answer or refusal that says it ended is remembered.
   */
  async #acting(call: () => Promise<SandboxInfo>): Promise<SandboxInfo> {
    this.#refuseWhenEnded();
    try {
      return this.#learn(await call());
    } catch (error) {
      if (error instanceof SandboxError && error.code === 'sandbox_ended') this.#endReason ??= 'ended';
      throw error;
    }
  }

  #learn(info: SandboxInfo): SandboxInfo {
    if (info.state === 'ended') this.#endReason ??= info.endReason ?? 'ended';
    return info;
  }
}
