/**
 * The error envelope (DESIGN.md §3): how an error crosses a process boundary, `{ code, message,
 * context? }`, with the registry's HTTP status. Both servers answer with `envelopeOf` (or the router's
 * refusals), `SdkError.toJSON` builds the same shape with `errorEnvelope`, and the SDK turns an envelope
 * back into its class with `errorFromEnvelope`.
 */
import { z } from 'zod';
import { AGENT_FAILURE_REASONS } from '../rules/agent-reasons.js';
import {
  ERROR_CLASS,
  ERROR_CODES,
  ERROR_HTTP_STATUS,
  type ErrorClassName,
  type ErrorCode,
} from '../rules/error-codes.js';
import {
  AgentError,
  AuthenticationError,
  InvalidArgumentError,
  SandboxError,
  SdkError,
  SecretNotFoundError,
  errorEnvelope,
  type ErrorContext,
  type ErrorEnvelope,
  type SandboxErrorCode,
} from '../rules/errors.js';

export { errorEnvelope, type ErrorContext, type ErrorEnvelope };

/** Schema of an envelope: a registry code, a message, safe context facts. */
export const errorEnvelopeSchema = z.strictObject({
  code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
  message: z.string(),
  context: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/**
 * The envelope a server answers `error` with: an `SdkError` as itself (its message names fields and
 * rules, never a value), anything else as `sandbox_error` with `fallbackMessage`, never its own text.
 */
export function envelopeOf(error: unknown, fallbackMessage: string): ErrorEnvelope {
  return error instanceof SdkError ? error.toJSON() : errorEnvelope('sandbox_error', fallbackMessage);
}

/** The HTTP status an envelope travels with (the registry's). */
export function httpStatusOf(envelope: ErrorEnvelope): number {
  return ERROR_HTTP_STATUS[envelope.code];
}

function stringIn(context: ErrorContext | undefined, key: string): string | undefined {
  const value = context?.[key];
  return typeof value === 'string' ? value : undefined;
}

const BUILDERS: Readonly<Record<ErrorClassName, (e: ErrorEnvelope) => SdkError>> = {
  InvalidArgumentError: (e) => {
    const field = stringIn(e.context, 'field');
    const code = e.code === 'invalid_allow_path' ? e.code : 'invalid_argument';
    return new InvalidArgumentError(e.message, field === undefined ? { code } : { code, field });
  },
  SecretNotFoundError: (e) => new SecretNotFoundError(e.message, e.context),
  SandboxError: (e) => {
    const failureClass = stringIn(e.context, 'failureClass');
    const code = e.code as SandboxErrorCode; // ERROR_CLASS maps only SandboxError codes here
    return new SandboxError(e.message, failureClass === undefined ? { code } : { code, failureClass });
  },
  AuthenticationError: (e) =>
    new AuthenticationError(
      e.message,
      e.code === 'forbidden_origin' || e.code === 'forbidden_host' ? { code: e.code } : {},
    ),
  AgentError: (e) => {
    const reason = stringIn(e.context, 'reason');
    const known = AGENT_FAILURE_REASONS.find((r) => r === reason);
    return new AgentError(known ?? 'runtime_error', e.message);
  },
};

/**
 * Turns a wire envelope back into the SDK class its code maps to. A payload that is not an envelope
 * becomes a `SandboxError` that says so, without echoing the payload.
 */
export function errorFromEnvelope(payload: unknown): SdkError {
  const parsed = errorEnvelopeSchema.safeParse(payload);
  if (!parsed.success) return new SandboxError('malformed error envelope from the service');
  const { code, message, context } = parsed.data;
  return BUILDERS[ERROR_CLASS[code]](errorEnvelope(code, message, context));
}
