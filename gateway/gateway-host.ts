/**
 * The gateway host: the routes of one sandbox, applied a whole configuration at a time (SPEC "Gateway
 * route" table). Each route is an actor of the gateway-route machine whose effects drive a
 * `RouteListener`; every route shares one upstream dispatcher and one set of values to redact.
 */
import { performance } from 'node:perf_hooks';
import { Subject, type Observable } from 'rxjs';
import { LIMITS } from '../rules/limits.js';
import { gatewayRouteMachine } from '../machines/gateway-route-machine.js';
import type { ActorSystem } from '../actors/actor-system.js';
import { HostedActor } from '../actors/hosted-actor.js';
import { checkConfiguration, type CheckedRoute } from './configuration.js';
import { configurationFailure, type ConfigurationFailure } from './configuration-failure.js';
import {
  CONNECTION_LIMIT_ERROR,
  CONNECTION_LIMITS,
  ConnectionCount,
  type ConnectionLimits,
} from './connection-limits.js';
import { InjectedValues } from './injected-values.js';
import type { SandboxLoopback } from './sandbox-loopback.js';
import { RouteListener, type RouteExchange } from './route-listener.js';
import type { SafeConnectorOptions } from './safe-connector.js';
import type { Clock } from './token-bucket.js';
import { createUpstreamDispatcher } from './upstream-dispatcher.js';

/** Options of a gateway host; every time-out defaults to the spec's value. */
export interface GatewayHostOptions extends Partial<Pick<SafeConnectorOptions, 'connectTimeoutMs'>> {
  /** Wait for upstream response headers; SPEC: 600 s. */
  readonly headersTimeoutMs?: number;
  /** Metadata addresses refused beside the defaults. */
  readonly metadataAddresses?: readonly string[];
  /** Trust roots replacing the system's. */
  readonly ca?: SafeConnectorOptions['ca'];
  /** Resolver with the shape of `dns.lookup`. */
  readonly lookup?: SafeConnectorOptions['lookup'];
  /** Clock of the token buckets, in milliseconds. */
  readonly now?: Clock;
  /** Where the route actors report their transitions (sandboxd streams them to the control plane). */
  readonly system?: ActorSystem;
  /** Bounds on client connections; each defaults to `CONNECTION_LIMITS`. */
  readonly connectionLimits?: Partial<ConnectionLimits>;
  /** The sandbox's loopback when it is not sandboxd's own (a gVisor box's, `sandbox-loopback.ts`). */
  readonly loopback?: SandboxLoopback;
  /**
   * Ports routes had in the sandbox a snapshot was taken of (`protocol/snapshot-carry.ts`): a route of
   * that name binds its old port when it is free, an OS-chosen one otherwise.
   */
  readonly preferredPorts?: Readonly<Record<string, number>>;
}

/** A route reports refused connections (`ConnectionLimitError`) at most this often. */
export const REFUSAL_REPORT_INTERVAL_MS = 10_000;

/** SPEC "GatewayStatus" of one route. */
export interface GatewayRouteStatus {
  readonly port: number;
  readonly url: string;
  readonly lastErrorClass: string | undefined;
}

/** What `apply` did. */
export type ApplyOutcome =
  | { readonly ok: true; readonly status: ReadonlyMap<string, GatewayRouteStatus> }
  | { readonly ok: false; readonly failure: ConfigurationFailure };

/**
 * Route lifecycle events and, per request a route received, one audit record when it starts (its method
 * only) and one when its response is over (`RouteExchange`: method, path without the query, status,
 * latency, bytes), for the daemon's event stream. Never a header value, a body or a query.
 */
export type GatewayHostEvent =
  | { readonly type: 'request'; readonly route: string; readonly method: string }
  | ({ readonly type: 'response'; readonly route: string } & RouteExchange)
  | { readonly type: 'route_opened'; readonly route: string; readonly port: number }
  | { readonly type: 'route_closed'; readonly route: string }
  /**
   * A refused configuration (its failure class), or connections the route closed at once at a cap
   * (`ConnectionLimitError`, at most once per `REFUSAL_REPORT_INTERVAL_MS` per route).
   */
  | { readonly type: 'route_failed'; readonly route: string; readonly errorClass: string };

