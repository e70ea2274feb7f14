/**
 * E2B's `Sandbox` over the native one: `create` (template mapped, E2B's defaults), `connect`, `kill`,
 * `getInfo`, `list`, `pause`, `isRunning`, with `files` and `commands` in E2B's shapes and the native
 * handle as `native`. Per SPEC "Compatibility shim" the handle has no `agent` and `create` refuses
 * `gateways`: create with the native SDK to use the agent. What only E2B's cloud has (hosts on its
 * domains, metrics, snapshots, timeouts changed after create) raises `NotSupportedError` naming it.
 */
import { SdkError } from '../../../rules/errors.js';
import { sandboxInfoSchema } from '../../../protocol/control-plane-api.js';
import { ControlPlaneClient } from '../../control-plane-client.js';
import { Sandbox as NativeSandbox } from '../../sandbox.js';
import { launchSandbox, openSandbox } from '../../sandbox-lifecycle.js';
import { resolveSandboxOptions } from '../../sandbox-options.js';
import { putSecretEnvs } from '../../sandbox-secrets.js';
import { SecretCache } from '../../secret-store/secret-cache.js';
import { Commands, Pty } from './commands.js';
import {
  NATIVE_DEFAULT_TEMPLATE,
  checkRequestOpts,
  requireApiKey,
  resolveConnection,
  type ConnectionOpts,
} from './connection.js';
import {
  AuthenticationError,
  NotSupportedError,
  SandboxNotFoundError,
  e2bCall,
  invalidArgument,
} from './errors.js';
import { Filesystem } from './files.js';
import { resolveCreate, type SandboxOpts } from './sandbox-opts.js';
import {
  SandboxPaginator,
  e2bInfo,
  type SandboxInfo,
  type SandboxListOpts,
  type SandboxState,
} from './sandbox-info.js';

export { SandboxPaginator, type SandboxInfo, type SandboxListOpts, type SandboxState };

/** Options of `Sandbox.connect`: E2B's, plus `accessToken` for a sandbox another process created. */
export interface SandboxConnectOpts extends ConnectionOpts {
  /**
   * The sandbox's access token (`sbx.native.accessToken` where it was created), else `SDK_ACCESS_TOKEN`;
   * not needed in the process that created or connected the sandbox.
   */
  accessToken?: string;
  /**
   * E2B's: the lifetime from now, never shortened. Within the lifetime left it changes nothing (as in
   * E2B); a longer one is `NotSupportedError` (the control plane sets a lifetime at create only).
   */
  timeoutMs?: number;
}

/**
 * Access tokens of the sandboxes this process created or connected, by id: E2B connects with the key
 * alone, so `Sandbox.connect(id)` needs no token for them.
 */
const known = new Map<string, string>();

/** True when `error` says the sandbox is gone (E2B answers such calls with `false`). */
const gone = (error: unknown): boolean => error instanceof SandboxNotFoundError;

function notSupported(feature: string, why: string): NotSupportedError {
  return new NotSupportedError(feature, why);
}

const NO_SET_TIMEOUT =
  "the control plane sets a sandbox's lifetime at create only (timeoutMs of Sandbox.create)";
const NO_HOSTS = "E2B's hosted domains are not served; sandbox ports are reachable from inside the sandbox";
const NO_METRICS = "metrics are E2B's cloud's";
const NO_SNAPSHOTS = "snapshots are E2B's cloud's; pause keeps a sandbox's memory";

/**
 * An E2B-compatible sandbox. Change only the import of a program written for E2B:
 *
 * @example
 * ```ts
 * import { Sandbox } from 'sdk/compat/e2b';
 * const sbx = await Sandbox.create();
 * const result = await sbx.commands.run('echo "Hello, World!"');
 * await sbx.files.write('hello.txt', result.stdout);
 * await sbx.kill();
 * ```
 */
export class Sandbox {
  /** The sandbox id. */
  readonly sandboxId: string;
  /** Files, E2B's way (relative paths under `/home/user`). */
  readonly files: Filesystem;
  /** Commands, E2B's way. */
  readonly commands: Commands;
  /** Terminals are not offered: every method raises `NotSupportedError`. */
  readonly pty: Pty;
  readonly #native: NativeSandbox;

