/**
 * The broker's side of a terminated `CONNECT` (issue 27 item 2): TLS with a leaf of the sandbox's CA
 * for the host, then HTTP/1.1 requests served by one parser that never listens. Each request must name
 * the host its tunnel was opened for (`Host`), and goes to that host with the rule in force when it
 * starts, exactly as a gateway route forwards one (`gateway/exchange.ts`: headers injected and
 * redacted, bodies streamed both ways with backpressure, server-sent events byte for byte). A
 * WebSocket (or any) upgrade is forwarded with the same headers, then spliced both ways.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { Agent, Dispatcher } from 'undici';
import type { CheckedRoute } from '../../gateway/configuration.js';
import { CONNECTION_LIMITS } from '../../gateway/connection-limits.js';
import { forward } from '../../gateway/exchange.js';
import type { InjectedValues } from '../../gateway/injected-values.js';
import { buildUpstreamHeaders } from '../../gateway/request-headers.js';
import { filterResponseHeaders } from '../../gateway/response-headers.js';
import { LIMITS } from '../../rules/limits.js';
import type { BrokeredHost } from './brokered-hosts.js';
import type { CertificateAuthority, LeafCredentials } from './certificate-authority.js';
import type { EgressPassage } from './egress-refusal.js';

/** What the terminated tunnels need from the broker. */
export interface BrokeredExchangeDeps {
  readonly ca: CertificateAuthority;
  readonly dispatcher: Agent;
  readonly injected: InjectedValues;
  /** The rules in force now, by host (a refresh replaces them between requests). */
  readonly hosts: () => ReadonlyMap<string, BrokeredHost>;
  readonly passed: (passage: EgressPassage) => void;
}

/** TLS contexts kept, one per host: twice the rules a sandbox may hold at once. */
const MAX_CONTEXTS = 64;

/** A terminated tunnel: the host and port its CONNECT named. */
interface Tunnel {
  readonly host: string;
  readonly port: number;
  /** Requests parsed and not yet answered (pipelining is bounded as the gateway's). */
  pending: number;
}

/** The route a plain `http://` request is forwarded by: no header injected. */
export function plainRoute(target: { readonly host: string; readonly port: number }): CheckedRoute {
  return routeOf(`http://${target.host}:${String(target.port)}`, target, [], new Set());
}

function brokeredRoute(host: BrokeredHost, port: number): CheckedRoute {
  const origin = port === 443 ? `https://${host.host}` : `https://${host.host}:${String(port)}`;
  return routeOf(origin, { host: host.host, port }, host.headers, host.headerKeys);
}

function routeOf(
  origin: string,
  target: { readonly host: string; readonly port: number },
  headers: CheckedRoute['headers'],
  headerKeys: ReadonlySet<string>,
): CheckedRoute {
  return {
    name: target.host,
    upstream: { origin, hostname: target.host, port: target.port },
    headers,
    headerKeys,
    allow: [],
    ratePerMinute: LIMITS.defaultRatePerMinute,
  };
}

/** True when a request's body framing is a length or `chunked` alone (never another coding). */
export function plainFraming(req: IncomingMessage): boolean {
  const encoding = req.headers['transfer-encoding'];
  return encoding === undefined || encoding.toLowerCase() === 'chunked';
}

/** True when a request's `Host` names the tunnel's host (its port, when given, the tunnel's). */
function namesTunnel(host: string | undefined, tunnel: Tunnel): boolean {
  if (host === undefined) return false;
  const lower = host.toLowerCase();
  return lower === tunnel.host || lower === `${tunnel.host}:${String(tunnel.port)}`;
}

/** A short answer on a socket whose request the parser handed over raw (an upgrade). */
function rawAnswer(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
}

/**
 * Sends an upgrade request through `dispatcher` and resolves with the upstream's `101` headers and the
 * upgraded socket; any other answer rejects. (sandboxd's bundle carries undici's `Agent` alone, without
 * the `upgrade` convenience method, so this is its `dispatch` with an upgrade handler.)
 */
function upgradeUpstream(
  dispatcher: Agent,
  options: Dispatcher.DispatchOptions & { readonly origin: string; readonly upgrade: string },
): Promise<{ readonly headers: IncomingHttpHeaders; readonly socket: Duplex }> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(options, {
      // Its presence is what makes undici take this handler for one of its current shape.
      onRequestStart() {
        return undefined;
      },
      onRequestUpgrade(_controller, _statusCode, headers, socket) {
        resolve({ headers, socket });
      },
      onResponseStart(controller, statusCode) {
        reject(new Error(`the upstream answered ${String(statusCode)} to an upgrade`));
        controller.abort(new Error('not upgraded'));
      },
      onResponseError(_controller, error) {
        reject(error);
      },
    });
  });
}

/** The terminated tunnels of one broker. */
export class BrokeredExchanges {
  readonly #deps: BrokeredExchangeDeps;
  readonly #parser: Server;
  readonly #tunnels = new WeakMap<Socket, Tunnel>();
  readonly #contexts = new Map<string, { leaf: LeafCredentials; context: SecureContext }>();

