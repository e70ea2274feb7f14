/**
 * AWS Secrets Manager as a secret backend, with the caller's own credentials (the standard AWS
 * credential chain). The AWS SDK is loaded and its client made on first use, so importing the package
 * loads no AWS code and constructing a store makes no call.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SandboxError, SecretNotFoundError } from '../../rules/errors.js';
import type { SecretBackend } from './secret-backend.js';

/** Where the backend talks. */
export interface AwsSecretsBackendOptions {
  readonly region: string;
  /** An endpoint override (an AWS-compatible server in tests). */
  readonly endpoint?: string;
}

type AwsModule = typeof import('@aws-sdk/client-secrets-manager');

interface AwsSdk {
  readonly aws: AwsModule;
  readonly client: SecretsManagerClient;
}

/** Secrets in AWS Secrets Manager. */
export class AwsSecretsBackend implements SecretBackend {
  readonly #options: AwsSecretsBackendOptions;
  #sdk: Promise<AwsSdk> | undefined;

  constructor(options: AwsSecretsBackendOptions) {
    this.#options = options;
  }

  async read(name: string): Promise<string> {
    const out = await this.#call(name, ({ aws, client }) =>
      client.send(new aws.GetSecretValueCommand({ SecretId: name })),
    );
    if (out.SecretString === undefined) throw new SecretNotFoundError(`secret ${name} has no string value`);
    return out.SecretString;
  }

  async create(name: string, value: string): Promise<void> {
    await this.#call(name, ({ aws, client }) =>
      client.send(new aws.CreateSecretCommand({ Name: name, SecretString: value })),
    );
  }

  async update(name: string, value: string): Promise<void> {
    await this.#call(name, ({ aws, client }) =>
      client.send(new aws.PutSecretValueCommand({ SecretId: name, SecretString: value })),
    );
  }

  #load(): Promise<AwsSdk> {
    this.#sdk ??= import('@aws-sdk/client-secrets-manager').then((aws) => ({
      aws,
      client: new aws.SecretsManagerClient({
        region: this.#options.region,
        ...(this.#options.endpoint === undefined ? {} : { endpoint: this.#options.endpoint }),
      }),
    }));
    return this.#sdk;
  }

  /** Runs a call; AWS errors become SDK exceptions naming the secret, never carrying AWS text. */
  async #call<T>(name: string, send: (sdk: AwsSdk) => Promise<T>): Promise<T> {
    const sdk = await this.#load();
    try {
      return await send(sdk);
    } catch (error) {
      if (error instanceof sdk.aws.ResourceNotFoundException) {
        throw new SecretNotFoundError(`secret ${name} does not exist`);
      }
      const kind = error instanceof Error ? error.name : 'unknown error';
      throw new SandboxError(`the secret store refused the call for ${name} (${kind})`);
    }
  }
}
