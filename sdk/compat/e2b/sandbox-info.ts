/**
 * What the E2B shim says of a sandbox (E2B's `SandboxInfo` and `SandboxState`, from the control plane's
 * info) and how it lists them (`Sandbox.list`'s options and pages, `SandboxPaginator`, over the native
 * `Sandbox.list({ metadata, state })`).
 */
import type { SandboxInfo as NativeSandboxInfo } from '../../../protocol/control-plane-api.js';
import { sandboxMetadataSchema } from '../../../rules/sandbox-metadata.js';
import type { ControlPlaneClient } from '../../control-plane-client.js';
import { listSandboxes } from '../../sandbox-lifecycle.js';
import { nativeTemplate, type ConnectionOpts } from './connection.js';
import { SandboxError, SandboxNotFoundError, e2bCall, e2bParse, invalidArgument } from './errors.js';
import { networkInfo, type SandboxNetworkInfo } from './network.js';

/** E2B's sandbox states: ours `suspended` is E2B's `paused`. */
export type SandboxState = 'running' | 'paused';

/** What the control plane says of a sandbox (E2B's `SandboxInfo`, without what it does not keep). */
export interface SandboxInfo {
  readonly sandboxId: string;
  /** Our template name (`sdk-base` for E2B's `base`). */
  readonly templateId: string;
  /** The template's name too (the control plane has no separate template ids). */
  readonly name: string;
  /** The metadata given at create (`Sandbox.create({ metadata })`); empty when none was. */
  readonly metadata: Record<string, string>;
  /** When the sandbox was created (its lifetime, running plus suspended, counts from here). */
  readonly startedAt: Date;
  /** When the sandbox's lifetime ends (`timeoutMs` of create, or the latest `setTimeout`). */
  readonly endAt: Date;
  readonly state: SandboxState;
  readonly allowInternetAccess: boolean;
  /**
   * E2B's egress rules, from the egress policy: an allowlist is `{ allowOut, denyOut: [ALL_TRAFFIC] }`,
   * closed egress `{ denyOut: [ALL_TRAFFIC] }`, open egress with denied entries `{ denyOut }`; not set
   * when everything is reachable.
   */
  readonly network?: SandboxNetworkInfo;
  /** E2B's lifecycle options: never set (refused at create). */
  readonly lifecycle?: Readonly<Record<string, unknown>>;
  /** E2B's volumes: always empty (no volumes here), as E2B gives a sandbox without any. */
  readonly volumeMounts: ReadonlyArray<{ name: string; path: string }>;
}

/** Options of `Sandbox.list` (E2B's `SandboxListOpts`). */
export interface SandboxListOpts extends ConnectionOpts {
  /**
   * E2B's filter, its parts combined with AND: `metadata` (every entry held; the native
   * `Sandbox.list({ metadata })`), `state` (E2B's `running` / `paused`, by default both), `startedAfter`
   * (created at or after it) and `template` (E2B's `base` is `sdk-base` and `sdk-base-caps`).
   */
  query?: {
    metadata?: Record<string, string>;
    state?: SandboxState[];
    startedAfter?: Date;
    template?: string;
  };
  /** By start: `desc` (newest first, E2B's default) or `asc`, across the whole list before paging. */
  order?: 'asc' | 'desc';
  /** Sandboxes per page (E2B's default 100). */
  limit?: number;
  nextToken?: string;
}

/** E2B's page size of `Sandbox.list`. */
const DEFAULT_LIST_LIMIT = 100;

const stateOf = (info: NativeSandboxInfo): SandboxState =>
  info.state === 'suspended' ? 'paused' : 'running';

/** E2B's info of a native one; an ended sandbox is not found, as in E2B. */
export function e2bInfo(info: NativeSandboxInfo): SandboxInfo {
  if (info.state === 'ended') {
    throw new SandboxNotFoundError(`sandbox ${info.sandboxId} has ended (${info.endReason ?? 'ended'})`, {
      code: 'sandbox_ended',
    });
  }
  const network = networkInfo(info.egress);
  return {
    sandboxId: info.sandboxId,
    templateId: info.template,
    name: info.template,
    metadata: { ...info.metadata },
    startedAt: new Date(info.startedAt),
    endAt: new Date(info.deadlineAt),
    state: stateOf(info),
    allowInternetAccess: info.allowInternetAccess,
    ...(network === undefined ? {} : { network }),
    volumeMounts: [],
  };
}

