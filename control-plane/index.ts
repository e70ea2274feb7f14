/**
 * `sdk/control-plane`: the control plane for single-machine use (`startEmbeddedControlPlane`) and for
 * hosting (`ControlPlane` with a driver such as `NamespaceDriver`, `createControlPlaneServer`); and, for
 * a webhook receiver, the event's schema and `verifyWebhookSignature`.
 */
export { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
export {
  NamespaceDriver,
  type NamespaceDriverOptions,
} from '../sandbox-drivers/namespace/namespace-driver.js';
export type {
  LaunchedSandbox,
  LaunchRequest,
  SandboxDriver,
  TemplateManifest,
} from '../sandbox-drivers/sandbox-driver.js';
export { startEmbeddedControlPlane, type EmbeddedControlPlane, type EmbeddedOptions } from './embedded.js';
export { createControlPlaneServer } from './http-api.js';
export { openApiDocument } from './openapi.js';
export {
  verifyWebhookSignature,
  webhookEventSchema,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type WebhookEvent,
  type WebhookVerification,
} from '../protocol/webhook-wire.js';