/** The effects the gateway route machine names. */
type RouteEffect = 'openListener' | 'swapValues' | 'closeListener';

interface RouteEntry {
  readonly listener: RouteListener;
  readonly actor: HostedActor<typeof gatewayRouteMachine, RouteEffect>;
  /** The route's effects, bound to its listener. */
  readonly effects: Readonly<Record<RouteEffect, () => void>>;
  /** The route the next `openListener`/`swapValues` serves. */
  readonly target: { next: CheckedRoute };
}

/**
 * Hosts a sandbox's gateway routes.
 *
 * @example
 * ```ts
 * const host = new GatewayHost();
 * const outcome = await host.apply({
 *   llm: { upstream: 'https://api.example', headers: { 'x-api-key': key }, allow: [['POST', '/v1/*']] },
 * });
 * if (outcome.ok) console.log(host.status().get('llm')?.url); // http://127.0.0.1:<port>
 * ```
 */
export class GatewayHost {
  readonly #routes = new Map<string, RouteEntry>();
  /** Listeners of removed routes still finishing a request in flight. */
  readonly #draining = new Set<RouteListener>();
  readonly #injected = new InjectedValues();
  readonly #dispatcher;
  readonly #now: Clock;
  readonly #system: ActorSystem | undefined;
  readonly #events = new Subject<GatewayHostEvent>();
  readonly #limits: ConnectionLimits;
  readonly #preferredPorts: Readonly<Record<string, number>>;
  readonly #loopback: SandboxLoopback | undefined;
  readonly #connections: ConnectionCount;
  /** When each route last reported refused connections. */
  readonly #refusalReported = new Map<string, number>();
  #version = 0;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** Route lifecycle events, requests and responses (`GatewayHostEvent`). */
  readonly events$: Observable<GatewayHostEvent> = this.#events.asObservable();

