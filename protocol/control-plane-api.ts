/**
 * The control plane's wire schemas (DESIGN.md §3): parsed with zod at the edge on both sides, and the
 * source of the OpenAPI document at /v1/openapi.json. Errors travel as the envelope of
 * `error-envelope.ts`.
 */
import { z } from 'zod';
import { egressPolicySchema } from '../rules/egress-policy.js';
import { sandboxMetadataSchema } from '../rules/sandbox-metadata.js';
import { webhookUrlSchema } from '../rules/webhook-url.js';
import { LIMITS } from '../rules/limits.js';
import { SNAPSHOT_ID, TEMPLATE_NAME } from '../rules/names.js';
import { SANDBOX_STATES } from '../machines/sandbox-table.js';
import { egressPolicyWire } from './egress-wire.js';

/**
 * The boundary between a sandbox's code and the host: `namespace` (the host's kernel behind namespaces,
 * cgroups and a seccomp filter) or `gvisor` (gVisor's user-space kernel in between).
 */
export const ISOLATIONS = ['namespace', 'gvisor'] as const;
export const isolationSchema = z.enum(ISOLATIONS);

/** A sandbox's isolation. */
export type Isolation = z.infer<typeof isolationSchema>;

/** Body of `POST /v1/sandboxes`. */
export const createSandboxRequestSchema = z.strictObject({
  template: z.string().regex(TEMPLATE_NAME, 'must be a template name').default('sdk-base'),
  /** The control plane's default (`sdk serve --isolation`, `SDK_ISOLATION`) when absent. */
  isolation: isolationSchema
    .optional()
    .describe("the sandbox's isolation: namespace or gvisor; the control plane's default when absent"),
  /**
   * Start from this snapshot: its template, isolation, limits and (unless given) egress; with a memory
   * snapshot its processes go on.
   */
  snapshot: z
    .string()
    .regex(SNAPSHOT_ID, 'must be a snapshot id')
    .optional()
    .describe('start from this snapshot (its template, isolation and limits)'),
  allowInternetAccess: z.boolean().default(true),
  /**
   * Where sandbox code may connect (issue 27); when absent, `allowInternetAccess` decides (open or
   * closed). With `allowInternetAccess: false` only mode `closed` may be given.
   */
  egress: egressPolicySchema
    .optional()
    .describe(
      "egress policy: mode open, closed or allowlist, with allow and deny entries (domains, '*.' wildcards, IPv4 CIDRs)",
    ),
  timeoutMs: z.number().int().min(1).max(LIMITS.sandboxMaxTimeoutMs).default(LIMITS.sandboxTimeoutMs),
  idlePolicy: z
    .strictObject({
      maxIdleSeconds: z.number().int().min(1).default(LIMITS.idleSeconds),
      autoResume: z.boolean().default(true),
    })
    .default({ maxIdleSeconds: LIMITS.idleSeconds, autoResume: true }),
  /** Memory of sandbox code, MiB; when absent, `defaultMemoryMb(template)` (512; 1024 for `sdk-agent`). */
  memoryMb: z
    .number()
    .int()
    .min(32)
    .max(16_384)
    .optional()
    .describe('memory of sandbox code, MiB; by default 512, and 1024 for template sdk-agent'),
  maxPids: z.number().int().min(16).max(32_768).default(512),
  /** CPU time of the whole sandbox, in CPUs (0.5 = half of one CPU); when absent, `defaultCpus(template)`. */
  cpus: z
    .number()
    .min(0.05)
    .max(64)
    .optional()
    .describe('CPU time of the whole sandbox, in CPUs; by default 1, and 2 for template sdk-agent'),
  /** A string map shown by getInfo and list, and matched by list's filter (at most 64 entries). */
  metadata: sandboxMetadataSchema
    .optional()
    .describe('a string map shown by getInfo and list, matched by list (at most 64 entries)'),
  /**
   * Where this sandbox's lifecycle events are POSTed, signed, besides the control plane's own
   * destinations (issue 28; `protocol/webhook-wire.ts`). Kept in its facts, never shown.
   */
  webhookUrl: webhookUrlSchema
    .optional()
    .describe("where this sandbox's lifecycle events are POSTed, signed: an http or https URL"),
});

