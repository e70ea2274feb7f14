/** `AgentLimits`: the bounds of one agent execution (SPEC "AgentLimits"). */
import { z } from 'zod';
import { LIMITS } from '../rules/limits.js';
import { parseOptions } from '../rules/parse-options.js';

const positiveInt = (max: number, what: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(1, `must be at least 1`)
    .max(max, `must be at most ${max} ${what}`);

const agentLimitsOptions = z.strictObject({
  timeoutMs: positiveInt(LIMITS.sandboxMaxTimeoutMs, 'ms (the sandbox cap)').default(LIMITS.agentTimeoutMs),
  maxSteps: positiveInt(100_000, 'steps').default(LIMITS.agentMaxSteps),
  maxTotalTokens: positiveInt(Number.MAX_SAFE_INTEGER, 'tokens')
    .nullable()
    .default(LIMITS.agentMaxTotalTokens),
  maxOutputBytes: positiveInt(2 ** 32, 'bytes').default(LIMITS.agentMaxOutputBytes),
});

/** Options of `AgentLimits`. */
export type AgentLimitsOptions = z.input<typeof agentLimitsOptions>;

/**
 * Deadline, step limit, token budget and kept output of one execution.
 *
 * @example
 * ```ts
 * new AgentLimits({ timeoutMs: 120_000, maxTotalTokens: null }); // 2 min, no token budget
 * ```
 */
export class AgentLimits {
  /** Runtime process deadline (default 600 s). */
  readonly timeoutMs: number;
  /** Step limit (default 50). */
  readonly maxSteps: number;
  /** Token budget, checked after each step (default 1,000,000; null disables). */
  readonly maxTotalTokens: number | null;
  /**
   * Runtime output kept by the SDK (default 16 MiB): events replayed to late subscribers and what the
   * result holds. It stops nothing and emits nothing; a live loop sees every event. sandboxd keeps at
   * most 8 MiB of an execution for readers that attach later and for the result's tool calls.
   */
  readonly maxOutputBytes: number;

  /**
   * Checks every option before anything else happens.
   *
   * @throws InvalidArgumentError naming the first offending field and its rule (never its value)
   */
  constructor(options: AgentLimitsOptions = {}) {
    const o = parseOptions(agentLimitsOptions, options, 'AgentLimits');
    this.timeoutMs = o.timeoutMs;
    this.maxSteps = o.maxSteps;
    this.maxTotalTokens = o.maxTotalTokens;
    this.maxOutputBytes = o.maxOutputBytes;
    Object.freeze(this);
  }
}