  private constructor(native: NativeSandbox) {
    this.sandboxId = native.sandboxId;
    this.#native = native;
    // E2B's health check: a call that broke tells a gone sandbox (TimeoutError) from other failures.
    const probe = async (): Promise<boolean | undefined> => {
      try {
        return (await native.getInfo()).state !== 'ended';
      } catch (error) {
        const code = error instanceof SdkError ? error.code : undefined;
        return code === 'sandbox_not_found' || code === 'sandbox_ended' ? false : undefined;
      }
    };
    this.files = new Filesystem(native.files, probe);
    this.commands = new Commands(native.commands, probe);
    this.pty = new Pty();
    known.set(native.sandboxId, native.accessToken);
  }

  /**
   * The native handle. Its `agent.run()` fails with `InvalidArgumentError` before any call: a shim
   * sandbox has no gateways. Create the sandbox with the native SDK to use the agent.
   */
  get native(): NativeSandbox {
    return this.#native;
  }

  /** E2B's git helper is not offered. */
  get git(): never {
    throw notSupported('git', 'run git with commands.run');
  }

  /**
   * Creates a sandbox from a template (E2B's `base`, our `sdk-base`, by default).
   *
   * @throws InvalidArgumentError for `gateways`, an unknown option or a malformed value, before any call
   * @throws NotSupportedError for an option only E2B's cloud has (`domain`, `metadata`, `mcp`, …)
   * @throws AuthenticationError without a key (`apiKey`, `SDK_API_KEY`) or with a wrong one
   */
  static async create(opts?: SandboxOpts): Promise<Sandbox>;
  static async create(template: string, opts?: SandboxOpts): Promise<Sandbox>;
  static async create(templateOrOpts?: string | SandboxOpts, opts?: SandboxOpts): Promise<Sandbox> {
    const resolved = resolveCreate(templateOrOpts, opts);
    const native = await e2bCall(async () => {
      const options = resolveSandboxOptions(resolved.native);
      const launched = await launchSandbox(options, resolved.apiKey);
      const sbx = await openSandbox(launched, {
        creating: { gateways: {}, secretCache: new SecretCache(), createdWith: resolved.native },
        keepOnFailure: false,
      });
      // E2B's sandbox-wide envs live in sandboxd (as the native `secrets`), so every command gets them,
      // also from a handle connected in another process; a command's own `envs` win. Under them, what
      // E2B's envd gives every command (not E2B_TEAM_ID: there are no teams here), as the Python shim.
      const daemon = {
        url: launched.daemonUrl,
        accessToken: launched.accessToken,
        requestTimeoutMs: launched.plane.requestTimeoutMs,
      };
      const envs = {
        E2B_SANDBOX: 'true',
        E2B_SANDBOX_ID: launched.sandboxId,
        E2B_TEMPLATE_ID: resolved.native.template ?? NATIVE_DEFAULT_TEMPLATE,
        ...resolved.envs,
      };
      await putSecretEnvs(daemon, envs).catch(async (error: unknown) => {
        await sbx.kill().catch(() => undefined);
        throw error;
      });
      return sbx;
    });
    return new Sandbox(native);
  }

