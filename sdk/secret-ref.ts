/** `SecretRef`: a reference to a secret in the secret store, an alternative to a bare secret name. */
import { z } from 'zod';
import { REGION } from '../rules/names.js';
import { parseOptions } from '../rules/parse-options.js';

/** A secret name or ARN as the secret store accepts it. Never a secret value. */
export const SECRET_NAME = /^[A-Za-z0-9/_+=.@:-]{1,2048}$/;

/** The wording of the secret-name rule in error messages. */
export const SECRET_NAME_RULE =
  'must name a secret (1-2048 characters A-Z a-z 0-9 / _ + = . @ : -), never hold its value';

const secretRefOptions = z.strictObject({
  name: z.string().regex(SECRET_NAME, SECRET_NAME_RULE),
  region: z.string().regex(REGION, 'must be a region such as us-east-1').optional(),
});

/** Options of `SecretRef`. */
export type SecretRefOptions = z.input<typeof secretRefOptions>;

/**
 * Names a secret in a given store region, where a bare name would use the caller's default store.
 *
 * @example
 * ```ts
 * new SecretGateway({ upstream: 'https://api.example', headers: { 'x-api-key': new SecretRef({ name: 'llm-key', region: 'eu-west-1' }) }, allow: [['POST', '/v1/messages']] });
 * ```
 */
export class SecretRef {
  /** Secret name or ARN. */
  readonly name: string;
  /** Region of the store holding it; the caller's default when undefined. */
  readonly region: string | undefined;

  constructor(options: SecretRefOptions) {
    const parsed = parseOptions(secretRefOptions, options, 'SecretRef');
    this.name = parsed.name;
    this.region = parsed.region;
    Object.freeze(this);
  }
}
