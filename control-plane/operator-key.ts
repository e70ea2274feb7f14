/**
 * The operator key: the credential for what is not one sandbox's (create, list, the all-sandbox event
 * feed). Kept in an owner-only file under the state folder, made on first start; the control plane
 * holds only its digest and compares in constant time. The SDK presents it from `SDK_API_KEY`.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the key of a state folder lives. */
export const operatorKeyFile = (stateDir: string): string => join(stateDir, 'operator-key');

/** Keys are 43 base64url characters (256 bits); a planted shorter one is refused. */
const KEY = /^[A-Za-z0-9_-]{32,128}$/;

/**
 * The state folder's operator key, made (0600, in a 0700 folder) when there is none.
 *
 * @returns the key and whether it was made now (the caller prints a new key once)
 */
export function loadOrCreateOperatorKey(stateDir: string): { key: string; created: boolean } {
  return loadOrCreateKey(stateDir, operatorKeyFile(stateDir));
}

/**
 * The control plane's own key (0600 in the state folder, never shown), from which each sandbox's
 * credential for its daemon (its event stream, the agent's executions) is derived: a restarted control
 * plane can follow its sandboxes again.
 */
export function loadOrCreateControlKey(stateDir: string): string {
  return loadOrCreateKey(stateDir, join(stateDir, 'control-key')).key;
}

/**
 * The secret webhooks are signed with (issue 28; 0600 in the state folder as `webhook-secret`, never
 * logged): receivers are given it by the operator to check each request's signature.
 */
export const webhookSecretFile = (stateDir: string): string => join(stateDir, 'webhook-secret');

/** The state folder's webhook signing secret, made when there is none. */
export function loadOrCreateWebhookSecret(stateDir: string): string {
  return loadOrCreateKey(stateDir, webhookSecretFile(stateDir)).key;
}

/** The control plane's credential for one sandbox's daemon: its event stream, the agent's executions. */
export function controlTokenFor(controlKey: string, sandboxId: string): string {
  return createHmac('sha256', controlKey).update(sandboxId, 'utf8').digest('base64url');
}

/**
 * Reads a key file, or makes it (exclusively: of two processes starting at once, one writes and both
 * read the same key). A file that exists but holds no valid key is an error, never silently replaced:
 * replacing it would lock out everyone holding the old key.
 */
function loadOrCreateKey(stateDir: string, file: string): { key: string; created: boolean } {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  let created = false;
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  chmodSync(file, 0o600); // owner-only, also a file someone else made
  const key = readFileSync(file, 'utf8').trim();
  if (!KEY.test(key)) throw new Error(`${file} holds no valid key; remove it to make a new one`);
  return { key, created };
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Checks presented credentials against one key, in constant time; the key itself is not kept. */
export class CredentialCheck {
  readonly #digest: Buffer;

  constructor(key: string) {
    this.#digest = digest(key);
  }

  /** True when `presented` is the key. */
  admits(presented: string | undefined): boolean {
    return presented !== undefined && timingSafeEqual(digest(presented), this.#digest);
  }
}