  constructor(options: GatewayHostOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#system = options.system;
    this.#limits = { ...CONNECTION_LIMITS, ...options.connectionLimits };
    this.#loopback = options.loopback;
    this.#preferredPorts = options.preferredPorts ?? {};
    this.#connections = new ConnectionCount(this.#limits);
    this.#dispatcher = createUpstreamDispatcher({
      connectTimeoutMs: options.connectTimeoutMs ?? LIMITS.upstreamConnectTimeoutMs,
      headersTimeoutMs: options.headersTimeoutMs ?? LIMITS.upstreamHeadersTimeoutMs,
      ...(options.metadataAddresses === undefined ? {} : { metadataAddresses: options.metadataAddresses }),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    });
  }

  /**
   * Applies a whole configuration, or none of it: on a refusal the previous configuration stays in force
   * and every open route records the failure class. Calls are serialized.
   */
  apply(configuration: unknown): Promise<ApplyOutcome> {
    const run = this.#queue.then(() => this.#apply(configuration));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Per open route: port, url and the class of the last refused configuration. */
  status(): ReadonlyMap<string, GatewayRouteStatus> {
    const status = new Map<string, GatewayRouteStatus>();
    for (const [name, entry] of this.#routes) {
      const { port, lastErrorClass } = entry.actor.snapshot.context;
      if (port === undefined) continue;
      status.set(name, { port, url: `http://127.0.0.1:${String(port)}`, lastErrorClass });
    }
    return status;
  }

  /** Closes every route, cutting requests in flight, and the upstream dispatcher. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue;
    const listeners = [...this.#draining, ...[...this.#routes.values()].map((entry) => entry.listener)];
    const closing = listeners.map((listener) => listener.close(true));
    for (const entry of this.#routes.values()) entry.actor.stop();
    this.#routes.clear();
    await Promise.all(closing);
    await this.#dispatcher.destroy();
    this.#events.complete();
  }

  async #apply(configuration: unknown): Promise<ApplyOutcome> {
    if (this.#closed)
      return this.#refuse(configurationFailure('ListenerError', 'the gateway host is closed'));
    const verdict = checkConfiguration(configuration);
    if (!verdict.ok) return this.#refuse(verdict.failure);
    const added = [...verdict.routes.keys()].filter((name) => !this.#routes.has(name));
    const bound = await Promise.allSettled(added.map((name) => this.#bind(name)));
    const listeners = bound.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    if (listeners.length < added.length) {
      await Promise.all(listeners.map((listener) => listener.close()));
      return this.#refuse(configurationFailure('ListenerError', 'could not bind a loopback listener'));
    }
    // Commit: nothing below can fail.
    const version = ++this.#version;
    for (const route of verdict.routes.values()) this.#injected.hold(route.headers.map((h) => h.value));
    for (const [name, entry] of this.#routes) {
      const next = verdict.routes.get(name);
      this.#injected.release(entry.target.next.headers.map((h) => h.value));
      if (next !== undefined) entry.target.next = next;
      entry.actor.sendNow({ type: 'configure', version, included: next !== undefined }, entry.effects);
      if (next === undefined) {
        this.#routes.delete(name);
        this.#refusalReported.delete(name);
        entry.actor.stop();
      }
    }
    added.forEach((name, i) => {
      const route = verdict.routes.get(name);
      const listener = listeners[i];
      if (route === undefined || listener === undefined) return;
      const entry = this.#startRoute(name, route, listener);
      entry.actor.sendNow({ type: 'configure', version, included: true }, entry.effects);
      entry.actor.sendNow({ type: 'listening', port: listener.port }, entry.effects);
      this.#events.next({ type: 'route_opened', route: name, port: listener.port });
    });
    return { ok: true, status: this.status() };
  }

  #bind(route: string): Promise<RouteListener> {
    return RouteListener.bind({
      dispatcher: this.#dispatcher,
      injected: this.#injected,
      now: this.#now,
      onTraffic: (method) => this.#events.next({ type: 'request', route, method }),
      onExchange: (exchange) => this.#events.next({ type: 'response', route, ...exchange }),
      limits: this.#limits,
      connections: this.#connections,
      onRefused: () => this.#refusedConnection(route),
      loopback: this.#loopback,
      ...(Object.hasOwn(this.#preferredPorts, route) ? { port: this.#preferredPorts[route] } : {}),
    });
  }

  /** A connection `route` closed at a cap: reported, at most once per interval per route. */
  #refusedConnection(route: string): void {
    const now = this.#now();
    const last = this.#refusalReported.get(route);
    if (this.#closed || (last !== undefined && now - last < REFUSAL_REPORT_INTERVAL_MS)) return;
    this.#refusalReported.set(route, now);
    this.#events.next({ type: 'route_failed', route, errorClass: CONNECTION_LIMIT_ERROR });
  }

  #startRoute(name: string, route: CheckedRoute, listener: RouteListener): RouteEntry {
    const target = { next: route };
    const effects = {
      openListener: () => listener.serve(target.next),
      swapValues: () => listener.serve(target.next),
      closeListener: () => {
        this.#draining.add(listener);
        void listener.close().then(() => this.#draining.delete(listener));
        this.#events.next({ type: 'route_closed', route: name });
      },
    };
    const actor = new HostedActor(gatewayRouteMachine, {
      id: name,
      kind: 'gateway_route',
      effects: ['openListener', 'swapValues', 'closeListener'],
      system: this.#system,
    });
    const entry = { listener, actor, target, effects };
    this.#routes.set(name, entry);
    return entry;
  }

  #refuse(failure: ConfigurationFailure): ApplyOutcome {
    for (const [name, entry] of this.#routes) {
      entry.actor.sendNow({ type: 'configure_rejected', errorClass: failure.errorClass }, entry.effects);
      this.#events.next({ type: 'route_failed', route: name, errorClass: failure.errorClass });
    }
    return { ok: false, failure };
  }
}