/** Body of `POST /v1/sandboxes/{sandboxId}/timeout`: the sandbox ends `timeoutMs` from now. */
export const setTimeoutRequestSchema = z.strictObject({
  timeoutMs: z.number().int().min(1).max(LIMITS.sandboxMaxTimeoutMs),
});

/** Instants of a metrics range on the wire: ms since the epoch, written as digits in a query. */
const instantSchema = z.coerce.number().int().nonnegative();

/** A time range's rule, on the wire and in the SDKs: `start` not after `end` (either may be absent). */
export function rangeInOrder(range: {
  readonly start?: number | undefined;
  readonly end?: number | undefined;
}): boolean {
  return range.start === undefined || range.end === undefined || range.start <= range.end;
}

/** How `rangeInOrder` refuses. */
export const RANGE_ORDER_RULE = { message: 'start must not be after end', path: ['start'] };

/** Query of `GET /v1/sandboxes/{sandboxId}/metrics`: samples taken in `[start, end]`, both optional. */
export const metricsQuerySchema = z
  .strictObject({ start: instantSchema.optional(), end: instantSchema.optional() })
  .refine(rangeInOrder, RANGE_ORDER_RULE);

/** A create request as sent. */
export type CreateSandboxRequest = z.input<typeof createSandboxRequestSchema>;

/**
 * What a snapshot holds: `memory` (a gVisor sandbox: processes, memory and files) or `filesystem` (a
 * namespace sandbox: its own layer of its template and its home, no processes).
 */
export const snapshotKindSchema = z.enum(['memory', 'filesystem']);

/** What a snapshot holds. */
export type SnapshotKind = z.infer<typeof snapshotKindSchema>;

/** A snapshot of a sandbox, as the control plane keeps it (never a secret: SPEC and DESIGN §5). */
export const snapshotSchema = z.strictObject({
  snapshotId: z.string().regex(SNAPSHOT_ID),
  /** The sandbox it was taken of. */
  sandboxId: z.string(),
  /** When it was taken, ms since the epoch. */
  createdAt: z.number(),
  kind: snapshotKindSchema,
  isolation: isolationSchema,
  template: z.string(),
  /** Bytes it takes in the control plane's state folder. */
  bytes: z.number().int().nonnegative(),
});

/** A snapshot on the wire. */
export type SnapshotInfo = z.infer<typeof snapshotSchema>;

/** Answer to `GET /v1/snapshots`. */
export const snapshotListSchema = z.strictObject({ snapshots: z.array(snapshotSchema) });

/** Body of `POST /v1/sandboxes/{sandboxId}/fork`. */
export const forkRequestSchema = z.strictObject({
  count: z.number().int().min(1).max(100).default(1),
});

/** Sandbox states on the wire: the table's (SPEC "States and transitions / Sandbox"). */
export const sandboxStateSchema = z.enum(SANDBOX_STATES);

/** What anyone may read about a sandbox (no token). */
export const sandboxInfoSchema = z.strictObject({
  sandboxId: z.string(),
  template: z.string(),
  isolation: isolationSchema,
  state: sandboxStateSchema,
  allowInternetAccess: z.boolean(),
  egress: egressPolicyWire,
  /** `failed`: the sandbox's daemon died (out of memory, crashed, killed from outside). */
  endReason: z.enum(['killed', 'timeout', 'failed']).nullable(),
  suspendReason: z.enum(['paused', 'idle']).nullable(),
  deadlineAt: z.number(),
  /** When it was created, ms since the epoch (its lifetime, running plus suspended, counts from here). */
  startedAt: z.number(),
  /** Its metadata (empty when none was given). */
  metadata: z.record(z.string(), z.string()),
  /** Sequence number of the sandbox's latest state event: a stream from `after=seq - 1` starts there. */
  seq: z.number().int().nonnegative(),
});

