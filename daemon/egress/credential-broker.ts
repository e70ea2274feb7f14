/**
 * The credential broker (issue 27 item 2): an HTTP proxy on the sandbox's loopback that every command
 * reaches through `HTTPS_PROXY`/`HTTP_PROXY` (`environment()`), under the sandbox's egress policy.
 *
 * - `CONNECT` to a host with a credential rule is answered, then terminated with a certificate of the
 *   sandbox's own CA (`certificate-authority.ts`; its key in this process's memory only), and each
 *   request on it is forwarded to that host as a gateway route forwards one (`gateway/exchange.ts`):
 *   the rule's headers injected, incoming ones of those names dropped, response headers and trailers
 *   carrying a value redacted, bodies streamed both ways as they come (`brokered-exchange.ts`).
 * - `CONNECT` to any other allowed name is tunnelled untouched to that name's own addresses, once its
 *   TLS ClientHello names the same host (a tunnel opened for one name never carries another).
 * - `CONNECT` to an allowed IPv4 address is tunnelled as the network would carry it.
 * - An absolute-form `http://` request is forwarded without any credential (none travels in clear).
 *
 * Nothing here trusts politeness: sandbox code that ignores the proxy meets the same policy in the
 * network (the driver's tables and the name checks). What the proxy refuses gets a 403 naming the rule
 * and an `egress` record (`via: 'proxy'`); brokered connections are recorded `via: 'credential'`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Socket } from 'node:net';
import type { Agent } from 'undici';
import { classifyAddress } from '../../rules/address-rules.js';
import { ConnectionCount, CONNECTION_LIMITS } from '../../gateway/connection-limits.js';
import { forward } from '../../gateway/exchange.js';
import { InjectedValues } from '../../gateway/injected-values.js';
import type { SandboxLoopback } from '../../gateway/sandbox-loopback.js';
import { createUpstreamDispatcher } from '../../gateway/upstream-dispatcher.js';
import {
  BROKER_PORT,
  type CredentialState,
  type credentialRuleWire,
} from '../../protocol/credentials-wire.js';
import {
  decideAddress,
  decideName,
  type EgressDecision,
  type EgressPolicy,
} from '../../rules/egress-policy.js';
import { LIMITS } from '../../rules/limits.js';
import type { z } from 'zod';
import { RequestError } from '../request-error.js';
import { BrokeredExchanges, plainFraming, plainRoute } from './brokered-exchange.js';
import { checkCredentialRules, type BrokeredHost } from './brokered-hosts.js';
import { CertificateAuthority } from './certificate-authority.js';
import { readClientHello, tlsAlert, TLS_ALERT } from './client-hello.js';
import type { EgressPassage, EgressRefusal } from './egress-refusal.js';
import { absoluteTarget, connectTarget, type ProxyTarget } from './proxy-target.js';
import { spliceTo } from './splice.js';
import { TRUST_ENVIRONMENT } from './trust-store.js';
import type { UpstreamNames } from './upstream-names.js';

/** Where the broker reports its decisions. */
export interface BrokerEvents {
  refused(refusal: EgressRefusal): void;
  passed(passage: EgressPassage): void;
}

/** What the broker is built with. */
export interface CredentialBrokerDeps {
  /** The egress filter's lookups: a name's own usable addresses under the policy. */
  readonly names: UpstreamNames;
  readonly policy: () => EgressPolicy;
  readonly events: BrokerEvents;
  /** The sandbox's own addresses, refused like loopback. */
  readonly own: readonly string[];
  /** Trust roots for the upstreams, replacing the system's (a private CA); the gateway's. */
  readonly upstreamCa?: string;
  readonly connectTimeoutMs?: number;
  readonly headersTimeoutMs?: number;
  /** A gVisor box's loopback; sandboxd's own otherwise. */
  readonly loopback?: SandboxLoopback;
  /** Puts the CA certificate into the sandbox's trust store (`trust-store.ts`). */
  readonly installCa: (certificatePem: string) => Promise<void>;
  /** Names the CA (the sandbox). */
  readonly label: string;
}

