/**
 * E2B's `Sandbox` handle over the native one, and the calls that give one: `create` (template mapped,
 * E2B's defaults, metadata, or from a snapshot id), `connect`, `fork` (by id and on a handle). On the
 * handle: `connect`, `kill`, `getInfo`, `setTimeout`, `pause`, `isRunning`, `getMetrics`,
 * `createSnapshot`, `fork`, `listSnapshots`, `deleteSnapshot`, `updateNetwork` (the egress policy), with
 * `files` and `commands` in E2B's shapes and the native handle as `native`. The calls by id that need no
 * handle (`Sandbox.kill`, `Sandbox.list`, …) are `sandbox-api.ts`' `SandboxApi`, which `Sandbox` extends
 * as E2B's does. Per SPEC "Compatibility shim" the handle has no `agent` and `create` refuses `gateways`:
 * create with the native SDK to use the agent. `getHost` is the port's preview URL (`sbx.native.ports`)
 * as a host and path. What only E2B's cloud has (signed file URLs and MCP on its domains, its
 * sandbox-wide traffic token) raises `NotSupportedError` naming it. The snapshot and fork calls
 * are `sandbox-snapshots.ts`', which the class delegates to.
 */
import { SdkError } from '../../../rules/errors.js';
import { LIMITS } from '../../../rules/limits.js';
import { Sandbox as NativeSandbox, openHandle } from '../../sandbox.js';
import { launchSandbox } from '../../sandbox-lifecycle.js';
import { resolveSandboxOptions } from '../../sandbox-options.js';
import { putSecretEnvs } from '../../sandbox-secrets.js';
import { SecretCache } from '../../secret-store/secret-cache.js';
import { Commands } from './commands.js';
import { Pty } from './pty.js';
import { checkRequestOpts, resolveConnection, type ConnectionOpts } from './connection.js';
import { AuthenticationError, NotSupportedError, e2bCall, invalidArgument, toE2BError } from './errors.js';
import { Filesystem } from './files.js';
import { e2bMetric, metricsRange, type SandboxMetrics, type SandboxMetricsOpts } from './sandbox-metrics.js';
import { NO_TRAFFIC_TOKEN, updateEgress, type SandboxNetworkUpdate } from './network.js';
import { checkSandboxId } from './operator-call.js';
import { SandboxApi, checkTimeout, gone, knownTokens } from './sandbox-api.js';
import { resolveCreate, type ResolvedCreate, type SandboxOpts } from './sandbox-opts.js';
import { e2bInfo, type SandboxInfo } from './sandbox-info.js';
import { createSnapshotOf, forkById, forkOf, withKey } from './sandbox-snapshots.js';
import type {
  CreateSnapshotOpts,
  SandboxForkOpts,
  SnapshotInfo,
  SnapshotListOpts,
  SnapshotPaginator,
} from './snapshots.js';

/** Options of `Sandbox.connect`: E2B's, plus `accessToken` for a sandbox another process created. */
export interface SandboxConnectOpts extends ConnectionOpts {
  /**
   * The sandbox's access token (`sbx.native.accessToken` where it was created), else `SDK_ACCESS_TOKEN`;
   * not needed in the process that created or connected the sandbox.
   */
  accessToken?: string;
  /**
   * E2B's: the lifetime from now, never shortened. Within the lifetime left it changes nothing; past it
   * the sandbox is set to end `timeoutMs` from now once connected (`setTimeout`), as E2B extends a
   * running sandbox's. At most 8 h (from the sandbox's creation: `InvalidArgumentError` past that).
   */
  timeoutMs?: number;
}

function notSupported(feature: string, why: string): NotSupportedError {
  return new NotSupportedError(feature, why);
}

