/** Reads a JSON answer of the daemon or the control plane: an error envelope becomes its SDK exception. */
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { errorFromEnvelope } from '../protocol/error-envelope.js';
import { SandboxError } from '../rules/errors.js';

/**
 * The answer parsed with `schema`.
 *
 * @param what - names the call in the error for a malformed answer, such as `the daemon to GET /v1/version`
 */
export async function readAnswer<T extends z.ZodType>(
  res: Dispatcher.ResponseData,
  schema: T,
  what: string,
): Promise<z.output<T>> {
  const payload: unknown = await res.body.json().catch(() => undefined);
  if (res.statusCode >= 400) throw errorFromEnvelope(payload);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new SandboxError(`malformed answer from ${what}`);
  return parsed.data;
}
