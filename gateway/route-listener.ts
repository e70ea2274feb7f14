/**
 * One route's loopback listener (SPEC "In-sandbox gateway listener"). It serves the route value it was
 * last given, so a refresh reaches the next request on an open keep-alive connection; it handles one
 * request per connection at a time, so a pipelined request is never sent upstream while an earlier one
 * is in flight; and on close it stops accepting, drops idle connections at once, lets at most the
 * in-flight request finish and sends nothing later upstream. A fault while handling one request ends
 * that request only (a 502, or its connection cut), never the process hosting the listener. What sandbox
 * code can make it hold is bounded (`ConnectionLimits`): connections per route and per host, the time a
 * request head may take, and requests read ahead on one connection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { recordText } from '../protocol/daemon-events.js';
import { checkRequestPath } from '../rules/request-path.js';
import { isAllowed } from '../rules/allow-rule.js';
import type { CheckedRoute } from './configuration.js';
import type { ConnectionCount, ConnectionLimits } from './connection-limits.js';
import { forward, type ExchangeDeps } from './exchange.js';
import type { Inbound } from './inbound.js';
import { sendRejection } from './rejection.js';
import type { SandboxLoopback } from './sandbox-loopback.js';
import { TokenBucket, type Clock } from './token-bucket.js';

/** Per-connection state: its socket, the request being handled and those pipelined behind it. */
interface Connection {
  /** Kept from the connection's start: `req.socket` can be null by the time a response closes. */
  readonly socket: Socket;
  busy: boolean;
  current: ServerResponse | undefined;
  readonly queue: Inbound[];
}

/**
 * One request as the sandbox saw it, once its response is over: never a header value, a body or the
 * query.
 */
export interface RouteExchange {
  readonly method: string;
  /** The request target without its query, at most `MAX_RECORD_TEXT` characters (cut ones end in `…`). */
  readonly path: string;
  /** The response's status; 0 when the connection was cut before a response head was sent. */
  readonly status: number;
  /** From the start of the request's handling to the end of its response. */
  readonly latencyMs: number;
  /** Bytes of the response (head and body) written to the sandbox's socket. */
  readonly bytes: number;
}

/** What a listener needs from its host. */
export interface RouteListenerDeps extends ExchangeDeps {
  readonly now: Clock;
  /** Called for every request the listener receives (sandbox activity for the idle policy). */
  readonly onTraffic: (method: string) => void;
  /** Called once per request it handled, rejected ones included, when the response is over. */
  readonly onExchange: (exchange: RouteExchange) => void;
  readonly limits: ConnectionLimits;
  /** The host's open connections over all its routes (`limits.perHost`). */
  readonly connections: ConnectionCount;
  /** Called for every connection closed at once because a cap was reached. */
  readonly onRefused: () => void;
  /** The sandbox's loopback when it is not sandboxd's own (a gVisor box's). */
  readonly loopback?: SandboxLoopback | undefined;
  /** The port to bind when it is free (a snapshot's copy keeps its routes' ports); OS-chosen otherwise. */
  readonly port?: number;
}

/** Ports tried before a listener gives up when sandbox code holds each one on its own loopback. */
const LOOPBACK_ATTEMPTS = 8;

/** A route's listener on `127.0.0.1`, on an OS-chosen port (or one asked for, when free). */
export class RouteListener {
  readonly #server: Server;
  readonly #deps: RouteListenerDeps;
  readonly #connections = new Map<Socket, Connection>();
  #route: CheckedRoute | undefined;
  #bucket: TokenBucket | undefined;
  #closing = false;
  #closed: Promise<void> | undefined;

