/**
 * Runtime configurations written by `PUT /v1/agent/config`, kept by hash so an execution names the one
 * it runs with and an unchanged configuration is never written twice. The configuration holds no
 * credential (the gateway injects it); its files go to a root-owned folder the agent can read but not
 * change, beside the read-only config home that stops opencode's background plugin install
 * (runtimes.md §1.4).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_CONFIG_DIR, AGENT_CONFIG_HOME, type AgentConfigWrite } from '../protocol/agent-wire.js';
import { configHash } from '../runtime-drivers/config-hash.js';
import { RequestError } from './request-error.js';

/** Configurations kept; the oldest is forgotten beyond this. */
const KEPT = 16;

/** A configuration sandboxd holds. */
export interface StoredConfig {
  readonly runtime: AgentConfigWrite['runtime'];
  readonly hash: string;
  readonly text: string;
  readonly env: Readonly<Record<string, string>>;
}

/** The configurations of one sandbox. */
export class AgentConfigs {
  readonly #byHash = new Map<string, StoredConfig>();

  constructor(
    private readonly dir = AGENT_CONFIG_DIR,
    private readonly configHome = AGENT_CONFIG_HOME,
  ) {}

  /**
   * Writes the configuration's files (0644, root's) and keeps it under its hash.
   *
   * @throws RequestError `invalid_argument` when the hash is not the configuration's own
   */
  write(config: AgentConfigWrite): StoredConfig {
    if (configHash(config.text, config.files) !== config.hash) {
      throw new RequestError('invalid_argument', 'hash: is not the hash of this configuration', undefined, {
        field: 'hash',
      });
    }
    this.#prepare();
    for (const file of config.files) {
      // The schema allows only a file directly in the folder; the name is joined, never resolved.
      const path = join(this.dir, file.path.slice(AGENT_CONFIG_DIR.length + 1));
      writeFileSync(path, file.content, { mode: 0o644 });
      chmodSync(path, 0o644);
    }
    const stored = { runtime: config.runtime, hash: config.hash, text: config.text, env: config.env };
    this.#byHash.delete(config.hash);
    this.#byHash.set(config.hash, stored);
    if (this.#byHash.size > KEPT) this.#byHash.delete(this.#byHash.keys().next().value ?? '');
    return stored;
  }

  /** The configuration with this hash, if written. */
  get(hash: string): StoredConfig | undefined {
    return this.#byHash.get(hash);
  }

  /** The read-only config home (made once). */
  get configHomeDir(): string {
    this.#prepare();
    return this.configHome;
  }

  #prepare(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    chmodSync(this.dir, 0o755);
    const opencode = join(this.configHome, 'opencode');
    mkdirSync(opencode, { recursive: true, mode: 0o755 });
    // Present, so opencode never needs to write into the (read-only) folder.
    writeFileSync(join(opencode, '.gitignore'), 'node_modules\npackage.json\nbun.lock\n.gitignore\n', {
      mode: 0o644,
    });
  }
}
