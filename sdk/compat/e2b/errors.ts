/**
 * The E2B SDK's error classes, under their names, over the native SDK's errors: every native failure
 * becomes the E2B class a program written for E2B catches, with the native `code` kept (`error.code`)
 * and the native error as `cause`. The native brand is kept too, so `instanceof` the native
 * `InvalidArgumentError` (or `SdkError`) still holds for a mapped error.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../../rules/error-codes.js';
import { InvalidArgumentError as NativeInvalidArgumentError, SdkError } from '../../../rules/errors.js';
import { parseOptions } from '../../../rules/parse-options.js';

/** The native SDK's cross-copy `instanceof` brand (`rules/errors.ts`). */
const LINEAGE = Symbol.for('sdk.error.lineage');

/**
 * The base of the shim's sandbox errors (E2B's `SandboxError`).
 *
 * @example
 * ```ts
 * try { await sbx.files.read('/missing'); } catch (e) { if (e instanceof SandboxError) console.log(e.code); }
 * ```
 */
export class SandboxError extends Error {
  /** The native SDK's stable error code (`file_not_found`, `sandbox_ended`, …), or `sandbox_error`. */
  readonly code: ErrorCode | 'not_supported' | 'command_exit';

  constructor(message?: string, options: { code?: SandboxError['code']; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? 'sandbox_error';
    const lineage: unknown = (options.cause as Record<symbol, unknown> | undefined)?.[LINEAGE];
    if (lineage !== undefined) Object.defineProperty(this, LINEAGE, { value: lineage });
  }
}

/** A command, request or watch ran past its timeout, or the sandbox is gone (E2B's `TimeoutError`). */
export class TimeoutError extends SandboxError {}

/** A malformed argument, raised before any call (E2B's `InvalidArgumentError`). */
export class InvalidArgumentError extends SandboxError {}

/** The sandbox's disk is full (E2B's `NotEnoughSpaceError`). */
export class NotEnoughSpaceError extends SandboxError {}

/** Something was not found (E2B's `NotFoundError`; its subclasses say what). */
export class NotFoundError extends SandboxError {}

/** No such file or directory in the sandbox (E2B's `FileNotFoundError`). */
export class FileNotFoundError extends NotFoundError {}

/** No such sandbox, or it has ended (E2B's `SandboxNotFoundError`). */
export class SandboxNotFoundError extends NotFoundError {}

/** A template problem (E2B's `TemplateError`). */
export class TemplateError extends SandboxError {}

/** Too many requests (E2B's `RateLimitError`); our control plane never sends it, kept for `catch` blocks. */
export class RateLimitError extends SandboxError {}

/**
 * The key or token is missing or was refused (E2B's `AuthenticationError`, which is not a
 * `SandboxError` in E2B either).
 */
export class AuthenticationError extends Error {
  /** The native SDK's code (`unauthenticated`). */
  readonly code: ErrorCode;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AuthenticationError';
    this.code = 'unauthenticated';
    const lineage: unknown = (options.cause as Record<symbol, unknown> | undefined)?.[LINEAGE];
    if (lineage !== undefined) Object.defineProperty(this, LINEAGE, { value: lineage });
  }
}

/**
 * A part of E2B's API this shim cannot honour on our control plane (E2B's hosted domains, its cloud's
 * metrics, its templates API, …): `feature` names it. Not an E2B class; it extends `SandboxError` so a
 * program's `catch (e instanceof SandboxError)` still catches it.
 *
 * @example
 * ```ts
 * try { sbx.getMcpUrl(); } catch (e) { if (e instanceof NotSupportedError) console.log(e.feature); } // 'getMcpUrl'
 * ```
 */
export class NotSupportedError extends SandboxError {
  /** The E2B method or option that is not offered. */
  readonly feature: string;

  constructor(feature: string, why: string) {
    super(`${feature} is not supported by the E2B shim: ${why}`, { code: 'not_supported' });
    this.feature = feature;
  }
}

/** What a finished command produced (E2B's `CommandResult`). */
export interface CommandResult {
  /** 0 on success; -1 when a signal ended the command. */
  readonly exitCode: number;
  /** Why the command failed (`exit status 1`, `signal: killed`), absent on success. */
  readonly error?: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
}