const NO_SIGNED_URLS = "signed file URLs are on E2B's hosted domains";

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
export class Sandbox extends SandboxApi {
  /** The sandbox id. */
  readonly sandboxId: string;
  /** Files, E2B's way (relative paths under `/home/user`). */
  readonly files: Filesystem;
  /** Commands, E2B's way. */
  readonly commands: Commands;
  /** Terminals, E2B's way (`pty.ts`): over the native `sbx.pty`. */
  readonly pty: Pty;
  readonly #native: NativeSandbox;
  /** The key `create` or `connect` was given (E2B's handle keeps its connection's): `fork` needs one. */
  readonly #apiKey: string | undefined;
  /** `envs` of the `create` that made this handle (or of the sandbox it forked): `fork` gives them on. */
  readonly #envs: Readonly<Record<string, string>>;

  private constructor(native: NativeSandbox, apiKey?: string, envs: Readonly<Record<string, string>> = {}) {
    super();
    this.sandboxId = native.sandboxId;
    this.#native = native;
    this.#apiKey = apiKey;
    this.#envs = envs;
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
    this.pty = new Pty(native.pty, this.commands);
    knownTokens.set(native.sandboxId, native.accessToken);
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
   * Creates a sandbox from a template (E2B's `base`, our `sdk-base`, by default), or from a snapshot
   * when its id is given where the template goes (`Sandbox.create(snapshot.snapshotId)`, as E2B): the
   * snapshot's template, isolation and limits, its files (and with a memory snapshot its processes).
   *
   * @throws InvalidArgumentError for `gateways`, an unknown option or a malformed value (`metadata` past
   *   its rules included), before any call
   * @throws NotSupportedError for an option only E2B's cloud has (`domain`, `mcp`, `iam`, …)
   * @throws AuthenticationError without a key (`apiKey`, `SDK_API_KEY`) or with a wrong one
   */
  static async create(opts?: SandboxOpts): Promise<Sandbox>;
  static async create(template: string, opts?: SandboxOpts): Promise<Sandbox>;
  static async create(templateOrOpts?: string | SandboxOpts, opts?: SandboxOpts): Promise<Sandbox> {
    return Sandbox.#launch(resolveCreate(templateOrOpts, opts));
  }

  /** A handle on a new shim sandbox (`create`, and each copy of `fork`), with its key and `envs`. */
  static async #launch(resolved: ResolvedCreate): Promise<Sandbox> {
    return new Sandbox(await launchE2B(resolved), resolved.apiKey, resolved.envs);
  }

  /**
   * Connects to a sandbox, resuming it when paused. In the process that created (or connected) it the
   * id is enough; elsewhere give its access token (`accessToken` or `SDK_ACCESS_TOKEN`), because
   * sandboxd takes the sandbox's token, not the operator key. A `timeoutMs` past the lifetime left sets
   * the sandbox to end `timeoutMs` from now (E2B's connect extends, never shortens).
   *
   * @throws SandboxNotFoundError when there is no such sandbox or it has ended
   * @throws AuthenticationError without the sandbox's access token
   * @throws InvalidArgumentError for a `timeoutMs` past 8 h (from now, before any call, or from the
   *   sandbox's creation, once connected)
   */
  static async connect(sandboxId: string, opts: SandboxConnectOpts = {}): Promise<Sandbox> {
    const connection = resolveConnection('Sandbox.connect', opts, ['accessToken', 'timeoutMs']);
    checkLifetimeOpt('Sandbox.connect', opts.timeoutMs);
    checkSandboxId(sandboxId);
    const accessToken = opts.accessToken ?? knownTokens.get(sandboxId) ?? process.env.SDK_ACCESS_TOKEN;
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
    if (opts.timeoutMs !== undefined) await extendLifetime(native, info, opts.timeoutMs);
    return new Sandbox(native, connection.apiKey);
  }

  /**
   * Forks a sandbox by id, with the key, as `fork` on a handle (the copies get no `envs` of its create:
   * only the handle that created it knows them).
   */
  static async fork(sandboxId: string, opts: SandboxForkOpts = {}): Promise<Array<Sandbox | Error>> {
    return forkById(sandboxId, opts, (copy) => Sandbox.#launch(copy));
  }

  /**
   * Resumes the sandbox when paused (E2B's instance `connect`). A `timeoutMs` within the lifetime left
   * changes nothing, as in E2B (connect never shortens it); past it the sandbox is set to end
   * `timeoutMs` from now (`setTimeout`).
   */
  async connect(opts?: SandboxConnectOpts): Promise<this> {
    checkRequestOpts('sbx.connect', opts, ['requestTimeoutMs', 'apiKey', 'timeoutMs']);
    checkLifetimeOpt('sbx.connect', opts?.timeoutMs);
    await e2bCall(() => this.#native.connect());
    if (opts?.timeoutMs !== undefined)
      await extendLifetime(this.#native, await this.getInfo(), opts.timeoutMs);
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

  /**
   * The sandbox's facts: its template, `metadata`, `startedAt`, `endAt`, state, egress.
   *
   * @throws SandboxNotFoundError once it has ended
   */
  async getInfo(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<SandboxInfo> {
    checkRequestOpts('sbx.getInfo', opts);
    return e2bInfo(await e2bCall(() => this.#native.getInfo()));
  }

  /** Ends the sandbox; false when it had ended already. */
  async kill(opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<boolean> {
    checkRequestOpts('sbx.kill', opts);
    knownTokens.delete(this.sandboxId);
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

  /**
   * Sets the sandbox to end `timeoutMs` from now, sooner or later than before (E2B's `setTimeout`; the
   * native `sbx.setTimeout`). A paused sandbox stays paused, its lifetime counting on. E2B caps a
   * sandbox's life at 24 h (Pro); here it is 8 h from its creation, running plus suspended.
   *
   * @example
   * ```ts
   * await sbx.setTimeout(30_000); // ends 30 s from now
   * ```
   * @throws InvalidArgumentError for a `timeoutMs` that is not a whole number from 1 to 28 800 000 (8 h),
   *   before any call, or that reaches past 8 h from the sandbox's creation (nothing changed)
   * @throws SandboxNotFoundError once the sandbox has ended
   */
  async setTimeout(timeoutMs: number, opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>): Promise<void> {
    checkRequestOpts('sbx.setTimeout', opts);
    const checked = checkTimeout('sbx.setTimeout', timeoutMs);
    await e2bCall(() => this.#native.setTimeout(checked));
  }

  /**
   * Where `port` of the sandbox (its `127.0.0.1:<port>`) is reached from outside, E2B's `getHost`: the
   * port's preview URL (`sbx.native.ports.url`) without its scheme, its token and the slash after it.
   * Without a preview domain that is `<control plane host:port>/v1/sandboxes/<id>/ports/<port>`; with
   * `sdk serve --preview-domain <domain>` it is E2B's shape, `<port>-<id>.<domain>` (with the control
   * plane's port unless 80). Makes no call. What differs from E2B's `3000-<id>.e2b.app`:
   * - the control plane serves plain HTTP: write `http://${sbx.getHost(3000)}`, not `https://` (as
   *   E2B's own tests do in its debug mode);
   * - it may hold a path: append yours after a slash, `http://${host}/api` (the bare host is answered with
   *   a 308 to itself with a slash, which `fetch` and browsers follow);
   * - a port is private until `sbx.native.ports.expose(port, { public: true })`, where E2B's are public
   *   by default: a request without the port's token, `sbx.native.ports.token(port)` in the
   *   `x-sdk-preview-token` header, is refused (401); a browser opens `sbx.native.ports.url(port)`, whose
   *   token becomes a cookie. There is no `trafficAccessToken` (below).
   *
   * @example
   * ```ts
   * await sbx.commands.run('python3 -m http.server 3000', { background: true });
   * await sbx.native.ports.expose(3000, { public: true }); // E2B's public URL; else send the token
   * const res = await fetch(`http://${sbx.getHost(3000)}/`);
   * ```
   * @throws InvalidArgumentError for a port out of 1-65535, before anything else
   */
  getHost(port: number): string {
    let url: URL;
    try {
      url = new URL(this.#native.ports.url(port));
    } catch (error) {
      throw toE2BError(error);
    }
    return `${url.host}${url.pathname.replace(/\/$/, '')}`;
  }

  /**
   * E2B's token for a sandbox whose public traffic is restricted (`network: { allowPublicTraffic: false
   * }`, refused here), sent in the `e2b-traffic-access-token` header. Not offered: preview tokens here are
   * per port. A port's token is `sbx.native.ports.token(port)`, sent in `x-sdk-preview-token`.
   *
   * @throws NotSupportedError always
   */
  get trafficAccessToken(): never {
    throw notSupported('trafficAccessToken', NO_TRAFFIC_TOKEN);
  }

  /**
   * The sandbox's metrics samples (CPU, memory, disk) taken every few seconds while it ran, oldest
   * first, those in `[start, end]` when given (`sbx.native.getMetrics()` adds network bytes).
   *
   * @throws InvalidArgumentError for a malformed `start` / `end` or option, before any call
   */
  async getMetrics(opts?: SandboxMetricsOpts): Promise<SandboxMetrics[]> {
    checkRequestOpts('getMetrics', opts, ['requestTimeoutMs', 'apiKey', 'start', 'end']);
    const range = metricsRange('getMetrics', opts);
    return (await e2bCall(() => this.#native.getMetrics(range))).map(e2bMetric);
  }

  /**
   * Takes a snapshot of the sandbox, which goes on running; `Sandbox.create(snapshotId)` starts a new
   * sandbox from it. E2B's snapshot keeps the memory (processes go on in the copy): a gVisor sandbox's
   * does (create it with `SDK_ISOLATION=gvisor`); of a namespace sandbox, whose snapshots hold its files
   * only, it is refused unless `keepMemory: false`.
   *
   * @throws NotSupportedError for `name`, and for a memory snapshot of a namespace sandbox
   * @throws SandboxNotFoundError once the sandbox has ended
   */
  async createSnapshot(opts: CreateSnapshotOpts = {}): Promise<SnapshotInfo> {
    return createSnapshotOf(this.#native, opts);
  }

  /**
   * Starts `count` sandboxes (1 by default) from one snapshot of this one, which goes on running: E2B's
   * answer, one entry per copy, the sandbox or the error it failed with. Each copy is a sandbox of its own
   * (id, access token, E2B's 5-minute lifetime or `timeoutMs`) with the `envs` this handle was created
   * with; the snapshot is deleted afterwards, as E2B's fork leaves none. Memory as `createSnapshot`: a
   * namespace sandbox forks with `keepMemory: false`. Needs the key (`apiKey`, given here or to `create`
   * / `connect`, else `SDK_API_KEY`).
   *
   * @throws InvalidArgumentError for a bad `count` or `timeoutMs`, before any call
   * @throws NotSupportedError for a memory snapshot of a namespace sandbox
   */
  async fork(opts: SandboxForkOpts = {}): Promise<Array<Sandbox | Error>> {
    return forkOf(this.#native, withKey(opts, this.#apiKey), this.#envs, (copy) => Sandbox.#launch(copy));
  }

  /** @throws NotSupportedError: signed URLs are on E2B's hosted domains */
  readonly uploadUrl: (path?: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('uploadUrl', `${NO_SIGNED_URLS}; use files.write`));

  /** @throws NotSupportedError: signed URLs are on E2B's hosted domains */
  readonly downloadUrl: (path: string, opts?: object) => Promise<never> = () =>
    Promise.reject(notSupported('downloadUrl', `${NO_SIGNED_URLS}; use files.read`));

  /** @throws NotSupportedError: E2B's MCP gateway is not offered */
  readonly getMcpUrl: () => never = () => {
    throw notSupported('getMcpUrl', "E2B's MCP gateway is not offered");
  };

  /** @throws NotSupportedError: E2B's MCP gateway is not offered */
  readonly getMcpToken: () => Promise<never> = () =>
    Promise.reject(notSupported('getMcpToken', "E2B's MCP gateway is not offered"));

  /**
   * Replaces the sandbox's egress rules (`sbx.native.egress.update`), E2B's `network` mapped as at create:
   * `denyOut: [ALL_TRAFFIC]` with `allowOut` is an allowlist, another `denyOut` is denied, `allowOut`
   * wins over `denyOut`, `allowInternetAccess: false` is `denyOut: [ALL_TRAFFIC]`; what is left out is
   * cleared (`{}` opens it all), as in E2B. Connections already open stay open.
   *
   * @throws InvalidArgumentError for a malformed option or entry, before any call
   * @throws NotSupportedError for `rules` or `egressProxy`, before any call
   */
  async updateNetwork(
    network: SandboxNetworkUpdate,
    opts?: Pick<ConnectionOpts, 'requestTimeoutMs'>,
  ): Promise<void> {
    checkRequestOpts('sbx.updateNetwork', opts);
    const policy = updateEgress('sbx.updateNetwork', network);
    await e2bCall(() => this.#native.egress.update(policy));
  }

  /** This sandbox's snapshots (`Sandbox.listSnapshots({ sandboxId })`), with the key. */
  listSnapshots(opts: Omit<SnapshotListOpts, 'sandboxId'> = {}): SnapshotPaginator {
    return Sandbox.listSnapshots({ ...withKey(opts, this.#apiKey), sandboxId: this.sandboxId });
  }

  /** `Sandbox.deleteSnapshot` (the shim's, E2B has it as a static only), with the handle's key. */
  async deleteSnapshot(snapshotId: string, opts: ConnectionOpts = {}): Promise<boolean> {
    return Sandbox.deleteSnapshot(snapshotId, withKey(opts, this.#apiKey));
  }
}

/**
 * Launches a shim sandbox (`create`, and each copy of `fork`): the native sandbox, then E2B's `envs` in
 * sandboxd (`PUT /v1/secrets`, as the native `secrets`) so every command gets them, also from a handle
 * connected in another process; a command's own `envs` win. Under them, what E2B's envd gives every
 * command (not E2B_TEAM_ID: there are no teams here), as the Python shim.
 */
async function launchE2B(resolved: ResolvedCreate): Promise<NativeSandbox> {
  return e2bCall(async () => {
    const options = resolveSandboxOptions(resolved.native);
    const launched = await launchSandbox(options, resolved.apiKey);
    const sbx = await NativeSandbox[openHandle](launched, {
      creating: { gateways: {}, secretCache: new SecretCache(), createdWith: resolved.native },
      keepOnFailure: false,
    });
    const daemon = {
      url: launched.daemonUrl,
      accessToken: launched.accessToken,
      requestTimeoutMs: launched.plane.requestTimeoutMs,
    };
    const envs = {
      E2B_SANDBOX: 'true',
      E2B_SANDBOX_ID: launched.sandboxId,
      E2B_TEMPLATE_ID: resolved.templateId,
      ...resolved.envs,
    };
    await putSecretEnvs(daemon, envs).catch(async (error: unknown) => {
      await sbx.kill().catch(() => undefined);
      throw error;
    });
    return sbx;
  });
}

/** `timeoutMs` of a connect: a whole number of milliseconds, 0 to 8 h. */
function checkLifetimeOpt(call: string, timeoutMs: unknown): void {
  if (timeoutMs === undefined) return;
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 0 ||
    timeoutMs > LIMITS.sandboxMaxTimeoutMs
  ) {
    throw invalidArgument(
      `${call}: timeoutMs must be a whole number of milliseconds from 0 to ${String(LIMITS.sandboxMaxTimeoutMs)} (8 h)`,
      'timeoutMs',
    );
  }
}

/**
 * E2B's connect never shortens a lifetime and extends it to `timeoutMs` from now: within the lifetime
 * left nothing changes; past it the sandbox is set to end `timeoutMs` from now (the native `setTimeout`,
 * refused past 8 h from the sandbox's creation).
 */
async function extendLifetime(native: NativeSandbox, info: SandboxInfo, timeoutMs: number): Promise<void> {
  if (Date.now() + timeoutMs > info.endAt.getTime()) {
    await e2bCall(() => native.setTimeout(timeoutMs));
  }
}
