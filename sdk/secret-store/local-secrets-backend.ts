/**
 * The embedded default secret backend: one JSON file readable and writable only by its owner (mode
 * 0600 in a 0700 folder), outside every sandbox template (the namespace driver's templates carry no
 * host home and no /var/lib). Writes replace the file atomically.
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { SandboxError, SecretNotFoundError } from '../../rules/errors.js';
import type { SecretBackend } from './secret-backend.js';

/** The default file: `SDK_SECRET_STORE_FILE`, else `~/.sdk/secrets.json`. */
export function defaultSecretFile(): string {
  return process.env.SDK_SECRET_STORE_FILE ?? join(homedir(), '.sdk', 'secrets.json');
}

/** Secrets in a local file. */
export class LocalSecretsBackend implements SecretBackend {
  readonly #file: string;
  #writing: Promise<unknown> = Promise.resolve();

  constructor(file: string = defaultSecretFile()) {
    this.#file = file;
  }

  async read(name: string): Promise<string> {
    const value = (await this.#load())[name];
    if (value === undefined) throw new SecretNotFoundError(`secret ${name} does not exist`);
    return value;
  }

  create(name: string, value: string): Promise<void> {
    return this.#change((secrets) => {
      if (secrets[name] !== undefined) throw new SandboxError(`secret ${name} already exists; use update`);
      secrets[name] = value;
    });
  }

  update(name: string, value: string): Promise<void> {
    return this.#change((secrets) => {
      if (secrets[name] === undefined) throw new SecretNotFoundError(`secret ${name} does not exist`);
      secrets[name] = value;
    });
  }

  async #load(): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(this.#file, 'utf8')) as Record<string, string>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new SandboxError('the local secret store file cannot be read');
    }
  }

  #change(edit: (secrets: Record<string, string>) => void): Promise<void> {
    const run = this.#writing.then(async () => {
      const secrets = await this.#load();
      edit(secrets);
      await mkdir(dirname(this.#file), { recursive: true, mode: 0o700 });
      const temporary = `${this.#file}.${String(process.pid)}.tmp`;
      await writeFile(temporary, JSON.stringify(secrets), { mode: 0o600 });
      await chmod(temporary, 0o600);
      await rename(temporary, this.#file);
    });
    this.#writing = run.catch(() => undefined);
    return run;
  }
}
