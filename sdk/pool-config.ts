/** `PoolConfig` and `agentPoolWarmup`: warm sandbox pools (SPEC "Persistence and pools"). */
import { z } from 'zod';
import { TEMPLATE_NAME } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';
import type { RuntimeName } from './runtimes.js';

/** A warm-up step run in each pooled sandbox before it is handed out. */
export interface PoolWarmup {
  readonly kind: 'agent';
  readonly runtime: RuntimeName;
}

/**
 * The warm-up that prepares an agent runtime in every pooled sandbox.
 *
 * @example
 * ```ts
 * new PoolConfig({ size: 4, template: 'sdk-agent', warmup: agentPoolWarmup('runtime_a') });
 * ```
 */
export function agentPoolWarmup(runtime: RuntimeName): PoolWarmup {
  return Object.freeze({
    kind: 'agent',
    runtime: parseOptions(z.enum(['runtime_a', 'runtime_b']), runtime, 'agentPoolWarmup'),
  });
}

const poolConfigOptions = z.strictObject({
  size: z.number().int('must be a whole number').min(1, 'must be at least 1').max(300, 'must be at most 300'),
  template: z.string().regex(TEMPLATE_NAME, 'must be an image name [a-z0-9._-] or an ARN'),
  allowInternetAccess: z.boolean().default(true),
  warmup: z
    .custom<PoolWarmup>(
      (v) => typeof v === 'object' && v !== null && 'kind' in v && v.kind === 'agent',
      'must come from agentPoolWarmup()',
    )
    .optional(),
});

/** Options of `PoolConfig`. */
export type PoolConfigOptions = z.input<typeof poolConfigOptions>;

/** How many hot sandboxes to keep, of which template and egress, and how to warm them. */
export class PoolConfig {
  /** Number of hot slots. */
  readonly size: number;
  /** Template of every slot. */
  readonly template: string;
  /** Egress of every slot (default open). */
  readonly allowInternetAccess: boolean;
  /** Warm-up run in each slot. */
  readonly warmup: PoolWarmup | undefined;

  constructor(options: PoolConfigOptions) {
    const o = parseOptions(poolConfigOptions, options, 'PoolConfig');
    this.size = o.size;
    this.template = o.template;
    this.allowInternetAccess = o.allowInternetAccess;
    this.warmup = o.warmup;
    Object.freeze(this);
  }
}
