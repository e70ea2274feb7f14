/**
 * `SecretStore` (SPEC "Secret store"): create and update secrets whose value is the whole header value.
 * With a `region` it is AWS Secrets Manager under the caller's own credentials; without one it is the
 * local file of the embedded default. Construction makes no call.
 */
import { z } from 'zod';
import { REGION } from '../../rules/names.js';
import { httpUrlSchema, parseOptions } from '../../rules/parse-options.js';
import { SECRET_NAME, SECRET_NAME_RULE } from '../secret-ref.js';
import { AwsSecretsBackend } from './aws-secrets-backend.js';
import { LocalSecretsBackend } from './local-secrets-backend.js';
import type { SecretBackend } from './secret-backend.js';

const storeOptions = z.strictObject({
  region: z.string().regex(REGION, 'must be a region such as us-east-1').optional(),
  /** AWS endpoint override (an AWS-compatible server for tests). */
  endpoint: httpUrlSchema.optional(),
  /** The local backend's file (without `region`). */
  file: z.string().startsWith('/', 'must be an absolute path').optional(),
});

/** Options of `SecretStore`. */
export type SecretStoreOptions = z.input<typeof storeOptions>;

const secretName = z.string().regex(SECRET_NAME, SECRET_NAME_RULE);
const secretValue = z.string().min(1, 'must not be empty');

/**
 * A secret store.
 *
 * @example
 * ```ts
 * const store = new SecretStore({ region: 'us-east-1' });
 * await store.create('vendor-b-key', 'sk-...');       // the whole header value
 * await store.update('llm-bearer', 'Bearer sk-...');
 * ```
 */
export class SecretStore {
  /** The region, or undefined for the local backend. */
  readonly region: string | undefined;
  readonly #backend: SecretBackend;

  constructor(options: SecretStoreOptions = {}) {
    const o = parseOptions(storeOptions, options, 'SecretStore');
    this.region = o.region;
    this.#backend =
      o.region === undefined
        ? new LocalSecretsBackend(o.file)
        : new AwsSecretsBackend({
            region: o.region,
            ...(o.endpoint === undefined ? {} : { endpoint: o.endpoint }),
          });
    Object.freeze(this);
  }

  /** Stores a new secret. */
  async create(name: string, value: string): Promise<void> {
    await this.#backend.create(
      this.#name(name),
      parseOptions(secretValue, value, 'SecretStore.create', ['value']),
    );
  }

  /** Replaces a secret's value. */
  async update(name: string, value: string): Promise<void> {
    await this.#backend.update(
      this.#name(name),
      parseOptions(secretValue, value, 'SecretStore.update', ['value']),
    );
  }

  /** @internal The value, for `SecretCache` only. */
  read(name: string): Promise<string> {
    return this.#backend.read(this.#name(name));
  }

  #name(name: string): string {
    return parseOptions(secretName, name, 'SecretStore', ['name']);
  }
}
