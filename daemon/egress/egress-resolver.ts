/**
 * The sandbox's DNS (issue 27): every question sandbox code asks, to any server, the tables send here
 * (UDP and TCP port 53). A name the policy allows is answered with its usable IPv4 addresses
 * (`upstream-names.ts`); any other, and one whose every address is forbidden, is NXDOMAIN, and recorded.
 * AAAA and other types of an allowed name are answered empty (no sandbox has an IPv6 route), so clients
 * go on to A at once.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { decideName, type EgressPolicy } from '../../rules/egress-policy.js';
import { buildAnswer, DNS_TYPE, parseQuery, RCODE, type DnsQuery } from './dns-message.js';
import type { UpstreamNames } from './upstream-names.js';
import type { EgressRefusal } from './egress-refusal.js';

/** Largest DNS-over-TCP message sandboxd reads (a question is small). */
const MAX_TCP_MESSAGE = 4096;

/**
 * Most questions answered at once (each may wait on the upstream) and most DNS-over-TCP connections
 * held: sandbox code can ask without end, and each is sandboxd's memory. A question past the first cap
 * is dropped (the client asks again), a connection past the second closed as it is accepted.
 */
export const MAX_PENDING_QUESTIONS = 128;
export const MAX_DNS_CONNECTIONS = 32;

/** Answers questions under the current policy. */
export class EgressResolver {
  readonly #names: UpstreamNames;
  readonly #policy: () => EgressPolicy;
  readonly #refused: (refusal: EgressRefusal) => void;
  #udp: Socket | undefined;
  #tcp: Server | undefined;
  #pending = 0;
  #connections = 0;

  constructor(names: UpstreamNames, policy: () => EgressPolicy, refused: (refusal: EgressRefusal) => void) {
    this.#names = names;
    this.#policy = policy;
    this.#refused = refused;
  }

  /**
   * The answer to one question (a DNS message), or undefined for what is not a question and for one
   * past `MAX_PENDING_QUESTIONS`.
   */
  async answer(message: Buffer): Promise<Buffer | undefined> {
    if (this.#pending >= MAX_PENDING_QUESTIONS) return undefined;
    this.#pending += 1;
    try {
      return await this.#answer(message);
    } finally {
      this.#pending -= 1;
    }
  }

  async #answer(message: Buffer): Promise<Buffer | undefined> {
    const query = parseQuery(message);
    if (query === undefined) return undefined;
    const policy = this.#policy();
    const decision = decideName(policy, query.name);
    if (!decision.allowed) return this.#refuse(query, decision.rule);
    if (query.type !== DNS_TYPE.A) return buildAnswer(query, RCODE.NOERROR, []);
    const found = await this.#names.lookup(query.name, policy);
    if (found.dropped !== undefined) return this.#refuse(query, found.dropped);
    if (found.failure !== undefined) {
      const rcode =
        found.failure === 'ENOTFOUND' || found.failure === 'ENODATA' ? RCODE.NXDOMAIN : RCODE.SERVFAIL;
      return buildAnswer(query, rcode, []);
    }
    const records = found.addresses.map(({ address, ttl }) => ({ type: 'A' as const, address, ttl }));
    return buildAnswer(query, RCODE.NOERROR, records);
  }

  #refuse(query: DnsQuery, rule: string): Buffer {
    this.#refused({ via: 'dns', name: query.name, rule });
    return buildAnswer(query, RCODE.NXDOMAIN, []);
  }

  /** Listens on UDP and TCP `port` of every address. */
  async listen(port: number): Promise<void> {
    const udp = createSocket('udp4');
    udp.on('message', (message, from) => {
      void this.answer(message).then(
        (reply) => reply !== undefined && udp.send(reply, from.port, from.address),
        () => undefined,
      );
    });
    udp.on('error', () => undefined); // a send to a client gone is nothing to stop for
    const tcp = createServer((socket) => {
      if (this.#connections >= MAX_DNS_CONNECTIONS) return void socket.destroy();
      this.#connections += 1;
      socket.once('close', () => (this.#connections -= 1));
      let pending = Buffer.alloc(0);
      socket.setTimeout(10_000, () => socket.destroy());
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        if (pending.length > MAX_TCP_MESSAGE + 2) return void socket.destroy();
        if (pending.length < 2 || pending.length < 2 + pending.readUInt16BE(0)) return;
        const message = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + message.length);
        void this.answer(message).then(
          (reply) => {
            if (reply === undefined) return void socket.destroy();
            const length = Buffer.alloc(2);
            length.writeUInt16BE(reply.length);
            socket.write(Buffer.concat([length, reply]));
          },
          () => socket.destroy(),
        );
      });
    });
    await Promise.all([
      new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, () => resolve());
      }),
      new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, () => resolve());
      }),
    ]);
    this.#udp = udp;
    this.#tcp = tcp;
  }

  /** Stops answering. */
  close(): void {
    this.#udp?.close();
    this.#tcp?.close();
  }
}
