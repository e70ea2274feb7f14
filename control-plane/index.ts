/**
 * `sdk/control-plane`: the control plane for single-machine use (`startEmbeddedControlPlane`) and for
 * hosting (`ControlPlane`, `createControlPlaneServer`).
 */
export { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
export { startEmbeddedControlPlane, type EmbeddedControlPlane, type EmbeddedOptions } from './embedded.js';
export { createControlPlaneServer } from './http-api.js';
export { openApiDocument } from './openapi.js';
