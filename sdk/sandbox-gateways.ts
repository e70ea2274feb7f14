/**
 * `sbx.gateways` (SPEC "GatewayStatus", "SDK operations"): the routes of a sandbox by name. On the
 * handle that created the sandbox it holds the definitions: `refresh()` drops their secrets from the
 * cache, reads them again and sends a new configuration (ConfigureSandbox). On a connected handle it
 * holds state only (ConfigureStatus): `refresh()` reads that state again, and no definition is ever
 * recovered from the sandbox.
 */
import { z } from 'zod';
import { SandboxError } from '../rules/errors.js';
import { gatewayStateSchema, type GatewayState } from '../protocol/gateway-wire.js';
import { GATEWAY_MIN_VERSION, meetsVersion } from '../protocol/versions.js';
import type { DaemonClient } from './daemon-client.js';
import type { SecretGateway } from './secret-gateway.js';
import type { SecretCache } from './secret-store/secret-cache.js';

/** SPEC "GatewayStatus". */
export interface GatewayStatus {
  /** OS-chosen loopback port in the sandbox, kept across refreshes. */
  readonly port: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Class of the last refused configuration, or undefined. */
  readonly lastErrorClass: string | undefined;
}

const versionSchema = z.object({ version: z.string() });

/** The gateway routes of one sandbox handle. */
export class SandboxGateways {
  readonly #client: DaemonClient;
  readonly #definitions: Readonly<Record<string, SecretGateway>>;
  readonly #cache: SecretCache | undefined;
  #status = new Map<string, GatewayStatus>();

  /** @internal */
  constructor(
    client: DaemonClient,
    definitions: Readonly<Record<string, SecretGateway>>,
    cache?: SecretCache,
  ) {
    this.#client = client;
    this.#definitions = definitions;
    this.#cache = cache;
  }

  /** The status of route `name`. */
  get(name: string): GatewayStatus | undefined {
    return this.#status.get(name);
  }

  /** Every route with its status. */
  entries(): IterableIterator<[string, GatewayStatus]> {
    return this.#status.entries();
  }

  /** Route names. */
  keys(): IterableIterator<string> {
    return this.#status.keys();
  }

  /** @internal Names of the routes this handle defines (empty on a connected handle). */
  definitionNames(): readonly string[] {
    return Object.keys(this.#definitions);
  }

  /**
   * @internal The definition of route `name` (its preset binding included), on the creating handle
   * only: a connected handle never recovers definitions.
   */
  definition(name: string): SecretGateway | undefined {
    return Object.hasOwn(this.#definitions, name) ? this.#definitions[name] : undefined;
  }

  /** Number of routes. */
  get size(): number {
    return this.#status.size;
  }

  [Symbol.iterator](): IterableIterator<[string, GatewayStatus]> {
    return this.entries();
  }

  /**
   * Creating handle: re-reads every route's secrets (even if cached) and reconfigures; on a refusal the
   * previous configuration stays in force and the same exception as create is raised. Connected
   * handle: reads the state again. Without gateways: nothing.
   */
  async refresh(): Promise<void> {
    if (Object.keys(this.#definitions).length === 0) {
      if (this.#cache === undefined) await this.readState();
      return;
    }
    this.#cache?.invalidate(Object.values(this.#definitions).flatMap((g) => Object.values(g.headers)));
    await this.configure();
  }

  /** @internal ConfigureStatus. */
  async readState(): Promise<void> {
    this.#adopt(await this.#client.call('GET', '/v1/gateways', gatewayStateSchema));
  }

  /** @internal Checks the daemon's version, resolves the secrets and sends ConfigureSandbox. */
  async configure(): Promise<void> {
    const cache = this.#cache;
    if (cache === undefined) throw new SandboxError('this handle holds no gateway definitions');
    const { version } = await this.#client.call('GET', '/v1/version', versionSchema);
    if (!meetsVersion(version, GATEWAY_MIN_VERSION)) {
      throw new SandboxError(
        `UnimplementedError: sandbox image ${version} predates gateways (${GATEWAY_MIN_VERSION})`,
        {
          code: 'unimplemented',
          failureClass: 'UnimplementedError',
        },
      );
    }
    const routes: Record<string, unknown> = {};
    for (const [name, gateway] of Object.entries(this.#definitions)) {
      const headers: Record<string, string> = {};
      // Resolved just before the call, held only for it.
      for (const [header, source] of Object.entries(gateway.headers))
        headers[header] = await cache.get(source);
      routes[name] = {
        upstream: gateway.upstream,
        headers,
        allow: gateway.allow,
        ratePerMinute: gateway.ratePerMinute,
      };
    }
    this.#adopt(await this.#client.call('POST', '/v1/gateways', gatewayStateSchema, { routes }));
  }

  #adopt(state: GatewayState): void {
    this.#status = new Map(
      Object.entries(state.routes).map(([name, s]) => [
        name,
        Object.freeze({ port: s.port, url: s.url, lastErrorClass: s.lastErrorClass ?? undefined }),
      ]),
    );
  }
}