/** E2B's states as the native ones: a paused sandbox here is a suspended one. */
const NATIVE_STATE = { running: 'running', paused: 'suspended' } as const;

/**
 * Pages of `Sandbox.list` (E2B's `SandboxPaginator`): `hasNext`, `nextItems()`. Each page reads the
 * native list (`GET /v1/sandboxes`, the metadata and states filtered by the control plane) with the key,
 * then filters by `startedAfter` and `template`, orders by start and slices `limit` from `nextToken`.
 */
export class SandboxPaginator {
  /** True while there may be more sandboxes to fetch. */
  hasNext = true;
  /** Where the next page starts. */
  nextToken: string | undefined;
  readonly #plane: ControlPlaneClient;
  readonly #key: string;
  readonly #opts: SandboxListOpts;

  /** @internal */
  constructor(plane: ControlPlaneClient, key: string, opts: SandboxListOpts) {
    this.#plane = plane;
    this.#key = key;
    this.#opts = opts;
    this.nextToken = opts.nextToken;
    const order: unknown = opts.order;
    if (order !== undefined && order !== 'asc' && order !== 'desc') {
      throw invalidArgument("Sandbox.list: order must be 'asc' or 'desc'", 'order');
    }
    if (opts.query?.metadata !== undefined) {
      e2bParse(sandboxMetadataSchema, opts.query.metadata, 'Sandbox.list', ['query', 'metadata']);
    }
    const state: unknown = opts.query?.state;
    if (
      state !== undefined &&
      (!Array.isArray(state) || state.some((one) => one !== 'running' && one !== 'paused'))
    ) {
      // As the Python shim: E2B's states are 'running' and 'paused'.
      throw invalidArgument("Sandbox.list: query.state must list 'running' / 'paused'", 'query.state');
    }
    const startedAfter: unknown = opts.query?.startedAfter;
    if (
      startedAfter !== undefined &&
      (!(startedAfter instanceof Date) || Number.isNaN(startedAfter.getTime()))
    ) {
      throw invalidArgument('Sandbox.list: query.startedAfter must be a valid Date', 'query.startedAfter');
    }
    if (opts.query?.template !== undefined && typeof opts.query.template !== 'string') {
      throw invalidArgument('Sandbox.list: query.template must be a template name', 'query.template');
    }
    if (opts.limit !== undefined && (!Number.isInteger(opts.limit) || opts.limit < 1)) {
      throw invalidArgument('Sandbox.list: limit must be a whole number, 1 or more', 'limit');
    }
    if (opts.nextToken !== undefined && !/^\d+$/.test(opts.nextToken)) {
      throw invalidArgument('Sandbox.list: nextToken must be a token a page gave', 'nextToken');
    }
  }

  /** The next page of sandboxes. */
  async nextItems(): Promise<SandboxInfo[]> {
    if (!this.hasNext) throw new SandboxError('No more items to fetch');
    const { metadata, state, startedAfter, template } = this.#opts.query ?? {};
    // E2B lists running and paused sandboxes unless told which; an ended one is not listed.
    const states = (state ?? ['running', 'paused']).map((one) => NATIVE_STATE[one]);
    const all = await e2bCall(() =>
      listSandboxes(
        {
          controlPlaneUrl: this.#plane.url,
          requestTimeoutMs: this.#plane.requestTimeoutMs,
          state: states.length === 0 ? ['running', 'suspended'] : states,
          ...(metadata === undefined ? {} : { metadata }),
        },
        this.#key,
      ),
    );
    // E2B's `base` is both of ours made from its image (open or closed egress).
    const wanted =
      template === undefined ? undefined : [nativeTemplate(template), nativeTemplate(template, true)];
    const after = startedAfter?.getTime();
    // E2B orders by start, oldest first for `asc` (a stable sort keeps the control plane's order of
    // sandboxes started in the same millisecond).
    const started = all
      .filter((info) => info.state !== 'ended')
      .map(e2bInfo)
      .filter((info) => after === undefined || info.startedAt.getTime() >= after)
      .filter((info) => wanted === undefined || wanted.includes(info.templateId))
      .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
    const matching = this.#opts.order === 'asc' ? started : started.reverse();
    const start = Number(this.nextToken ?? '0');
    const end = start + (this.#opts.limit ?? DEFAULT_LIST_LIMIT);
    this.hasNext = end < matching.length;
    this.nextToken = this.hasNext ? String(end) : undefined;
    return matching.slice(start, end);
  }
}
