/**
 * The credential broker on the wire (issue 27 item 2): `POST /v1/credentials` carries every rule with
 * its resolved header values (like `POST /v1/gateways`, never logged), and sandboxd answers with state
 * only: the hosts, the proxy's address in the sandbox and the fingerprint of the sandbox's CA.
 */
import { z } from 'zod';
import { MAX_CREDENTIAL_RULES } from '../rules/credential-rules.js';
import { LIMITS } from '../rules/limits.js';

/** The port the broker prefers on the sandbox's loopback (an OS-chosen one when sandbox code holds it). */
export const BROKER_PORT = 3128;

/** One rule with its header values resolved (sandboxd checks names and values again). */
export const credentialRuleWire = z.strictObject({
  host: z.string().max(253),
  headers: z
    .record(z.string(), z.string())
    .refine((headers) => Object.keys(headers).length <= LIMITS.headersPerRoute, {
      message: `at most ${String(LIMITS.headersPerRoute)} headers`,
    }),
});

/** Body of `POST /v1/credentials`: the whole set, replacing the one in force. */
export const configureCredentialsSchema = z.strictObject({
  rules: z.array(credentialRuleWire).max(MAX_CREDENTIAL_RULES),
});

/** The broker's state: nothing secret. */
export const credentialStateSchema = z.strictObject({
  /** Hosts with a rule, sorted. */
  hosts: z.array(z.string()),
  /** `http://127.0.0.1:<port>`, what every command's `HTTPS_PROXY` says; null before any rule. */
  proxy: z.string().nullable(),
  /** SHA-256 of the sandbox's CA certificate (`AB:CD:…`); null before any rule. */
  caFingerprint256: z.string().nullable(),
});

/** The broker's state. */
export type CredentialState = z.infer<typeof credentialStateSchema>;
