/**
 * Why a gateway host refused a configuration. The class names travel to the SDK inside a
 * `SandboxError` message (SPEC "Errors": "with the failure class in the message"); a failure names the
 * route and header, never a value.
 */
import type { ErrorCode } from '../rules/error-codes.js';

/** Failure classes a gateway host reports for a refused configuration. */
export type ConfigurationFailureClass =
  | 'MalformedConfigurationError'
  | 'InvalidRouteNameError'
  | 'InvalidUpstreamError'
  | 'InvalidHeaderNameError'
  | 'InvalidHeaderValueError'
  | 'InvalidAllowPathError'
  | 'InvalidRateError'
  | 'LimitExceededError'
  | 'ListenerError';

/** A refused configuration: class, wire code and a message naming the field (never a value). */
export interface ConfigurationFailure {
  readonly errorClass: ConfigurationFailureClass;
  readonly code: Extract<ErrorCode, 'configuration_rejected' | 'invalid_allow_path'>;
  readonly message: string;
}

/** Builds a failure; `invalid_allow_path` is the code of its class alone. */
export function configurationFailure(
  errorClass: ConfigurationFailureClass,
  message: string,
): ConfigurationFailure {
  const code = errorClass === 'InvalidAllowPathError' ? 'invalid_allow_path' : 'configuration_rejected';
  return { errorClass, code, message };
}