/** One sandbox's public facts. */
export type SandboxInfo = z.infer<typeof sandboxInfoSchema>;

/**
 * One sample of a sandbox's use (`GET /v1/sandboxes/{sandboxId}/metrics`), taken by the control plane
 * every few seconds while the sandbox runs. Network bytes count from the sandbox's start.
 */
export const sandboxMetricSchema = z.strictObject({
  /** When it was taken, ms since the epoch. */
  timestamp: z.number(),
  /** The sandbox's CPU limit, in CPUs. */
  cpuCount: z.number(),
  /** Its CPU time since the sample before, in percent of `cpuCount` CPUs over that time. */
  cpuUsedPct: z.number(),
  memUsedBytes: z.number(),
  memTotalBytes: z.number(),
  /** Its writable file systems (its layer over the template and `/home`); `/tmp` counts as memory. */
  diskUsedBytes: z.number(),
  diskTotalBytes: z.number(),
  netRxBytes: z.number(),
  netTxBytes: z.number(),
});

/** One metrics sample. */
export type SandboxMetric = z.infer<typeof sandboxMetricSchema>;

/** Answer to `GET /v1/sandboxes/{sandboxId}/metrics`: the samples in the range asked, oldest first. */
export const sandboxMetricsSchema = z.strictObject({ metrics: z.array(sandboxMetricSchema) });

/** The samples of a sandbox. */
export type SandboxMetrics = z.infer<typeof sandboxMetricsSchema>;

/** Answer to create: the facts, the daemon address and the access token (shown once, to the creator). */
export const createdSandboxSchema = sandboxInfoSchema.extend({
  daemonUrl: z.string(),
  accessToken: z.string(),
  /** What the SDK derives each port's preview token from (protocol/preview-wire.ts). */
  previewKey: z.string(),
  /** The sandbox's preview URL with `{port}` for the port (by path, or by host with a preview domain). */
  previewUrl: z.string(),
});

/** Answer to fork: the snapshot taken, and each sandbox started from it (with its access token). */
export const forkedSandboxesSchema = z.strictObject({
  snapshot: snapshotSchema,
  sandboxes: z.array(createdSandboxSchema),
});

/** Answer to connect: the facts and the daemon address. */
export const connectedSandboxSchema = sandboxInfoSchema.extend({
  daemonUrl: z.string(),
  /** Given only to a caller presenting the sandbox's token (or the operator key). */
  previewKey: z.string().optional(),
  previewUrl: z.string(),
});

/** One line of `GET /v1/events`. */
export const sandboxEventSchema = z.strictObject({
  /** Position in the control plane's event log: resume a stream after it with `?after=<seq>`. */
  seq: z.number().int().positive(),
  sandboxId: z.string(),
  state: sandboxStateSchema,
  /** Why it ended, on the `ended` event. */
  endReason: sandboxInfoSchema.shape.endReason.optional(),
});

/** One state change. */
export type SandboxEvent = z.infer<typeof sandboxEventSchema>;

/** One line of `GET /v1/inspect`: one transition of one actor. */
export const inspectionRecordSchema = z.strictObject({
  actorId: z.string(),
  kind: z.enum(['sandbox', 'gateway_route', 'agent_execution']),
  seq: z.number().int().nonnegative(),
  event: z.looseObject({ type: z.string() }),
  state: z.string(),
  at: z.number(),
  replayed: z.boolean(),
  /** Its position in the feed: give it back as `?after=` to go on from there. */
  cursor: z.number().int().positive(),
});

/** One record of the inspection feed, as sent. */
export type InspectionFeedRecord = z.infer<typeof inspectionRecordSchema>;
