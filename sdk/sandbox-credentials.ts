/**
 * `Sandbox.create({ credentials })` and `sbx.credentials` (issue 27 item 2): the credential broker.
 * Each rule binds headers (each naming a secret, or a `SecretRef`) to one host; sandboxd's proxy adds
 * them to every HTTPS request sandbox code sends that host through `HTTPS_PROXY`, which every command
 * gets, with a CA of the sandbox's own trusted by the sandbox's toolchains. Sandbox code uses the
 * credential and never reads it. Values are read with the caller's `SecretCache` just before the one
 * call that sends them (`POST /v1/credentials`) and held nowhere else in the SDK.
 *
 * On the creating handle `refresh()` reads every secret again and sends the rules anew (rotation); on a
 * connected handle it reads the broker's state only, and no rule is ever recovered from the sandbox.
 */
import { z } from 'zod';
import { credentialStateSchema, type CredentialState } from '../protocol/credentials-wire.js';
import { MAX_CREDENTIAL_RULES, parseCredentialHost } from '../rules/credential-rules.js';
import { SandboxError } from '../rules/errors.js';
import { unimplementedWhenMissing } from './unimplemented.js';
import type { DaemonClient } from './daemon-client.js';
import { secretHeadersSchema, type SecretSource } from './secret-gateway.js';
import type { SecretCache } from './secret-store/secret-cache.js';

const hostSchema = z.string().transform((raw, ctx) => {
  const parsed = parseCredentialHost(raw);
  if ('error' in parsed) {
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }
  return parsed.host;
});

const headersSchema = secretHeadersSchema.refine((map) => Object.keys(map).length > 0, {
  message: 'give at least one header',
});

/** Schema of `credentials`: at most 32 rules, one per host. */
export const credentialRulesSchema = z
  .array(z.strictObject({ host: hostSchema, headers: headersSchema }))
  .max(MAX_CREDENTIAL_RULES, `at most ${String(MAX_CREDENTIAL_RULES)} rules`)
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((rule, index) => {
      if (seen.has(rule.host)) {
        ctx.addIssue({ code: 'custom', path: [index, 'host'], message: 'is given twice' });
      }
      seen.add(rule.host);
    });
  });

/** One credential rule as a caller writes it. */
export interface CredentialRule {
  /** The exact host (`api.github.com`): never a wildcard or an address. */
  readonly host: string;
  /** Header name to the secret holding its whole value (`authorization: 'github-token'`). */
  readonly headers: Readonly<Record<string, SecretSource>>;
}

/** What the broker reports: hosts, the proxy sandbox code uses, the sandbox CA's fingerprint. */
export type CredentialStatus = CredentialState;

/** The credential broker of one sandbox handle. */
export class SandboxCredentials {
  readonly #client: DaemonClient;
  readonly #rules: readonly CredentialRule[];
  readonly #cache: SecretCache | undefined;
  #state: CredentialStatus = { hosts: [], proxy: null, caFingerprint256: null };

  /** @internal */
  constructor(client: DaemonClient, rules: readonly CredentialRule[], cache?: SecretCache) {
    this.#client = client;
    this.#rules = rules;
    this.#cache = cache;
  }

  /** Hosts with a credential, the proxy's URL in the sandbox and the CA's fingerprint, as last read. */
  get status(): CredentialStatus {
    return this.#state;
  }

  /**
   * Creating handle: reads every rule's secrets again (even if cached) and sends them; requests already
   * under way keep the old values, the next ones get the new. Connected handle: reads the state again.
   *
   * @throws SecretNotFoundError when a secret is missing (the rules in force stay)
   */
  async refresh(): Promise<CredentialStatus> {
    if (this.#cache === undefined || this.#rules.length === 0) {
      this.#state = await this.#client.call('GET', '/v1/credentials', credentialStateSchema);
      return this.#state;
    }
    this.#cache.invalidate(this.#rules.flatMap((rule) => Object.values(rule.headers)));
    return this.configure();
  }

  /** @internal Resolves every secret, then sends the whole set in one call. */
  async configure(): Promise<CredentialStatus> {
    const cache = this.#cache;
    if (cache === undefined) throw new SandboxError('this handle holds no credential rules');
    const rules: { host: string; headers: Record<string, string> }[] = [];
    for (const rule of this.#rules) {
      const headers: Record<string, string> = {};
      // Resolved just before the call, held only for it.
      for (const [name, source] of Object.entries(rule.headers)) headers[name] = await cache.get(source);
      rules.push({ host: rule.host, headers });
    }
    this.#state = await this.#client
      .call('POST', '/v1/credentials', credentialStateSchema, { rules })
      .catch((error: unknown) => {
        throw unimplementedWhenMissing(error, 'the credential broker');
      });
    return this.#state;
  }
}
