/**
 * `Sandbox`: the handle on one isolated sandbox. It talks to the control plane for lifecycle (create,
 * connect, pause, resume, kill) and to the sandbox's daemon for commands, with the sandbox access token.
 */
import { map, type Observable } from 'rxjs';
import { z } from 'zod';
import {
  connectedSandboxSchema,
  createdSandboxSchema,
  sandboxInfoSchema,
  type SandboxEvent,
  type SandboxInfo,
} from '../protocol/control-plane-api.js';
import { AuthenticationError, InvalidArgumentError, SandboxError } from '../rules/errors.js';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { Commands } from './commands.js';
import { ControlPlaneClient, controlPlaneUrl, operatorKey } from './control-plane-client.js';
import { DaemonClient } from './daemon-client.js';
import { SandboxAgent } from './sandbox-agent.js';
import { SandboxGateways } from './sandbox-gateways.js';
import type { SecretGateway } from './secret-gateway.js';
import { SecretCache } from './secret-store/secret-cache.js';
import { resolveSandboxOptions, type SandboxOptions } from './sandbox-options.js';

/** A sandbox's state. */
export type SandboxState = SandboxInfo['state'];

export type { SandboxEvent, SandboxInfo };

const connectOptions = z.strictObject({
  accessToken: z.string().min(1, 'must not be empty').optional(),
  requestTimeoutMs: z.number().int().min(1).optional(),
  controlPlaneUrl: httpUrlSchema.optional(),
});

/** Options of `Sandbox.connect`. */
export type SandboxConnectOptions = z.input<typeof connectOptions>;

const eventsOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
});

const SANDBOX_ID = z.string().regex(/^[a-f0-9]{12}$/, 'must be a sandbox id (12 hex characters)');

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
export class Sandbox {
  /** The sandbox id. */
  readonly sandboxId: string;
  /** The sandbox access token: give it to another process so it can `Sandbox.connect`. */
  readonly accessToken: string;
  /** Commands in the sandbox (each call first reports activity, resuming a suspended sandbox). */
  readonly commands: Commands;
  readonly #plane: ControlPlaneClient;
  readonly #daemon: DaemonClient;
  #gateways: SandboxGateways;
  /** The options this handle created its sandbox with (creating handles only). */
  #createdWith: SandboxOptions | undefined;
  #agent: SandboxAgent | undefined;
  /** Why the sandbox ended, once this handle has learnt it: every later call fails before any traffic. */
  #endReason: string | undefined;
  /** The sequence number of the first state this handle saw: `state$` starts there. */
  #firstSeq = 0;

  private constructor(
    sandboxId: string,
    accessToken: string,
    daemonUrl: string,
    plane: ControlPlaneClient,
    definitions: Readonly<Record<string, SecretGateway>> = {},
    cache?: SecretCache,
    createdWith?: SandboxOptions,
  ) {
    this.#createdWith = createdWith;
    this.sandboxId = sandboxId;
    this.accessToken = accessToken;
    this.#plane = plane;
    const daemon = new DaemonClient({
      url: daemonUrl,
      accessToken,
      requestTimeoutMs: plane.requestTimeoutMs,
      beforeCall: async () => {
        await this.#action('activity');
      },
    });
    this.#daemon = daemon;
    this.commands = new Commands(daemon);
    this.#gateways = new SandboxGateways(daemon, definitions, cache);
  }

  /** The gateway routes: definitions and state on the creating handle, state only on a connected one. */
  get gateways(): SandboxGateways {
    return this.#gateways;
  }

  /**
   * @internal Opens gateways on a sandbox this handle holds without them (a pool slot taken): secrets
   * resolved now, ConfigureSandbox sent; `reincarnate` then creates with these gateways.
   */
  async openGateways(
    definitions: Readonly<Record<string, SecretGateway>>,
    cache: SecretCache,
    createdWith: SandboxOptions,
  ): Promise<void> {
    this.#gateways = new SandboxGateways(this.#daemon, definitions, cache);
    this.#createdWith = createdWith;
    await this.#gateways.configure();
  }

