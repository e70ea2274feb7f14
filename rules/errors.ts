/**
 * The SDK exception classes of SPEC "Errors". Each carries a stable `code` from the registry, and
 * `instanceof` also holds between two copies of this package loaded side by side (a brand looked up with
 * `Symbol.for`, not object identity).
 *
 * A message names the field and the rule, never the value: no message carries a secret value, vendor
 * text, a prompt or sandbox content.
 */
import type { AgentFailureReason } from './agent-reasons.js';
import type { ErrorCode } from './error-codes.js';

/** Extra facts about an error, safe to show: field paths, failure classes, reasons. */
export type ErrorContext = Readonly<Record<string, string | number | boolean>>;

/**
 * The shape in which an error crosses a process boundary (DESIGN.md §3). Its schema, `envelopeOf` and
 * `errorFromEnvelope` are in `protocol/error-envelope.ts`, which re-exports this builder.
 */
export interface ErrorEnvelope {
  readonly code: ErrorCode;
  readonly message: string;
  readonly context?: ErrorContext;
}

/** The one builder of an envelope: `context` only when there is one. */
export function errorEnvelope(code: ErrorCode, message: string, context?: ErrorContext): ErrorEnvelope {
  return context === undefined ? { code, message } : { code, message, context };
}

const LINEAGE = Symbol.for('sdk.error.lineage');

interface Named {
  readonly className: string;
}

function lineageOf(ctor: unknown): string[] {
  const names: string[] = [];
  for (let c = ctor; typeof c === 'function'; c = Object.getPrototypeOf(c)) {
    if (Object.hasOwn(c, 'className')) names.push((c as unknown as Named).className);
  }
  return names;
}

/** The base of every SDK exception. */
export abstract class SdkError extends Error {
  /** The class name used by the cross-copy `instanceof` brand. */
  static readonly className: string = 'SdkError';

  /** Stable code from the error registry. */
  readonly code: ErrorCode;
  /** Safe extra facts (never a secret, a prompt or sandbox content). */
  readonly context: ErrorContext | undefined;

  protected constructor(code: ErrorCode, message: string, context?: ErrorContext) {
    super(message);
    const ctor = new.target as unknown as Named;
    this.code = code;
    this.context = context === undefined ? undefined : Object.freeze({ ...context });
    Object.defineProperty(this, 'name', { value: ctor.className, configurable: true, writable: true });
    Object.defineProperty(this, LINEAGE, { value: Object.freeze(lineageOf(new.target)) });
  }

  /** True for any error made by any copy of this package whose class is this one or a subclass. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== 'object' || value === null) return false;
    const lineage: unknown = (value as Record<symbol, unknown>)[LINEAGE];
    return Array.isArray(lineage) && lineage.includes((this as unknown as Named).className);
  }

  /** The wire envelope `{ code, message, context? }`. */
  toJSON(): ErrorEnvelope {
    return errorEnvelope(this.code, this.message, this.context);
  }
}

/**
 * A malformed argument, raised before any call or side effect.
 *
 * @example
 * ```ts
 * try { new SecretGateway({ upstream: 'http://h', headers: {}, allow: [] }); }
 * catch (e) { if (e instanceof InvalidArgumentError) console.log(e.field); } // 'upstream'
 * ```
 */
export class InvalidArgumentError extends SdkError {
  static override readonly className: string = 'InvalidArgumentError';

  constructor(
    message: string,
    options: { code?: 'invalid_argument' | 'invalid_allow_path'; field?: string } = {},
  ) {
    super(
      options.code ?? 'invalid_argument',
      message,
      options.field === undefined ? undefined : { field: options.field },
    );
  }

  /** Path of the offending field, such as `gateways.llm.allow[2]`. */
  get field(): string | undefined {
    const field = this.context?.['field'];
    return typeof field === 'string' ? field : undefined;
  }
}

/** A secret named by a gateway does not exist in the secret store. */
export class SecretNotFoundError extends SdkError {
  static override readonly className: string = 'SecretNotFoundError';

  constructor(message: string, context?: ErrorContext) {
    super('secret_not_found', message, context);
  }
}

/** The codes a `SandboxError` can carry. */
export type SandboxErrorCode =
  | 'sandbox_error'
  | 'sandbox_not_found'
  | 'process_not_found'
  | 'not_found'
  | 'agent_config_missing'
  | 'method_not_allowed'
  | 'sandbox_ended'
  | 'sandbox_suspended'
  | 'configuration_rejected'
  | 'unimplemented'
  | 'file_not_found'
  | 'not_a_directory'
  | 'is_a_directory'
  | 'permission_denied'
  | 'no_space'
  | 'port_closed'
  | 'port_forbidden';

/** The sandbox or its daemon failed or refused; `failureClass` names the daemon's failure class. */
export class SandboxError extends SdkError {
  static override readonly className: string = 'SandboxError';

  constructor(message: string, options: { code?: SandboxErrorCode; failureClass?: string } = {}) {
    super(
      options.code ?? 'sandbox_error',
      message,
      options.failureClass === undefined ? undefined : { failureClass: options.failureClass },
    );
  }

  /** The daemon's failure class, such as `UnimplementedError`. */
  get failureClass(): string | undefined {
    const value = this.context?.['failureClass'];
    return typeof value === 'string' ? value : undefined;
  }
}

/** A sandbox access token is missing or was rejected. */
export class AuthenticationError extends SdkError {
  static override readonly className: string = 'AuthenticationError';

  /**
   * `forbidden_origin`: a browser request from another origin carried the credential. `forbidden_host`:
   * a request named another host than the control plane's (`Host`).
   */
  constructor(
    message: string,
    options: { readonly code?: 'unauthenticated' | 'forbidden_origin' | 'forbidden_host' } = {},
  ) {
    super(options.code ?? 'unauthenticated', message);
  }
}

/** An agent execution failed; `reason` is one of SPEC "Agent reasons". */
export class AgentError extends SdkError {
  static override readonly className: string = 'AgentError';

  /** Why the execution failed. */
  readonly reason: AgentFailureReason;

  constructor(reason: AgentFailureReason, message = `agent execution failed: ${reason}`) {
    super('agent_failed', message, { reason });
    this.reason = reason;
  }
}