  /**
   * Connects to a sandbox, resuming it when paused. In the process that created (or connected) it the
   * id is enough; elsewhere give its access token (`accessToken` or `SDK_ACCESS_TOKEN`), because
   * sandboxd takes the sandbox's token, not the operator key.
   *
   * @throws SandboxNotFoundError when there is no such sandbox or it has ended
   * @throws AuthenticationError without the sandbox's access token
   */
  static async connect(sandboxId: string, opts: SandboxConnectOpts = {}): Promise<Sandbox> {
    const connection = resolveConnection('Sandbox.connect', opts, ['accessToken', 'timeoutMs']);
    checkLifetimeOpt('Sandbox.connect', opts.timeoutMs);
    checkSandboxId(sandboxId);
    // A longer lifetime is refused before the sandbox is touched, when the key can tell.
    if (opts.timeoutMs !== undefined && connection.apiKey !== undefined) {
      keepsLifetime(
        'Sandbox.connect',
        await Sandbox.getInfo(sandboxId, { apiKey: connection.apiKey }),
        opts.timeoutMs,
      );
    }
    const accessToken = opts.accessToken ?? known.get(sandboxId) ?? process.env.SDK_ACCESS_TOKEN;
    if (accessToken === undefined || accessToken === '') {
      // A sandbox that is gone is SandboxNotFoundError, as in E2B, whoever asks (the key can tell).
      if (connection.apiKey !== undefined) await Sandbox.getInfo(sandboxId, { apiKey: connection.apiKey });
      throw new AuthenticationError(
        `Sandbox.connect: sandbox ${sandboxId} was not created in this process, so its access token is needed: pass accessToken (sbx.native.accessToken where it was created) or set SDK_ACCESS_TOKEN`,
      );
    }
    const native = await e2bCall(() =>
      NativeSandbox.connect(sandboxId, {
        accessToken,
        controlPlaneUrl: connection.controlPlaneUrl,
        ...(connection.requestTimeoutMs === undefined
          ? {}
          : { requestTimeoutMs: connection.requestTimeoutMs }),
      }),
    );
    // The native connect answers for an ended sandbox too; E2B says it is not found.
    const info = e2bInfo(await e2bCall(() => native.getInfo()));
    if (opts.timeoutMs !== undefined) keepsLifetime('Sandbox.connect', info, opts.timeoutMs);
    return new Sandbox(native);
  }

  /** Ends a sandbox by id with the key; false when it did not exist or had ended. */
  static async kill(sandboxId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    const { plane, key } = operatorCall('Sandbox.kill', opts);
    try {
      known.delete(checkSandboxId(sandboxId));
      await e2bCall(() =>
        plane.call('DELETE', `/v1/sandboxes/${encodeURIComponent(sandboxId)}`, sandboxInfoSchema, {
          token: key,
        }),
      );
      return true;
    } catch (error) {
      if (gone(error)) return false;
      throw error;
    }
  }

  /** A sandbox's facts by id, with the key. @throws SandboxNotFoundError when missing or ended */
  static async getInfo(sandboxId: string, opts: ConnectionOpts = {}): Promise<SandboxInfo> {
    const { plane, key } = operatorCall('Sandbox.getInfo', opts);
    checkSandboxId(sandboxId);
    return e2bInfo(
      await e2bCall(() =>
        plane.call('GET', `/v1/sandboxes/${encodeURIComponent(sandboxId)}`, sandboxInfoSchema, {
          token: key,
        }),
      ),
    );
  }

  /** Pauses a sandbox by id, with the key; false when it was paused already. */
  static async pause(sandboxId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    const { plane, key } = operatorCall('Sandbox.pause', opts);
    checkSandboxId(sandboxId);
    const info = await Sandbox.getInfo(sandboxId, opts);
    if (info.state === 'paused') return false;
    await e2bCall(() =>
      plane.call('POST', `/v1/sandboxes/${encodeURIComponent(sandboxId)}/pause`, sandboxInfoSchema, {
        token: key,
      }),
    );
    return true;
  }

  /** E2B's `betaPause`: `pause`. */
  static async betaPause(sandboxId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    return Sandbox.pause(sandboxId, opts);
  }

  /** The running and paused sandboxes of the control plane, with the key (one page per `limit`). */
  static list(opts: SandboxListOpts = {}): SandboxPaginator {
    const { plane, key } = operatorCall('Sandbox.list', opts, ['query', 'order', 'limit', 'nextToken']);
    if (opts.query?.metadata !== undefined && Object.keys(opts.query.metadata).length > 0) {
      throw notSupported(
        'Sandbox.list({ query: { metadata } })',
        'the control plane keeps no metadata of a sandbox',
      );
    }
    if (opts.query?.startedAfter !== undefined) {
      throw notSupported(
        'Sandbox.list({ query: { startedAfter } })',
        "the control plane keeps no sandbox's start time",
      );
    }
    return new SandboxPaginator(plane, key, opts);
  }

  /** @throws NotSupportedError: a sandbox's lifetime is set at create only */
  static readonly setTimeout: (
    sandboxId: string,
    timeoutMs: number,
    opts?: ConnectionOpts,
  ) => Promise<never> = () => Promise.reject(notSupported('Sandbox.setTimeout', NO_SET_TIMEOUT));

