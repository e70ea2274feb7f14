/** Where secret values live. Every backend reports a missing secret as `SecretNotFoundError`. */

/** A secret store backend. Values pass through, never into a message or a log. */
export interface SecretBackend {
  /** The value of `name`. @throws SecretNotFoundError when there is no such secret */
  read(name: string): Promise<string>;
  /** Stores a new secret. */
  create(name: string, value: string): Promise<void>;
  /** Replaces the value of an existing secret. @throws SecretNotFoundError when there is no such secret */
  update(name: string, value: string): Promise<void>;
}
