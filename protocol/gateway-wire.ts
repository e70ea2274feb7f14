/**
 * The daemon's gateway calls (SPEC "SDK operations": `ConfigureSandbox`, `ConfigureStatus`). The
 * configure body carries resolved header values: it is never logged, and the daemon answers with state
 * only (ports, urls, failure classes), never a value.
 */
import { z } from 'zod';

/** Body of `POST /v1/gateways` (ConfigureSandbox): route name to route, checked by the gateway host. */
export const configureSandboxSchema = z.strictObject({
  routes: z.record(z.string(), z.unknown()),
});

/** One route's state (SPEC "GatewayStatus"). */
export const gatewayStatusSchema = z.strictObject({
  port: z.number().int().positive(),
  url: z.string(),
  lastErrorClass: z.string().nullable(),
});

/** Answer of ConfigureSandbox and of `GET /v1/gateways` (ConfigureStatus). */
export const gatewayStateSchema = z.strictObject({
  routes: z.record(z.string(), gatewayStatusSchema),
});

/** The gateway state of a sandbox. */
export type GatewayState = z.infer<typeof gatewayStateSchema>;
