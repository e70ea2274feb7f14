/**
 * The name checks (issue 27): the HTTP (port 80) and TLS (port 443) connections of sandbox code that the
 * tables send here when the policy names domains. Each is decided on the name it really carries: the
 * TLS ClientHello's server name, the HTTP request's Host (and its target, which must agree). An allowed
 * one is connected to that name's own usable addresses (`upstream-names.ts`) on the port sandbox code
 * dialled and spliced both ways, its first bytes replayed (an HTTP request's with `Connection: close`, so
 * each request is checked), nothing read or changed after them; a refused
 * one gets a TLS alert or an HTTP 403 and is recorded. sandboxd never terminates TLS here.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { decideName, type EgressPolicy } from '../../rules/egress-policy.js';
import { readClientHello, tlsAlert, TLS_ALERT } from './client-hello.js';
import type { EgressPassage, EgressRefusal } from './egress-refusal.js';
import { readRequestHead } from './request-head.js';
import { spliceTo } from './splice.js';
import type { UpstreamNames } from './upstream-names.js';

/** How long a connection may take to say its name before it is closed. */
const NAME_TIMEOUT_MS = 10_000;

/**
 * Most connections the name checks hold at once, both ports and both directions' sockets counted per
 * client connection: sandbox code can open connections without end, and each is sandboxd's memory (as
 * the gateway's caps, `gateway/connection-limits.ts`). One past it is closed as soon as it is accepted.
 */
export const MAX_NAME_CHECK_CONNECTIONS = 256;

/** What a connection's first bytes said. */
type NameRead =
  | { readonly state: 'more' }
  | { readonly state: 'named'; readonly name: string }
  | { readonly state: 'refused'; readonly rule: string };

/** One of the two listeners: how it reads a name, and how it refuses. */
interface Protocol {
  readonly via: 'tls' | 'http';
  readonly port: number;
  read(bytes: Buffer): NameRead;
  /** The first bytes as sent upstream. */
  forward(first: Buffer): Buffer;
  refuse(socket: Socket, name: string, rule: string): void;
}

const TLS: Protocol = {
  via: 'tls',
  port: 443,
  read(bytes) {
    const hello = readClientHello(bytes);
    if (hello.state === 'more') return hello;
    if (hello.state === 'invalid') return { state: 'refused', rule: 'not a TLS client hello' };
    return hello.serverName === undefined
      ? { state: 'refused', rule: 'no server name' }
      : { state: 'named', name: hello.serverName };
  },
  forward: (first) => first,
  refuse(socket) {
    socket.end(tlsAlert(TLS_ALERT.ACCESS_DENIED));
  },
};

/**
 * The first request's head with `Connection: close` (an upgrade's left as it is): a connection carries
 * one request, so a second one on it cannot name another host than the one checked.
 */
function closingAfterFirst(first: Buffer): Buffer {
  const end = first.indexOf('\r\n\r\n');
  const lines = first.subarray(0, end).toString('latin1').split('\r\n');
  if (lines.some((line) => /^upgrade\s*:/i.test(line))) return first;
  const kept = lines.filter((line) => !/^(connection|keep-alive|proxy-connection)\s*:/i.test(line));
  return Buffer.concat([
    Buffer.from([...kept, 'Connection: close'].join('\r\n'), 'latin1'),
    first.subarray(end),
  ]);
}

const HTTP: Protocol = {
  via: 'http',
  port: 80,
  read(bytes) {
    const head = readRequestHead(bytes);
    if (head.state === 'more') return head;
    if (head.state === 'invalid') return { state: 'refused', rule: head.reason };
    return { state: 'named', name: head.host };
  },
  forward: closingAfterFirst,
  refuse(socket, name, rule) {
    const body = `egress refused: ${name === '' ? 'no host' : name} (${rule})\n`;
    socket.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: ${String(Buffer.byteLength(body))}\r\n\r\n${body}`,
    );
  },
};

/** Where the name checks report. */
export interface NameCheckEvents {
  refused(refusal: EgressRefusal): void;
  passed(passage: EgressPassage): void;
}

/** The HTTP and TLS name checks of one sandboxd. */
export class NameChecks {
  readonly #names: UpstreamNames;
  readonly #policy: () => EgressPolicy;
  readonly #events: NameCheckEvents;
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  /** Client connections open now. */
  #clients = 0;

  constructor(names: UpstreamNames, policy: () => EgressPolicy, events: NameCheckEvents) {
    this.#names = names;
    this.#policy = policy;
    this.#events = events;
  }

  /** Listens for TLS on `ports.tls` and HTTP on `ports.http`, every address. */
  async listen(ports: { readonly tls: number; readonly http: number }): Promise<void> {
    await Promise.all([this.#listen(TLS, ports.tls), this.#listen(HTTP, ports.http)]);
  }

  /** Stops listening and ends every connection. */
  close(): void {
    for (const server of this.#servers) server.close();
    for (const socket of this.#sockets) socket.destroy();
  }

  async #listen(protocol: Protocol, port: number): Promise<void> {
    const server = createServer({ pauseOnConnect: false }, (socket) => this.#accept(protocol, socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, () => resolve());
    });
    this.#servers.push(server);
  }

  #accept(protocol: Protocol, socket: Socket): void {
    if (this.#clients >= MAX_NAME_CHECK_CONNECTIONS) {
      socket.destroy();
      return;
    }
    this.#clients += 1;
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#clients -= 1;
      this.#sockets.delete(socket);
    });
    socket.on('error', () => undefined);
    socket.setTimeout(NAME_TIMEOUT_MS, () => socket.destroy());
    let first = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      first = Buffer.concat([first, chunk]);
      const read = protocol.read(first);
      if (read.state === 'more') return;
      socket.off('data', onData);
      socket.pause();
      socket.setTimeout(0);
      // The address sandbox code dialled is not known here (the table redirected it): only its port.
      if (read.state === 'refused') {
        this.#events.refused({ via: protocol.via, name: '', rule: read.rule, port: protocol.port });
        protocol.refuse(socket, '', read.rule);
        return;
      }
      void this.#pass(protocol, socket, read.name, first).catch(() => socket.destroy());
    };
    socket.on('data', onData);
  }

  async #pass(protocol: Protocol, socket: Socket, name: string, first: Buffer): Promise<void> {
    const policy = this.#policy();
    const decision = decideName(policy, name);
    const refuse = (rule: string): void => {
      this.#events.refused({ via: protocol.via, name, rule, port: protocol.port });
      protocol.refuse(socket, name, rule);
    };
    if (!decision.allowed) {
      refuse(decision.rule);
      return;
    }
    const found = await this.#names.lookup(name, policy);
    const target = found.addresses[0]?.address;
    if (target === undefined) {
      refuse(found.dropped ?? `no address (${found.failure ?? 'none'})`);
      return;
    }
    spliceTo(
      socket,
      { address: target, port: protocol.port },
      protocol.forward(first),
      this.#sockets,
      (end) => {
        if (!end.connected) return;
        const { via, port } = protocol;
        this.#events.passed({ via, name, rule: decision.rule, address: target, port, bytes: end.bytes });
      },
    );
  }
}