  private constructor(deps: RouteListenerDeps) {
    this.#deps = deps;
    const { limits } = deps;
    this.#server = createServer(
      {
        requestTimeout: 0, // uploads have no size cap, so no overall deadline either
        // A head not complete in time (a silent or a dribbling client) is answered 408 and closed.
        headersTimeout: limits.requestHeadTimeoutMs,
        connectionsCheckingInterval: limits.checkIntervalMs,
        keepAliveTimeout: 5_000,
        noDelay: true,
      },
      (req, res) => this.#onRequest(req, res),
    );
    // Past the route's cap Node closes a new connection's handle before anything reads it ('drop').
    this.#server.maxConnections = limits.perRoute;
    this.#server.on('drop', () => this.#refused());
    this.#server.on('connection', (socket: Socket) => {
      if (!deps.connections.take()) {
        socket.destroy();
        this.#refused();
        return;
      }
      this.#connections.set(socket, { socket, busy: false, current: undefined, queue: [] });
      socket.once('close', () => {
        const connection = this.#connections.get(socket);
        if (connection !== undefined) this.#dropQueue(connection);
        this.#connections.delete(socket);
        deps.connections.release();
      });
    });
  }

  /**
   * Binds a new listener on the sandbox's loopback (an OS-chosen port); it answers nothing until
   * `serve` gives it a route; `deps.port` first, when given and free. With a `loopback` of the
   * sandbox's own, a port sandbox code already holds there is given up for another.
   */
  static async bind(deps: RouteListenerDeps): Promise<RouteListener> {
    const { loopback } = deps;
    for (let attempt = 1; ; attempt++) {
      const wanted = attempt === 1 ? (deps.port ?? 0) : 0;
      const listener = new RouteListener(deps);
      try {
        await new Promise<void>((resolve, reject) => {
          listener.#server.once('error', reject);
          listener.#server.listen(wanted, loopback?.address ?? '127.0.0.1', () => {
            listener.#server.off('error', reject);
            resolve();
          });
        });
      } catch (error) {
        if (wanted === 0) throw error;
        continue; // taken (or not ours to bind): any other
      }
      if (loopback === undefined) return listener;
      try {
        await loopback.open(listener.port);
        return listener;
      } catch (error) {
        await listener.close(true);
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === LOOPBACK_ATTEMPTS)
          throw error;
      }
    }
  }

  /** The bound port. */
  get port(): number {
    const address = this.#server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  /** Serves `route` from the next request on (also on open connections). */
  serve(route: CheckedRoute): void {
    this.#route = route;
    if (this.#bucket === undefined) this.#bucket = new TokenBucket(route.ratePerMinute, this.#deps.now);
    else this.#bucket.setRate(route.ratePerMinute);
  }

  /**
   * Stops accepting and closes idle connections now; a request in flight finishes, then its
   * connection closes. With `force` (the host is going away) every connection is cut at once.
   * Resolves when every connection is gone.
   */
  close(force = false): Promise<void> {
    if (!this.#closing) this.#deps.loopback?.close(this.port);
    this.#closing = true;
    this.#closed ??= new Promise((resolve) => this.#server.close(() => resolve()));
    for (const [socket, connection] of this.#connections) {
      if (force || !connection.busy) socket.destroy();
      // The in-flight response announces the close when its headers are not out yet.
      else if (connection.current?.headersSent === false) connection.current.shouldKeepAlive = false;
      // Pipelined requests behind the in-flight one are never answered: the connection ends after it.
      this.#dropQueue(connection);
    }
    return this.#closed;
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    // Read while the request is new: nothing has handed it to undici yet.
    const socket = req.socket;
    const connection = this.#connections.get(socket);
    if (this.#closing || connection === undefined) {
      socket.destroy();
      return;
    }
    if (socket.destroyed) return;
    const inbound: Inbound = { req, res, socket };
    if (!connection.busy) {
      this.#start(connection, inbound);
    } else if (
      connection.queue.length >= this.#deps.limits.pipelined ||
      !this.#deps.connections.takeQueued()
    ) {
      // Node parses every pipelined request it reads: past the caps the connection is cut, and its
      // queued requests are never served.
      this.#dropQueue(connection);
      socket.destroy();
    } else {
      connection.queue.push(inbound);
    }
  }

  /** Forgets the requests waiting on `connection`: none of them is served. */
  #dropQueue(connection: Connection): void {
    this.#deps.connections.releaseQueued(connection.queue.length);
    connection.queue.length = 0;
  }

  #refused(): void {
    try {
      this.#deps.onRefused();
    } catch {
      // a failing observer never touches the listener
    }
  }

  #start(connection: Connection, inbound: Inbound): void {
    const { req, res } = inbound;
    const { socket } = connection;
    connection.busy = true;
    connection.current = res;
    // Requests on one connection are serialized here, so what the socket wrote from now until this
    // response closes is this response.
    const startedAt = performance.now();
    const written = socket.bytesWritten;
    const method = req.method ?? '';
    const path = recordPath(req.url ?? '');
    res.once('close', () => {
      const bytes = socket.bytesWritten - written; // NaN (no write state left) counts as 0
      const exchange = {
        method,
        path,
        status: res.headersSent ? res.statusCode : 0,
        latencyMs: Math.max(0, Math.round((performance.now() - startedAt) * 1000) / 1000),
        bytes: bytes > 0 ? bytes : 0,
      };
      try {
        this.#deps.onExchange(exchange);
      } catch {
        // a failing observer never touches the connection
      }
      try {
        this.#finish(connection, res);
      } catch {
        connection.socket.destroy(); // this connection only; the listener keeps serving
      }
    });
    try {
      this.#handle(inbound);
    } catch {
      failRequest(inbound);
    }
  }

  /** After a response: end the connection, or serve the next pipelined request. */
  #finish(connection: Connection, res: ServerResponse): void {
    connection.busy = false;
    connection.current = undefined;
    // A closing route, or a response that ended its connection: nothing queued behind it is served.
    if (this.#closing || !res.shouldKeepAlive) {
      this.#dropQueue(connection);
      const { socket } = connection;
      socket.end();
      setTimeout(() => socket.destroy(), 1_000).unref();
      return;
    }
    const next = connection.queue.shift();
    if (next !== undefined) {
      this.#deps.connections.releaseQueued(1);
      this.#start(connection, next);
    }
  }

  #handle(inbound: Inbound): void {
    const { req } = inbound;
    this.#deps.onTraffic(req.method ?? '');
    const route = this.#route;
    const bucket = this.#bucket;
    const target = req.url ?? '';
    if (route === undefined || bucket === undefined) {
      inbound.socket.destroy();
      return;
    }
    const encoding = req.headers['transfer-encoding'];
    if (target.charCodeAt(0) !== 47 || (encoding !== undefined && encoding.toLowerCase() !== 'chunked')) {
      sendRejection(inbound, 'bad_request');
      return;
    }
    const query = target.indexOf('?');
    const path = query < 0 ? target : target.slice(0, query);
    if (!checkRequestPath(path).ok) {
      sendRejection(inbound, 'path_forbidden');
    } else if (!isAllowed(route.allow, req.method ?? '', path)) {
      sendRejection(inbound, 'not_allowed');
    } else if (!bucket.take()) {
      sendRejection(inbound, 'rate_limited', bucket.msUntilNextToken());
    } else {
      forward(inbound, route, target, this.#deps);
    }
  }
}

/**
 * The target's path for a record: without its query, cut to `MAX_RECORD_TEXT` characters. A target not
 * in origin-form is never forwarded and may carry credentials (`http://user:pass@host/`): left out.
 */
function recordPath(target: string): string {
  if (target.charCodeAt(0) !== 47) return '';
  const query = target.indexOf('?');
  const path = query < 0 ? target : target.slice(0, query);
  // Node reads a target as latin1: one character per byte, so no cut splits a character.
  return recordText(path);
}

/** A request whose handling threw: 502 when nothing is out yet, else its connection is cut. */
function failRequest(inbound: Inbound): void {
  try {
    sendRejection(inbound, 'upstream_error');
  } catch {
    inbound.socket.destroy();
  }
}