/** Hosts sandbox code reaches without the proxy: its own loopback (gateway routes among it). */
const NO_PROXY = 'localhost,127.0.0.1,::1';
/** How long a tunnel may take to send its ClientHello. */
const HELLO_TIMEOUT_MS = 10_000;
/** Attempts at a loopback port sandbox code does not hold. */
const LISTEN_ATTEMPTS = 3;

/** The broker of one sandboxd. */
export class CredentialBroker {
  readonly #deps: CredentialBrokerDeps;
  readonly #injected = new InjectedValues();
  readonly #connections = new ConnectionCount(CONNECTION_LIMITS);
  readonly #sockets = new Set<Socket>();
  #hosts: ReadonlyMap<string, BrokeredHost> = new Map();
  #ca: CertificateAuthority | undefined;
  #server: Server | undefined;
  #dispatcher: Agent | undefined;
  #exchanges: BrokeredExchanges | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(deps: CredentialBrokerDeps) {
    this.#deps = deps;
  }

  /**
   * Replaces every rule. The first rules make the CA, put it in the sandbox's trust store and start the
   * proxy; from then on every command gets `environment()`. Requests in flight keep the values they
   * were sent with; the next ones get the new.
   *
   * @throws RequestError `invalid_argument` for a bad rule, before anything changes; `sandbox_error`
   * when the trust store cannot be written or the proxy cannot listen (nothing started stays)
   */
  configure(rules: readonly z.infer<typeof credentialRuleWire>[]): Promise<CredentialState> {
    const hosts = checkCredentialRules(rules);
    const run = this.#queue.then(async () => {
      if (this.#server === undefined && hosts.size > 0) await this.#start();
      const before = [...this.#hosts.values()].flatMap((host) => host.headers.map((h) => h.value));
      this.#injected.hold([...hosts.values()].flatMap((host) => host.headers.map((h) => h.value)));
      this.#injected.release(before);
      this.#hosts = hosts;
      return this.state();
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Hosts, the proxy's URL and the CA's fingerprint: nothing secret. */
  state(): CredentialState {
    return {
      hosts: [...this.#hosts.keys()].sort(),
      proxy: this.#proxyUrl() ?? null,
      caFingerprint256: this.#ca?.fingerprint256 ?? null,
    };
  }

  /**
   * What every command's environment gets once the proxy runs: the proxy for HTTP and HTTPS (the
   * sandbox's own loopback excepted) and every toolchain's trust variable (`TRUST_ENVIRONMENT`).
   * Empty before the first rules.
   */
  environment(): Readonly<Record<string, string>> {
    const proxy = this.#proxyUrl();
    if (proxy === undefined) return {};
    return {
      ...TRUST_ENVIRONMENT,
      HTTPS_PROXY: proxy,
      https_proxy: proxy,
      HTTP_PROXY: proxy,
      http_proxy: proxy,
      NO_PROXY,
      no_proxy: NO_PROXY,
      // Node 24's own fetch and http honour the variables above only when asked.
      NODE_USE_ENV_PROXY: '1',
    };
  }

  /** The port the proxy listens on (on the sandbox's loopback), once it does. */
  get port(): number | undefined {
    return this.#port();
  }

  /** Stops the proxy and ends every connection. */
  close(): void {
    const port = this.#port();
    this.#server?.close();
    if (port !== undefined) this.#deps.loopback?.close(port);
    for (const socket of this.#sockets) socket.destroy();
    void this.#dispatcher?.destroy().catch(() => undefined);
  }

  #port(): number | undefined {
    const address = this.#server?.address();
    return typeof address === 'object' && address !== null ? address.port : undefined;
  }

  #proxyUrl(): string | undefined {
    const port = this.#port();
    return port === undefined ? undefined : `http://127.0.0.1:${String(port)}`;
  }

  async #start(): Promise<void> {
    const ca = CertificateAuthority.create(this.#deps.label);
    try {
      await this.#deps.installCa(ca.certificatePem);
    } catch (error) {
      throw new RequestError('sandbox_error', error instanceof Error ? error.message : 'trust store');
    }
    const dispatcher = createUpstreamDispatcher({
      connectTimeoutMs: this.#deps.connectTimeoutMs ?? LIMITS.upstreamConnectTimeoutMs,
      headersTimeoutMs: this.#deps.headersTimeoutMs ?? LIMITS.upstreamHeadersTimeoutMs,
      metadataAddresses: this.#deps.own,
      lookup: this.#deps.names.lookupFunction(this.#deps.policy),
      ...(this.#deps.upstreamCa === undefined ? {} : { ca: this.#deps.upstreamCa }),
    });
    const exchanges = new BrokeredExchanges({
      ca,
      dispatcher,
      injected: this.#injected,
      hosts: () => this.#hosts,
      passed: (passage) => this.#deps.events.passed(passage),
    });
    this.#dispatcher = dispatcher;
    this.#exchanges = exchanges;
    try {
      this.#server = await this.#listen();
    } catch (error) {
      this.#dispatcher = undefined;
      this.#exchanges = undefined;
      void dispatcher.destroy().catch(() => undefined);
      throw error;
    }
    this.#ca = ca;
  }

  /** Binds the proxy on the sandbox's loopback: `BROKER_PORT`, or any port when sandbox code holds it. */
  async #listen(): Promise<Server> {
    const { loopback } = this.#deps;
    for (let attempt = 1; ; attempt++) {
      const server = this.#proxyServer();
      const wanted = attempt === 1 ? BROKER_PORT : 0;
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(wanted, loopback?.address ?? '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
          });
        });
        const address = server.address();
        const port = typeof address === 'object' && address !== null ? address.port : 0;
        await loopback?.open(port);
        return server;
      } catch (error) {
        server.close();
        if (attempt === LISTEN_ATTEMPTS) {
          throw new RequestError(
            'sandbox_error',
            'the egress proxy could not listen on the sandbox loopback',
          );
        }
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      }
    }
  }

  #proxyServer(): Server {
    const server = createServer({
      headersTimeout: CONNECTION_LIMITS.requestHeadTimeoutMs,
      requestTimeout: 0, // uploads and streams of any length
      keepAliveTimeout: 5_000,
      connectionsCheckingInterval: CONNECTION_LIMITS.checkIntervalMs,
    });
    server.on('connection', (socket: Socket) => this.#admit(socket));
    // Node hands a `Socket` to both, whatever its types say.
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (socket instanceof Socket) void this.#connect(req, socket, head).catch(() => socket.destroy());
      else socket.destroy();
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      void this.#plain(req, res).catch(() => res.socket?.destroy());
    });
    // A WebSocket over plain HTTP through a proxy goes by CONNECT; an absolute-form upgrade is refused.
    server.on('upgrade', (_req: IncomingMessage, socket: Duplex) => {
      if (socket instanceof Socket) answer(socket, 405, 'upgrade through CONNECT');
      else socket.destroy();
    });
    server.on('clientError', (_error, socket) => socket.destroy());
    return server;
  }

  /** Counts a client connection against the host's cap, or closes it at once. */
  #admit(socket: Socket): void {
    if (!this.#connections.take()) {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#connections.release();
      this.#sockets.delete(socket);
    });
    socket.on('error', () => undefined);
  }

  /** The policy's verdict on a target, or the rule that refuses it. */
  #decide(target: ProxyTarget & { kind: 'name' | 'address' }): EgressDecision {
    if (target.kind === 'address') {
      const kind = classifyAddress(target.host, this.#deps.own);
      if (kind !== 'allowed') return { allowed: false, rule: kind };
      return decideAddress(this.#deps.policy(), target.host);
    }
    return decideName(this.#deps.policy(), target.host);
  }

  #refuse(socket: Socket, target: { host: string; port?: number }, rule: string): void {
    this.#deps.events.refused({
      via: 'proxy',
      name: target.host,
      rule,
      ...(target.port === undefined ? {} : { port: target.port }),
    });
    answer(socket, 403, `egress refused: ${target.host === '' ? 'no host' : target.host} (${rule})`);
  }

  async #connect(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    const target = connectTarget(req.url ?? '');
    if (target.kind === 'invalid') {
      this.#refuse(socket, { host: '' }, target.reason);
      return;
    }
    const decision = this.#decide(target);
    if (!decision.allowed) {
      this.#refuse(socket, target, decision.rule);
      return;
    }
    const brokered = target.kind === 'name' ? this.#hosts.get(target.host) : undefined;
    if (brokered !== undefined) {
      socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
      this.#exchanges?.terminate(socket, head, brokered, target.port, decision.rule);
      return;
    }
    const address = await this.#address(target);
    if ('refused' in address) {
      this.#refuse(socket, target, address.refused);
      return;
    }
    socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
    if (target.kind === 'address') {
      this.#tunnel(socket, head, target, address.address, decision.rule);
      return;
    }
    // A name's tunnel carries TLS for that name only: its ClientHello is read before any byte goes on.
    socket.setTimeout(HELLO_TIMEOUT_MS, () => socket.destroy());
    let first = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      first = Buffer.concat([first, chunk]);
      const hello = readClientHello(first);
      if (hello.state === 'more') return;
      socket.off('data', onData);
      socket.pause();
      socket.setTimeout(0);
      const named = hello.state === 'done' ? hello.serverName : undefined;
      if (named?.toLowerCase().replace(/\.$/, '') !== target.host) {
        const rule =
          hello.state === 'invalid'
            ? 'not a TLS client hello'
            : named === undefined
              ? 'no server name'
              : 'server name differs from CONNECT';
        this.#deps.events.refused({ via: 'proxy', name: target.host, rule, port: target.port });
        socket.end(tlsAlert(TLS_ALERT.ACCESS_DENIED));
        return;
      }
      this.#tunnel(socket, first, target, address.address, decision.rule);
    };
    socket.on('data', onData);
    if (head.length > 0) onData(head);
  }

  /** The upstream address of a target: an address itself, a name's first usable address. */
  async #address(
    target: ProxyTarget & { kind: 'name' | 'address' },
  ): Promise<{ readonly address: string } | { readonly refused: string }> {
    if (target.kind === 'address') return { address: target.host };
    const found = await this.#deps.names.lookup(target.host, this.#deps.policy());
    const address = found.addresses[0]?.address;
    return address === undefined
      ? { refused: found.dropped ?? `no address (${found.failure ?? 'none'})` }
      : { address };
  }

  #tunnel(
    socket: Socket,
    first: Buffer,
    target: { readonly host: string; readonly port: number },
    address: string,
    rule: string,
  ): void {
    spliceTo(socket, { address, port: target.port }, first, this.#sockets, (end) => {
      if (!end.connected) return;
      this.#deps.events.passed({
        via: 'proxy',
        name: target.host,
        rule,
        address,
        port: target.port,
        bytes: end.bytes,
      });
    });
  }

  /** An absolute-form `http://` request: forwarded without credentials, under the policy. */
  async #plain(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const socket = req.socket;
    if (!plainFraming(req)) {
      answer(socket, 400, 'a body coded otherwise than chunked');
      return;
    }
    const parsed = absoluteTarget(req.url ?? '');
    const { target } = parsed;
    if (target.kind === 'invalid' || !('path' in parsed)) {
      this.#refuse(socket, { host: '' }, target.kind === 'invalid' ? target.reason : 'no target');
      return;
    }
    const decision = this.#decide(target);
    if (!decision.allowed) {
      this.#refuse(socket, target, decision.rule);
      return;
    }
    const address = await this.#address(target);
    if ('refused' in address) {
      this.#refuse(socket, target, address.refused);
      return;
    }
    const dispatcher = this.#dispatcher;
    if (dispatcher === undefined) return;
    const start = socket.bytesRead + socket.bytesWritten;
    res.once('close', () => {
      const bytes = socket.bytesRead + socket.bytesWritten - start;
      this.#deps.events.passed({
        via: 'proxy',
        name: target.host,
        rule: decision.rule,
        address: address.address,
        port: target.port,
        bytes,
      });
    });
    forward({ req, res, socket }, plainRoute(target), parsed.path, {
      dispatcher,
      injected: this.#injected,
    });
  }
}

const REASONS = { 400: 'Bad Request', 403: 'Forbidden', 405: 'Method Not Allowed' } as const;

/** A short plain-text answer, then the connection's end. */
function answer(socket: Socket, status: keyof typeof REASONS, text: string): void {
  const body = `${text}\n`;
  const reason = REASONS[status];
  socket.end(
    `HTTP/1.1 ${String(status)} ${reason}\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: ${String(Buffer.byteLength(body))}\r\n\r\n${body}`,
  );
}
