/**
 * Agent requests written by `PUT /v1/agent/config` (`protocol/agent-request.ts`), kept by hash so an
 * execution names the one it runs with and an unchanged request is never sent twice; each with its
 * runtime's driver, which turns it into a run's configuration when the run starts (with the gateways'
 * listeners of that moment). Configuration files go to a root-owned folder the agent can read but not
 * change, beside a read-only config home holding the runtime's own files. Nothing here holds a
 * credential: the gateway injects it.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { agentRequestHash } from '../protocol/agent-request-hash.js';
import { agentRequestSchema } from '../protocol/agent-request.js';
import { AGENT_CONFIG_DIR, AGENT_CONFIG_HOME, type AgentConfigWrite } from '../protocol/agent-wire.js';
import { runtimeDriver } from '../runtime-drivers/registry.js';
import {
  RuntimeConfigError,
  type RunFacts,
  type RunPlan,
  type RuntimeDriver,
  type RuntimeRequest,
} from '../runtime-drivers/runtime-driver.js';
import { RequestError } from './request-error.js';

/** Requests kept; the oldest is forgotten beyond this. */
const KEPT = 16;

/** A request sandboxd holds, with its runtime. */
export interface StoredConfig {
  readonly runtime: string;
  readonly hash: string;
  readonly request: RuntimeRequest;
  readonly driver: RuntimeDriver;
}

/** Where the agents folder is and where configurations go. */
export interface AgentConfigsOptions {
  /** The template's agents folder. */
  readonly agentsDir: string;
  /** Each gateway route's loopback listener now, by name. */
  readonly listeners: () => Readonly<Record<string, string>>;
  readonly dir?: string;
  readonly configHome?: string;
}

/** Each gateway route's loopback listener, by name, as `GatewayHost.status()` reports them. */
export function listenersOf(gateways: {
  status(): ReadonlyMap<string, { readonly port: number }>;
}): Record<string, string> {
  return Object.fromEntries(
    [...gateways.status()].map(([name, { port }]) => [name, `http://127.0.0.1:${String(port)}`]),
  );
}

function invalid(error: RuntimeConfigError): RequestError {
  return new RequestError('invalid_argument', error.message, undefined, { field: error.field });
}

/** The requests of one sandbox. */
export class AgentConfigs {
  readonly #byHash = new Map<string, StoredConfig>();
  readonly #dir: string;
  readonly #configHome: string;

  constructor(private readonly options: AgentConfigsOptions) {
    this.#dir = options.dir ?? AGENT_CONFIG_DIR;
    this.#configHome = options.configHome ?? AGENT_CONFIG_HOME;
  }

  /**
   * Checks the request with its runtime's driver and keeps it under its hash.
   *
   * @throws RequestError `invalid_argument` when the hash is not the text's own, the runtime is unknown,
   *   or the request is malformed or not one the runtime can run
   */
  async write(write: AgentConfigWrite): Promise<StoredConfig> {
    if (agentRequestHash(write.runtime, write.text) !== write.hash) {
      throw new RequestError('invalid_argument', 'hash: is not the hash of this request', undefined, {
        field: 'hash',
      });
    }
    const driver = await runtimeDriver(write.runtime);
    if (driver === undefined) {
      throw new RequestError(
        'invalid_argument',
        `runtime: this sandbox has no runtime ${write.runtime}`,
        undefined,
        {
          field: 'runtime',
        },
      );
    }
    const request = parseRequest(write.text, driver);
    const stored = { runtime: write.runtime, hash: write.hash, request, driver };
    this.#byHash.delete(write.hash);
    this.#byHash.set(write.hash, stored);
    if (this.#byHash.size > KEPT) this.#byHash.delete(this.#byHash.keys().next().value ?? '');
    return stored;
  }

  /** The request with this hash, if written. */
  get(hash: string): StoredConfig | undefined {
    return this.#byHash.get(hash);
  }

  /**
   * The plan of one run of `config`, its configuration files written (0644, root's).
   *
   * @throws RequestError `invalid_argument` when a gateway the spec names has no route now
   */
  plan(config: StoredConfig, run: RunFacts): RunPlan {
    const site = this.site;
    this.#prepareHome(config.driver);
    let plan: RunPlan;
    try {
      plan = config.driver.plan(config.request, this.options.listeners(), run, site);
    } catch (error) {
      if (error instanceof RuntimeConfigError) throw invalid(error);
      throw error;
    }
    for (const file of plan.configFiles) {
      // Only a file directly in the folder: the name is joined, never resolved.
      const path = join(this.#dir, basename(file.path));
      writeFileSync(path, file.content, { mode: 0o644 });
      chmodSync(path, 0o644);
    }
    return plan;
  }

  /** Where things are (the folders made once). */
  get site(): { agentsDir: string; configDir: string; configHome: string } {
    this.#prepare();
    return { agentsDir: this.options.agentsDir, configDir: this.#dir, configHome: this.#configHome };
  }

  #prepared = false;
  readonly #homesPrepared = new Set<string>();

  #prepare(): void {
    if (this.#prepared) return;
    for (const dir of [this.#dir, this.#configHome]) {
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      chmodSync(dir, 0o755);
    }
    this.#prepared = true;
  }

  /** The runtime's files in the config home, written once (the driver's own, never a request's). */
  #prepareHome(driver: RuntimeDriver): void {
    if (this.#homesPrepared.has(driver.name)) return;
    for (const file of driver.homeFiles ?? []) {
      const path = join(this.#configHome, file.path);
      mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
      writeFileSync(path, file.content, { mode: 0o644 });
    }
    this.#homesPrepared.add(driver.name);
  }
}

/**
 * The request in `text`, checked against the wire's schema, its runtime's options and the runtime's rules.
 *
 * @throws RequestError `invalid_argument` naming the first offending field
 */
function parseRequest(text: string, driver: RuntimeDriver): RuntimeRequest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RequestError('invalid_argument', 'text: is not JSON', undefined, { field: 'text' });
  }
  const parsed = agentRequestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = ['request', ...(issue?.path ?? [])].map(String).join('.');
    throw new RequestError('invalid_argument', `${field}: ${issue?.message ?? 'is malformed'}`, undefined, {
      field,
    });
  }
  const options = driver.options.safeParse(parsed.data.options);
  if (!options.success) {
    const field = ['options', ...(options.error.issues[0]?.path ?? [])].map(String).join('.');
    throw new RequestError('invalid_argument', `${field}: is not an option of ${driver.name}`, undefined, {
      field,
    });
  }
  try {
    driver.check(parsed.data.spec);
  } catch (error) {
    if (error instanceof RuntimeConfigError) throw invalid(error);
    throw error;
  }
  return { spec: parsed.data.spec, options: options.data };
}
