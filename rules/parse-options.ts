/**
 * Parses constructor options with zod and turns every failure into an `InvalidArgumentError` whose
 * message names the type, the field and the rule, never the value (a misplaced secret must not leak
 * through an error).
 */
import { z } from 'zod';
import { InvalidArgumentError } from './errors.js';

/** Code a custom zod issue can carry in `params.code` to pick the SDK error code. */
export const ALLOW_PATH_ISSUE = 'invalid_allow_path';

/** Formats a zod path as `gateways.llm.allow[2][1]`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`))
    .join('');
}

/**
 * Parses `input` with `schema`, or throws `InvalidArgumentError` listing each failed field and rule.
 *
 * @param typeName - the SDK type being built, first word of the message
 * @param fieldPrefix - path of this value inside a larger one, for nested checks
 */
export function parseOptions<S extends z.ZodType>(
  schema: S,
  input: unknown,
  typeName: string,
  fieldPrefix: readonly PropertyKey[] = [],
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  // An unknown key is reported at its own path, so `field` names it (for example `apiKey`).
  const issues = result.error.issues.map((issue) =>
    issue.code === 'unrecognized_keys'
      ? { ...issue, path: [...issue.path, ...issue.keys.slice(0, 1)] }
      : issue,
  );
  const first = issues[0];
  const field = formatFieldPath([...fieldPrefix, ...(first?.path ?? [])]);
  const parts = issues.slice(0, 5).map((issue) => {
    const at = formatFieldPath([...fieldPrefix, ...issue.path]);
    return at === '' ? issue.message : `${at}: ${issue.message}`;
  });
  const more = issues.length > 5 ? `; and ${issues.length - 5} more` : '';
  const allowPath = issues.some(
    (issue) =>
      issue.code === 'custom' && (issue.params as { code?: string } | undefined)?.code === ALLOW_PATH_ISSUE,
  );
  throw new InvalidArgumentError(`${typeName}: ${parts.join('; ')}${more}`, {
    code: allowPath ? 'invalid_allow_path' : 'invalid_argument',
    ...(field === '' ? {} : { field }),
  });
}

/** Schema of an http(s) URL option (control plane addresses, endpoint overrides). */
export const httpUrlSchema = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
