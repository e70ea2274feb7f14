/**
 * The gateway library the in-sandbox daemon hosts: `GatewayHost` and the types of its configuration and
 * status. The rule modules are imported from their own files.
 */
export {
  GatewayHost,
  type ApplyOutcome,
  type GatewayHostEvent,
  type GatewayHostOptions,
  type GatewayRouteStatus,
} from './gateway-host.js';
export type { GatewayConfiguration, RouteConfiguration } from './configuration.js';
export type { ConfigurationFailure, ConfigurationFailureClass } from './configuration-failure.js';
