/**
 * `SDK_ISOLATION`: the isolation of sandboxes whose create names none, read alike by the SDK (which
 * sends it) and by the embedded control plane (its default).
 */
import { InvalidArgumentError } from '../rules/errors.js';
import { ISOLATIONS, isolationSchema, type Isolation } from './control-plane-api.js';

/**
 * `SDK_ISOLATION` (`namespace` or `gvisor`); undefined when unset or empty.
 *
 * @throws InvalidArgumentError for another value
 */
export function isolationFromEnvironment(env: NodeJS.ProcessEnv = process.env): Isolation | undefined {
  const value = env.SDK_ISOLATION;
  if (value === undefined || value === '') return undefined;
  const parsed = isolationSchema.safeParse(value);
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `SDK_ISOLATION: must be ${ISOLATIONS.join(' or ')}, not ${JSON.stringify(value)}`,
      { field: 'isolation' },
    );
  }
  return parsed.data;
}