  constructor(deps: BrokeredExchangeDeps) {
    this.#deps = deps;
    this.#parser = createServer({
      headersTimeout: CONNECTION_LIMITS.requestHeadTimeoutMs,
      requestTimeout: 0,
      keepAliveTimeout: 5_000,
    });
    this.#parser.on('request', (req: IncomingMessage, res: ServerResponse) => this.#request(req, res));
    this.#parser.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Always the TLS socket `terminate` handed over (a `Socket`), whatever Node's types say.
      if (socket instanceof Socket) void this.#upgrade(req, socket, head).catch(() => socket.destroy());
      else socket.destroy();
    });
    this.#parser.on('clientError', (_error, socket) => socket.destroy());
  }

  /**
   * Serves TLS for `host` on `socket` (its `CONNECT` answered) and hands the decrypted stream to the
   * parser; `head` holds bytes read past the `CONNECT` head. One `credential` record when it ends.
   */
  terminate(socket: Socket, head: Buffer, host: BrokeredHost, port: number, rule: string): void {
    if (head.length > 0) socket.unshift(head);
    const tls = new TLSSocket(socket, {
      isServer: true,
      secureContext: this.#context(host.host),
      ALPNProtocols: ['http/1.1'],
    });
    tls.on('error', () => socket.destroy());
    socket.once('close', () => {
      tls.destroy();
      const bytes = socket.bytesRead + socket.bytesWritten;
      this.#deps.passed({ via: 'credential', name: host.host, rule, port, bytes });
    });
    this.#tunnels.set(tls, { host: host.host, port, pending: 0 });
    this.#parser.emit('connection', tls);
  }

  /** The host's TLS context, made again when the CA gives the host a new leaf (near its end). */
  #context(host: string): SecureContext {
    const leaf = this.#deps.ca.leaf(host);
    const cached = this.#contexts.get(host);
    if (cached?.leaf === leaf) return cached.context;
    const context = createSecureContext({ cert: leaf.cert, key: leaf.key });
    // Rules change (at most 32 hosts at a time): contexts of hosts gone are not kept for ever.
    if (this.#contexts.size >= MAX_CONTEXTS) this.#contexts.clear();
    this.#contexts.set(host, { leaf, context });
    return context;
  }

  /** The tunnel and the rule a request on it goes by, or why it is refused (answered here). */
  #admit(
    req: IncomingMessage,
    refuse: (status: string) => void,
  ): { readonly tunnel: Tunnel; readonly route: CheckedRoute } | undefined {
    const tunnel = this.#tunnels.get(req.socket);
    const current = tunnel === undefined ? undefined : this.#deps.hosts().get(tunnel.host);
    if (tunnel === undefined || current === undefined) {
      refuse('403 Forbidden'); // the rule was removed since the tunnel opened
      return undefined;
    }
    // As a gateway route: origin-form only, and no body framing but chunked the upstream could read
    // otherwise than this parser did.
    if (!(req.url ?? '').startsWith('/') || !plainFraming(req)) {
      refuse('400 Bad Request');
      return undefined;
    }
    // A request for another host on this tunnel would carry this host's credential elsewhere.
    if (!namesTunnel(req.headers.host, tunnel)) {
      refuse('421 Misdirected Request');
      return undefined;
    }
    return { tunnel, route: brokeredRoute(current, tunnel.port) };
  }

  #request(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const admitted = this.#admit(req, (status) => {
      res.writeHead(Number(status.slice(0, 3)), { 'content-type': 'text/plain', connection: 'close' });
      res.end(`${status}\n`);
    });
    if (admitted === undefined) return;
    const { tunnel, route } = admitted;
    if (++tunnel.pending > CONNECTION_LIMITS.pipelined) {
      socket.destroy();
      return;
    }
    res.once('close', () => (tunnel.pending -= 1));
    forward({ req, res, socket }, route, req.url ?? '/', {
      dispatcher: this.#deps.dispatcher,
      injected: this.#deps.injected,
    });
  }

  async #upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    const admitted = this.#admit(req, (status) => rawAnswer(socket, status));
    if (admitted === undefined) return;
    const { route } = admitted;
    const values = route.headers.map((header) => header.value);
    this.#deps.injected.hold(values);
    socket.once('close', () => this.#deps.injected.release(values));
    let upgraded: { readonly headers: IncomingHttpHeaders; readonly socket: Duplex };
    try {
      upgraded = await upgradeUpstream(this.#deps.dispatcher, {
        origin: route.upstream.origin,
        path: req.url ?? '/',
        method: req.method ?? 'GET',
        headers: buildUpstreamHeaders(req.rawHeaders, route),
        upgrade: req.headers.upgrade ?? 'websocket',
      });
    } catch {
      rawAnswer(socket, '502 Bad Gateway');
      return;
    }
    const upstream = upgraded.socket;
    const kept = filterResponseHeaders(upgraded.headers, route, this.#deps.injected, false);
    const lines = ['HTTP/1.1 101 Switching Protocols', `upgrade: ${req.headers.upgrade ?? 'websocket'}`];
    lines.push('connection: Upgrade');
    for (let i = 0; i < kept.length; i += 2) lines.push(`${kept[i] ?? ''}: ${kept[i + 1] ?? ''}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => socket.destroy());
    socket.pipe(upstream);
    upstream.pipe(socket);
  }
}