/** A command exited with a non-zero code (E2B's `CommandExitError`): the result is on the error. */
export class CommandExitError extends SandboxError implements CommandResult {
  readonly exitCode: number;
  readonly error: string | undefined;
  readonly stdout: string;
  readonly stderr: string;

  constructor(result: CommandResult) {
    super(result.error, { code: 'command_exit' });
    this.exitCode = result.exitCode;
    this.error = result.error;
    this.stdout = result.stdout;
    this.stderr = result.stderr;
  }
}

/** A native code's E2B class (a code not named here is a plain `SandboxError`). */
const E2B_CLASS_OF: Partial<
  Record<ErrorCode, new (message: string, options: { code: ErrorCode; cause: unknown }) => SandboxError>
> = {
  invalid_argument: InvalidArgumentError,
  invalid_allow_path: InvalidArgumentError,
  // E2B's envd answers these with its invalid-argument code.
  is_a_directory: InvalidArgumentError,
  not_a_directory: InvalidArgumentError,
  file_not_found: FileNotFoundError,
  sandbox_not_found: SandboxNotFoundError,
  sandbox_ended: SandboxNotFoundError,
  process_not_found: NotFoundError,
  secret_not_found: NotFoundError,
  not_found: NotFoundError,
  no_space: NotEnoughSpaceError,
};

/**
 * The E2B error for `error`: a native SDK error becomes its E2B class with the same message, `code` and
 * the native error as `cause`; anything else (already an E2B error, a bug) is returned as it is.
 */
export function toE2BError(error: unknown): unknown {
  if (!(error instanceof SdkError)) return error;
  if (
    error.code === 'unauthenticated' ||
    error.code === 'forbidden_origin' ||
    error.code === 'forbidden_host'
  ) {
    return new AuthenticationError(error.message, { cause: error });
  }
  const E2BClass = E2B_CLASS_OF[error.code] ?? SandboxError;
  return new E2BClass(error.message, { code: error.code, cause: error });
}

/** Runs a native call, turning what it throws into the E2B error. */
export async function e2bCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw toE2BError(error);
  }
}

/**
 * Whether a sandbox still runs (or is paused): false once it has ended, undefined when it cannot be told
 * (E2B's health check of envd).
 */
export type SandboxProbe = () => Promise<boolean | undefined>;

/** E2B's words for a call whose sandbox is gone (E2B's proxy answers 502; its SDK says timeout). */
const SANDBOX_GONE = 'The sandbox was killed or reached its end of life while the request was in flight.';

/**
 * The E2B error of a failed call to the sandbox itself (files, commands). As in E2B, a sandbox that is
 * gone is a `TimeoutError` there (E2B's envd is unreachable then): when the call says it has ended, or
 * when the call broke (a plain `SandboxError`) and `probe` finds it ended. Anything else as `toE2BError`.
 */
export async function sandboxCallError(error: unknown, probe: SandboxProbe): Promise<unknown> {
  const e2b = toE2BError(error);
  if (!(e2b instanceof SandboxError)) return e2b;
  const gone =
    e2b instanceof SandboxNotFoundError ||
    (e2b.constructor === SandboxError &&
      e2b.code === 'sandbox_error' &&
      (await probe().catch(() => undefined)) === false);
  if (!gone) return e2b;
  return new TimeoutError(`${e2b.message}: ${SANDBOX_GONE}`, { code: e2b.code, cause: error });
}

/** Runs a native call to the sandbox itself, turning what it throws into E2B's error (`sandboxCallError`). */
export async function sandboxCall<T>(call: () => Promise<T>, probe: SandboxProbe): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw await sandboxCallError(error, probe);
  }
}

/** A shim argument refusal: E2B's `InvalidArgumentError` carrying the native one (code, field, brand). */
export function invalidArgument(message: string, field: string): InvalidArgumentError {
  const native = new NativeInvalidArgumentError(message, { field });
  return new InvalidArgumentError(message, { code: 'invalid_argument', cause: native });
}

/**
 * `input` checked with a native schema before any call (`parseOptions`), a refusal as E2B's
 * `InvalidArgumentError` carrying the native one (its message, `field` and brand).
 */
export function e2bParse<S extends z.ZodType>(
  schema: S,
  input: unknown,
  typeName: string,
  fieldPrefix: readonly PropertyKey[] = [],
): z.output<S> {
  try {
    return parseOptions(schema, input, typeName, fieldPrefix);
  } catch (error) {
    throw toE2BError(error);
  }
}