  /** @throws NotSupportedError: metrics are E2B's cloud's */
  static readonly getMetrics: (sandboxId: string, opts?: ConnectionOpts) => Promise<never> = () =>
    Promise.reject(notSupported('Sandbox.getMetrics', NO_METRICS));

  /** E2B's deprecated `getFullInfo`: `getInfo`. */
  static async getFullInfo(sandboxId: string, opts: ConnectionOpts = {}): Promise<SandboxInfo> {
    return Sandbox.getInfo(sandboxId, opts);
  }

  /** @throws NotSupportedError: egress is set at create (`allowInternetAccess`) */
  static readonly updateNetwork: (sandboxId: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('Sandbox.updateNetwork', 'egress is set at create (allowInternetAccess)'));

  /** @throws NotSupportedError: snapshots are E2B's cloud's */
  static readonly createSnapshot: (sandboxId: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('Sandbox.createSnapshot', NO_SNAPSHOTS));

  /** @throws NotSupportedError: snapshots are E2B's cloud's */
  static readonly listSnapshots: (opts?: object) => never = () => {
    throw notSupported('Sandbox.listSnapshots', NO_SNAPSHOTS);
  };

  /** @throws NotSupportedError: snapshots are E2B's cloud's */
  static readonly deleteSnapshot: (snapshotId: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('Sandbox.deleteSnapshot', NO_SNAPSHOTS));

  /** @throws NotSupportedError: forking sandboxes is E2B's cloud's */
  static readonly fork: (sandboxId: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('Sandbox.fork', "forking sandboxes is E2B's cloud's"));

