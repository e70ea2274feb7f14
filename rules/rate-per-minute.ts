/**
 * A gateway route's `ratePerMinute` (SPEC "SecretGateway", "Limits"): 0 means the default 600, else
 * 1..6000. Checked by `SecretGateway` and by the preset builders with the same words.
 */
import { z } from 'zod';
import { LIMITS } from './limits.js';

const RATE_RULE = `must be 0 (= ${LIMITS.defaultRatePerMinute}) or 1..${LIMITS.maxRatePerMinute}`;

/** Schema of `ratePerMinute`: 0 (the default 600) or 1..6000, 0 when absent. */
export const ratePerMinuteSchema = z
  .number()
  .int(RATE_RULE)
  .min(0, RATE_RULE)
  .max(LIMITS.maxRatePerMinute, RATE_RULE)
  .default(0);
