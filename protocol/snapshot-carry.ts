/**
 * What a copy started from a memory snapshot takes over from the sandbox it was taken of (issue 26).
 * sandboxd is outside the snapshot (it holds the gateways' values and the tokens), so what its copy must
 * know of the box's state is asked of it when the snapshot is taken, and given to the copy's sandboxd
 * with its settings:
 *
 *   GET /v1/snapshot-carry     → SnapshotCarry (the control plane's credential or the sandbox's token)
 *
 * Nothing in it is a secret: route names and ports, and a prepared runtime's pid, configuration hash,
 * working directory and command line (its configuration's text is never here).
 */
import { z } from 'zod';

/** A runtime `prepare()` started ahead, held by the box for its copies (`daemon/runtime-standby.ts`). */
export const carriedStandbySchema = z.strictObject({
  /** The hash of the configuration it was started with: only a run of the same one adopts it. */
  configHash: z.string().min(1),
  workdir: z.string().startsWith('/'),
  /** Its pid as the box names it (the same in every copy). */
  pid: z.number().int().positive(),
  /** Its command line, for the copy's records. */
  cmd: z.string(),
});

/** A prepared runtime a copy adopts. */
export type CarriedStandby = z.infer<typeof carriedStandbySchema>;

/** What the copy's sandboxd takes over. */
export const snapshotCarrySchema = z.strictObject({
  /**
   * Each route's loopback port: given the route again, the copy binds the same one when it is free, so
   * what the box's processes were configured with (a prepared runtime's base URLs) still holds.
   */
  gatewayPorts: z.record(z.string(), z.number().int().min(1).max(65535)),
  standby: carriedStandbySchema.optional(),
});

/** What the copy's sandboxd takes over. */
export type SnapshotCarry = z.infer<typeof snapshotCarrySchema>;
