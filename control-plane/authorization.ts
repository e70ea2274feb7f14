/**
 * Who may act on a sandbox: the holder of its access token (the control plane keeps only the token's
 * SHA-256) or of the operator key, which may act on any sandbox. Both are compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthenticationError } from '../rules/errors.js';
import type { SandboxFacts } from './journal-records.js';
import { CredentialCheck } from './operator-key.js';
import type { LiveSandbox, SandboxRegistry } from './sandbox-registry.js';

/** SHA-256 of an access token, hex: what a sandbox's facts keep instead of the token. */
export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * Checks bearers against the operator key and the registry's sandboxes.
 *
 * @example
 * ```ts
 * const auth = new Authorization(operatorKey, registry);
 * const sandbox = auth.authorized(id, bearer); // or AuthenticationError, sandbox_ended, sandbox_not_found
 * ```
 */
export class Authorization {
  readonly #operator: CredentialCheck;
  readonly #registry: SandboxRegistry;

  constructor(operatorKey: string, registry: SandboxRegistry) {
    this.#operator = new CredentialCheck(operatorKey);
    this.#registry = registry;
  }

  /** True when `bearer` is the operator key. */
  isOperator(bearer: string | undefined): boolean {
    return this.#operator.admits(bearer);
  }

  /** True when `bearer` is the sandbox's access token or the operator key. */
  admits(facts: SandboxFacts, bearer: string | undefined): boolean {
    const presented = Buffer.from(hashToken(bearer ?? ''), 'hex');
    const ownToken = timingSafeEqual(presented, Buffer.from(facts.tokenHash, 'hex'));
    return this.#operator.admits(bearer) || ownToken;
  }

  /**
   * Refuses a caller without the sandbox's token or the operator key (the sandbox may have ended).
   *
   * @throws SandboxError `sandbox_not_found`, before the bearer is looked at
   * @throws AuthenticationError
   */
  check(id: string, bearer: string | undefined): void {
    if (!this.admits(this.#registry.factsOf(id), bearer)) {
      throw new AuthenticationError('missing or invalid sandbox access token');
    }
  }

  /**
   * A live sandbox for a caller holding its token or the operator key: the bearer is checked first, so
   * only such a caller learns that the sandbox has ended.
   *
   * @throws AuthenticationError
   * @throws SandboxError `sandbox_not_found`, `sandbox_ended`
   */
  authorized(id: string, bearer: string | undefined): LiveSandbox {
    this.check(id, bearer);
    return this.#registry.live(id);
  }
}