  /**
   * Creates a sandbox. Every argument is checked first, so a malformed one raises
   * `InvalidArgumentError` before any call.
   *
   * @throws InvalidArgumentError for a malformed option
   * @throws SandboxError when the sandbox cannot be launched
   */
  static async create(options: SandboxOptions = {}): Promise<Sandbox> {
    const o = resolveSandboxOptions(options);
    if (o.pool !== undefined) return o.pool.take();
    if (o.persist !== undefined) {
      throw new SandboxError('persistence is not in this build yet', {
        code: 'unimplemented',
        failureClass: 'UnimplementedError',
      });
    }
    const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl), o.requestTimeoutMs);
    const created = await plane.call('POST', '/v1/sandboxes', createdSandboxSchema, {
      token: operatorKey(),
      body: {
        template: o.template,
        allowInternetAccess: o.allowInternetAccess,
        timeoutMs: o.timeoutMs,
        idlePolicy: { maxIdleSeconds: o.idlePolicy.maxIdleSeconds, autoResume: o.idlePolicy.autoResume },
        memoryMb: o.memoryMb,
        cpus: o.cpus,
      },
    });
    const sbx = new Sandbox(
      created.sandboxId,
      created.accessToken,
      created.daemonUrl,
      plane,
      o.gateways,
      o.secretCache ?? new SecretCache(),
      options,
    );
    sbx.#firstSeq = created.seq;
    if (Object.keys(o.gateways).length === 0) return sbx;
    try {
      await sbx.gateways.configure();
    } catch (error) {
      if (!o.keepOnFailure) await sbx.kill().catch(() => undefined);
      throw error;
    }
    return sbx;
  }

  /**
   * Connects to an existing sandbox (resuming it when suspended). The token comes from `accessToken` or
   * the environment variable `SDK_ACCESS_TOKEN`.
   *
   * @throws AuthenticationError without a token, or with one the sandbox refuses
   */
  static async connect(sandboxId: string, options: SandboxConnectOptions = {}): Promise<Sandbox> {
    const id = parseOptions(SANDBOX_ID, sandboxId, 'Sandbox.connect', ['sandboxId']);
    const o = parseOptions(connectOptions, options, 'Sandbox.connect');
    const token = o.accessToken ?? process.env.SDK_ACCESS_TOKEN;
    if (token === undefined || token === '') {
      throw new AuthenticationError(
        'Sandbox.connect needs the access token (accessToken or SDK_ACCESS_TOKEN)',
      );
    }
    const plane = new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl), o.requestTimeoutMs);
    const connected = await plane.call('POST', `/v1/sandboxes/${id}/connect`, connectedSandboxSchema, {
      token,
    });
    const sbx = new Sandbox(id, token, connected.daemonUrl, plane);
    sbx.#firstSeq = connected.seq;
    // SPEC Authentication 1: a refused token leaves the gateways empty; the first authenticated call raises.
    await sbx.gateways.readState().catch((error: unknown) => {
      if (!(error instanceof AuthenticationError)) throw error;
    });
    return sbx;
  }

  /**
   * State changes of every sandbox of a control plane, each with its sequence number: the current state
   * of every sandbox first, then every change. Needs the operator key (`SDK_API_KEY`).
   *
   * @example
   * ```ts
   * Sandbox.events().subscribe(({ sandboxId, state }) => console.log(sandboxId, state));
   * ```
   */
  static events(options: { controlPlaneUrl?: string } = {}): Observable<SandboxEvent> {
    const o = parseOptions(eventsOptions, options, 'Sandbox.events');
    return new ControlPlaneClient(controlPlaneUrl(o.controlPlaneUrl)).events({ token: operatorKey() });
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

  /** The agent of this sandbox; touching it makes no call. */
  get agent(): SandboxAgent {
    this.#agent ??= new SandboxAgent(this.sandboxId);
    return this.#agent;
  }

  /** The sandbox's facts now (also once it has ended: they come from the control plane's record). */
  async getInfo(): Promise<SandboxInfo> {
    return this.#learn(
      await this.#plane.call('GET', `/v1/sandboxes/${this.sandboxId}`, sandboxInfoSchema, {
        token: this.accessToken,
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
        token: this.accessToken,
      }),
    );
  }

  /**
   * The sandbox's state now and at every change, until it ends: one stream that starts with the current
   * state and goes on in sequence, so no transition falls between a read and a subscription.
   */
  get state$(): Observable<SandboxState> {
    return this.#plane
      .events({ sandboxId: this.sandboxId, token: this.accessToken, after: Math.max(0, this.#firstSeq - 1) })
      .pipe(map((event) => event.state));
  }

  #action(verb: 'pause' | 'connect' | 'activity'): Promise<SandboxInfo> {
    const schema = verb === 'connect' ? connectedSandboxSchema : sandboxInfoSchema;
    return this.#acting(() =>
      this.#plane.call('POST', `/v1/sandboxes/${this.sandboxId}/${verb}`, schema, {
        token: this.accessToken,
      }),
    );
  }

  /**
   * Runs a call that acts on the sandbox (every daemon call goes through `activity` first): refused
   * before any traffic once the handle knows its sandbox ended; an answer or refusal that says it ended
   * is remembered.
   */
  async #acting(call: () => Promise<SandboxInfo>): Promise<SandboxInfo> {
    if (this.#endReason !== undefined) {
      throw new SandboxError(`sandbox ${this.sandboxId} has ended (${this.#endReason})`, {
        code: 'sandbox_ended',
      });
    }
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
