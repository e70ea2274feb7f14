/**
 * sandboxd's egress filter on the wire (issue 27): the ports its resolver and its name checks listen
 * on (the drivers' tables send sandbox code's DNS and its HTTP and TLS connections there), and what the
 * control plane gives it at its start and on `PUT /v1/egress`.
 */
import { z } from 'zod';
import { EGRESS_MODES } from '../rules/egress-policy.js';

/**
 * Ports of sandboxd's egress filter, on every address of the sandbox's namespace. Below the ephemeral
 * range, so no connection of sandbox code takes one; sandboxd binds them before any sandbox code runs.
 */
export const EGRESS_PORTS = { dns: 1053, http: 1080, tls: 1443 } as const;

/** A normalised policy (the control plane parsed it with `egressPolicySchema`). */
export const egressPolicyWire = z.strictObject({
  mode: z.enum(EGRESS_MODES),
  allow: z.array(z.string()).max(256).readonly(),
  deny: z.array(z.string()).max(256).readonly(),
});

/** sandboxd's egress settings. */
export const egressSettingsSchema = z.strictObject({
  policy: egressPolicyWire,
  /** Upstream DNS servers (`address` or `address:port`) sandboxd asks for allowed names. */
  dnsServers: z.array(z.string()).max(8),
});

/** sandboxd's egress settings, parsed. */
export type EgressSettings = z.infer<typeof egressSettingsSchema>;