  /**
   * Resumes the sandbox when paused (E2B's instance `connect`). A `timeoutMs` within the lifetime left
   * changes nothing, as in E2B (connect never shortens it); a longer one is `NotSupportedError`.
   */
  async connect(opts?: SandboxConnectOpts): Promise<this> {
    checkRequestOpts('sbx.connect', opts, ['requestTimeoutMs', 'apiKey', 'timeoutMs']);
    checkLifetimeOpt('sbx.connect', opts?.timeoutMs);
    if (opts?.timeoutMs !== undefined) keepsLifetime('connect', await this.getInfo(), opts.timeoutMs);
    await e2bCall(() => this.#native.connect());
    return this;
  }

  /** True while the sandbox runs (false when paused). */
  async isRunning(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<boolean> {
    try {
      return (await this.getInfo(opts)).state === 'running';
    } catch (error) {
      if (gone(error)) return false;
      throw error;
    }
  }

  /** The sandbox's facts. @throws SandboxNotFoundError once it has ended */
  async getInfo(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<SandboxInfo> {
    checkRequestOpts('sbx.getInfo', opts);
    return e2bInfo(await e2bCall(() => this.#native.getInfo()));
  }

  /** Ends the sandbox; false when it had ended already. */
  async kill(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<boolean> {
    checkRequestOpts('sbx.kill', opts);
    known.delete(this.sandboxId);
    try {
      await e2bCall(() => this.#native.kill());
      return true;
    } catch (error) {
      if (gone(error)) return false;
      throw error;
    }
  }

  /** Pauses the sandbox, memory kept (resume with `connect`); false when it was paused already. */
  async pause(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<boolean> {
    if ((await this.getInfo(opts)).state === 'paused') return false;
    await e2bCall(() => this.#native.pause());
    return true;
  }

  /** E2B's `betaPause`: `pause`. */
  async betaPause(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<boolean> {
    return this.pause(opts);
  }

  /** @throws NotSupportedError: the control plane sets a sandbox's lifetime at create only */
  readonly setTimeout: (timeoutMs: number, opts?: ConnectionOpts) => Promise<never> = () =>
    Promise.reject(notSupported('setTimeout', NO_SET_TIMEOUT));

  /** @throws NotSupportedError: E2B's hosted domains are not served */
  readonly getHost: (port: number) => never = () => {
    throw notSupported('getHost', NO_HOSTS);
  };

  /** @throws NotSupportedError: metrics are E2B's cloud's */
  readonly getMetrics: (opts?: ConnectionOpts) => Promise<never> = () =>
    Promise.reject(notSupported('getMetrics', NO_METRICS));

  /** @throws NotSupportedError: snapshots are E2B's cloud's */
  readonly createSnapshot: (opts?: object) => Promise<never> = () =>
    Promise.reject(
      notSupported('createSnapshot', "snapshots are E2B's cloud's; pause keeps a sandbox's memory"),
    );

  /** @throws NotSupportedError: signed URLs are on E2B's hosted domains */
  readonly uploadUrl: (path?: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('uploadUrl', `${NO_HOSTS}; use files.write`));

  /** @throws NotSupportedError: signed URLs are on E2B's hosted domains */
  readonly downloadUrl: (path: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('downloadUrl', `${NO_HOSTS}; use files.read`));

  /** @throws NotSupportedError: E2B's MCP gateway is not offered */
  readonly getMcpUrl: () => never = () => {
    throw notSupported('getMcpUrl', "E2B's MCP gateway is not offered");
  };

  /** @throws NotSupportedError: E2B's MCP gateway is not offered */
  readonly getMcpToken: () => Promise<never> = () =>
    Promise.reject(notSupported('getMcpToken', "E2B's MCP gateway is not offered"));

  /** @throws NotSupportedError: egress is set at create (`allowInternetAccess`) */
  readonly updateNetwork: (opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('updateNetwork', 'egress is set at create (allowInternetAccess)'));

  /** @throws NotSupportedError: snapshots are E2B's cloud's */
  readonly listSnapshots: (opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('listSnapshots', "snapshots are E2B's cloud's"));

  /** @throws NotSupportedError: snapshots are E2B's cloud's */
  readonly deleteSnapshot: (snapshotId?: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('deleteSnapshot', "snapshots are E2B's cloud's"));

  /** @throws NotSupportedError: forking sandboxes is E2B's cloud's */
  readonly fork: (opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('fork', "forking sandboxes is E2B's cloud's"));
}

/**
 * A sandbox id, checked before any call: not a string is an `InvalidArgumentError`; a string that is
 * no id the control plane makes (12 hex characters) names no sandbox, so `SandboxNotFoundError`, E2B's
 * answer for an unknown id (`Sandbox.kill` turns it into `false`, as E2B does).
 */
function checkSandboxId(sandboxId: unknown): string {
  if (typeof sandboxId !== 'string' || sandboxId === '') {
    throw invalidArgument('sandboxId must be a sandbox id (a non-empty string)', 'sandboxId');
  }
  if (!/^[a-f0-9]{12}$/.test(sandboxId)) {
    throw new SandboxNotFoundError(
      `Sandbox ${sandboxId} not found (ids of this control plane are 12 hex characters)`,
      { code: 'sandbox_not_found' },
    );
  }
  return sandboxId;
}

/** `timeoutMs` of a connect: a whole number of milliseconds, 0 or more. */
function checkLifetimeOpt(call: string, timeoutMs: unknown): void {
  if (timeoutMs === undefined) return;
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 0) {
    throw invalidArgument(
      `${call}: timeoutMs must be a whole number of milliseconds, 0 or more`,
      'timeoutMs',
    );
  }
}

/**
 * E2B's connect never shortens a lifetime and extends it to `timeoutMs` from now: within the lifetime
 * left that is no change, which we honour; past it the control plane cannot extend it.
 */
function keepsLifetime(call: string, info: SandboxInfo, timeoutMs: number): void {
  if (Date.now() + timeoutMs > info.endAt.getTime()) {
    throw notSupported(
      `${call}({ timeoutMs })`,
      `${NO_SET_TIMEOUT}; a timeoutMs within the lifetime left (until ${info.endAt.toISOString()}) is accepted`,
    );
  }
}

/** The control plane and key of an operator call (`list`, `kill`, `getInfo` by id). */
function operatorCall(
  call: string,
  opts: ConnectionOpts,
  extraKeys: readonly string[] = [],
): { plane: ControlPlaneClient; key: string } {
  const connection = resolveConnection(call, opts, extraKeys);
  return {
    plane: new ControlPlaneClient(connection.controlPlaneUrl, connection.requestTimeoutMs),
    key: requireApiKey(call, connection),
  };
}
