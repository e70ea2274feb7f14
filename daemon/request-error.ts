/** The error a sandboxd refusal is thrown as. */
import type { ErrorCode } from '../rules/error-codes.js';
import { SdkError } from '../rules/errors.js';

/**
 * A refusal of this daemon, answered with exactly its code; a refused configuration's failure class
 * goes in the message and the context (SPEC: "with the failure class in the message").
 */
export class RequestError extends SdkError {
  constructor(code: ErrorCode, message: string, failureClass?: string, context?: Record<string, string>) {
    super(
      code,
      failureClass === undefined ? message : `${failureClass}: ${message}`,
      failureClass === undefined ? context : { ...context, failureClass },
    );
  }
}
