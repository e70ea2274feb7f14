/**
 * A daemon of an older sandbox image lacks newer endpoints and answers them `not_found`: the SDK says
 * what the image is missing instead (`UnimplementedError`), as it does for gateways.
 */
import { SandboxError } from '../rules/errors.js';

/** `error` as the caller should see it: `UnimplementedError` naming `what` for a `not_found`. */
export function unimplementedWhenMissing(error: unknown, what: string): unknown {
  if (error instanceof SandboxError && error.code === 'not_found') {
    return new SandboxError(`UnimplementedError: this sandbox image predates ${what}`, {
      code: 'unimplemented',
      failureClass: 'UnimplementedError',
    });
  }
  return error;
}
