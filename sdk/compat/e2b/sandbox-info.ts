/**
 * What the E2B shim says of a sandbox (E2B's `SandboxInfo` and `SandboxState`, from the control plane's
 * info) and how it lists them (`Sandbox.list`'s options and pages, `SandboxPaginator`).
 */
import { z } from 'zod';
import {
  sandboxInfoSchema,
  type SandboxInfo as NativeSandboxInfo,
} from '../../../protocol/control-plane-api.js';
import type { ControlPlaneClient } from '../../control-plane-client.js';
import { nativeTemplate, type ConnectionOpts } from './connection.js';
import { SandboxError, SandboxNotFoundError, e2bCall, invalidArgument } from './errors.js';
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
  /** Always empty: the control plane keeps no metadata. */
  readonly metadata: Record<string, string>;
  /** When the sandbox's lifetime ends. */
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
   * E2B's filter: `state` and `template` (E2B's `base` is `sdk-base`) are honoured; `metadata` and
   * `startedAfter` are refused (the control plane keeps no metadata and no start time).
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
    metadata: {},
    endAt: new Date(info.deadlineAt),
    state: stateOf(info),
    allowInternetAccess: info.allowInternetAccess,
    ...(network === undefined ? {} : { network }),
    volumeMounts: [],
  };
}

/** Pages of `Sandbox.list` (E2B's `SandboxPaginator`): `hasNext`, `nextItems()`. */
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
    const state: unknown = opts.query?.state;
    if (
      state !== undefined &&
      (!Array.isArray(state) || state.some((one) => one !== 'running' && one !== 'paused'))
    ) {
      // As the Python shim: E2B's states are 'running' and 'paused'.
      throw invalidArgument("Sandbox.list: query.state must list 'running' / 'paused'", 'query.state');
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
    const all = await e2bCall(() =>
      this.#plane.call('GET', '/v1/sandboxes', z.array(sandboxInfoSchema), { token: this.#key }),
    );
    const { state, template } = this.#opts.query ?? {};
    // E2B's `base` is both of ours made from its image (open or closed egress).
    const wanted =
      template === undefined ? undefined : [nativeTemplate(template), nativeTemplate(template, true)];
    // The control plane lists its sandboxes in the order it started them (oldest first).
    const started = all
      .filter((info) => info.state !== 'ended')
      .map(e2bInfo)
      .filter((info) => state === undefined || state.includes(info.state))
      .filter((info) => wanted === undefined || wanted.includes(info.templateId));
    const matching = this.#opts.order === 'asc' ? started : started.reverse();
    const start = Number(this.nextToken ?? '0');
    const end = start + (this.#opts.limit ?? DEFAULT_LIST_LIMIT);
    this.hasNext = end < matching.length;
    this.nextToken = this.hasNext ? String(end) : undefined;
    return matching.slice(start, end);
  }
}
