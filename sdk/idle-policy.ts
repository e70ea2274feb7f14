/** `IdlePolicy`: when a sandbox suspends itself and whether calls resume it (SPEC "States"). */
import { z } from 'zod';
import { LIMITS } from '../rules/limits.js';
import { parseOptions } from '../rules/parse-options.js';

const maxIdle = LIMITS.sandboxMaxTimeoutMs / 1000;

const idlePolicyOptions = z.strictObject({
  maxIdleSeconds: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(maxIdle, `must be at most ${maxIdle} (the sandbox cap)`)
    .default(LIMITS.idleSeconds),
  autoResume: z.boolean().default(true),
});

/** Options of `IdlePolicy`. */
export type IdlePolicyOptions = z.input<typeof idlePolicyOptions>;

/**
 * Suspend after `maxIdleSeconds` without traffic (default 300); with `autoResume` (default true), any
 * SDK call on a suspended sandbox resumes it first.
 *
 * @example
 * ```ts
 * new IdlePolicy({ maxIdleSeconds: 60, autoResume: false });
 * ```
 */
export class IdlePolicy {
  /** Seconds without traffic before auto-suspend. */
  readonly maxIdleSeconds: number;
  /** Whether an SDK call resumes a suspended sandbox. */
  readonly autoResume: boolean;

  constructor(options: IdlePolicyOptions = {}) {
    const o = parseOptions(idlePolicyOptions, options, 'IdlePolicy');
    this.maxIdleSeconds = o.maxIdleSeconds;
    this.autoResume = o.autoResume;
    Object.freeze(this);
  }
}
