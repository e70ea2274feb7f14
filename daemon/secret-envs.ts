/**
 * The sandbox's `secrets=` (SPEC "What the service does" 6): environment variables the SDK sent with
 * `PUT /v1/secrets`, added to every command `POST /v1/processes` starts. The values live in this
 * object's memory only: never a file, a command line, a log line or an audit record. The agent's
 * runtimes never get them (the agent reaches its model through gateways only), so only the command
 * endpoint asks for them.
 */
import { inspect } from 'node:util';

/** The secret environment variables of one sandbox. */
export class SecretEnvs {
  #values: Readonly<Record<string, string>> = Object.freeze({});

  /** Replaces the whole set (names already checked by the wire schema). */
  replace(envs: Readonly<Record<string, string>>): void {
    this.#values = Object.freeze({ ...envs });
  }

  /** The variables set, sorted: names only. */
  get names(): string[] {
    return Object.keys(this.#values).sort();
  }

  /**
   * A command's environment: the secrets, then the command's own `envs`, which win on a shared name (the
   * caller named that value for this one command).
   */
  under(envs: Readonly<Record<string, string>>): Record<string, string> {
    return { ...this.#values, ...envs };
  }

  /** Names only, should this object ever be printed or serialised. */
  toJSON(): { names: string[] } {
    return { names: this.names };
  }

  [inspect.custom](): string {
    return `SecretEnvs(${this.names.join(', ')})`;
  }
}
