/**
 * `sbx.getMetrics()` and `Sandbox.getMetrics(id)` (issue 28): the samples the control plane took of a
 * sandbox's CPU, memory, disk and network while it ran, in a time range. Reading them never resumes or
 * touches the sandbox.
 */
import { z } from 'zod';
import {
  RANGE_ORDER_RULE,
  rangeInOrder,
  sandboxMetricsSchema,
  type SandboxMetric,
} from '../protocol/control-plane-api.js';
import { httpUrlSchema, parseOptions } from '../rules/parse-options.js';
import { SANDBOX_ID, SANDBOX_ID_RULE } from '../rules/names.js';
import { ControlPlaneClient, controlPlaneUrl, operatorKey } from './control-plane-client.js';

export type { SandboxMetric };

/** An instant: a `Date` or ms since the epoch. */
const instant = z.union([z.date(), z.number().int().nonnegative()]).transform((value) => Number(value));

/** The range of samples asked for: taken at or after `start`, at or before `end` (both optional). */
export const metricsRangeSchema = z
  .strictObject({ start: instant.optional(), end: instant.optional() })
  .refine(rangeInOrder, RANGE_ORDER_RULE);

/** What `getMetrics` takes. */
export type MetricsRange = z.input<typeof metricsRangeSchema>;

/** `GET /v1/sandboxes/{id}/metrics` with the range as its query. */
export function metricsPath(sandboxId: string, range: z.output<typeof metricsRangeSchema>): string {
  const query = new URLSearchParams();
  if (range.start !== undefined) query.set('start', String(range.start));
  if (range.end !== undefined) query.set('end', String(range.end));
  const text = query.toString();
  return `/v1/sandboxes/${sandboxId}/metrics${text === '' ? '' : `?${text}`}`;
}

/** A sandbox's samples over `call` (the handle's control-plane client and token), oldest first. */
export async function readMetrics(
  plane: ControlPlaneClient,
  sandboxId: string,
  range: MetricsRange,
  token: string | undefined,
  caller: string,
): Promise<SandboxMetric[]> {
  const checked = parseOptions(metricsRangeSchema, range, caller);
  return (await plane.call('GET', metricsPath(sandboxId, checked), sandboxMetricsSchema, { token })).metrics;
}

const staticOptions = z.strictObject({
  controlPlaneUrl: httpUrlSchema.optional(),
  /** The sandbox's token; by default the operator key (`SDK_API_KEY`). */
  accessToken: z.string().min(1).optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
  start: z.union([z.date(), z.number()]).optional(),
  end: z.union([z.date(), z.number()]).optional(),
});

/** `Sandbox.getMetrics`: a sandbox's samples without a handle, with its token or the operator key. */
export async function sandboxMetrics(
  sandboxId: string,
  options: z.input<typeof staticOptions>,
): Promise<SandboxMetric[]> {
  const id = parseOptions(z.string().regex(SANDBOX_ID, SANDBOX_ID_RULE), sandboxId, 'Sandbox.getMetrics', [
    'sandboxId',
  ]);
  const {
    controlPlaneUrl: url,
    accessToken,
    requestTimeoutMs,
    start,
    end,
  } = parseOptions(staticOptions, options, 'Sandbox.getMetrics');
  const plane = new ControlPlaneClient(controlPlaneUrl(url), requestTimeoutMs);
  const range = { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) };
  return readMetrics(plane, id, range, accessToken ?? operatorKey(), 'Sandbox.getMetrics');
}
