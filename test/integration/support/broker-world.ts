/**
 * The world of the credential broker's tests and benchmark (issue 27): one HTTPS server of the test's,
 * reached from sandboxes at a test namespace's address on port 443 with a test CA of its own, a real
 * DNS server (dnsmasq) there answering every test name with that address (and two names with forbidden
 * ones), and behind the one server:
 *
 * - the token-protected git, npm and PyPI-style servers (`private-registries.ts`);
 * - `api.private.test`: `/whoami` answers `authorized` when the request carried `API_AUTHORIZATION`
 *   (else 401 `anonymous`), `/echo` echoes the request's headers as JSON (what SPEC says of an endpoint
 *   that echoes: it reveals the credential), `/events` streams server-sent events the test sends one
 *   at a time with `sendEvent` (authorized requests only), `/socket` is a WebSocket echo (authorized
 *   upgrades only), `/bytes?n=N` answers N bytes, `/ticks?n=N&ms=M` streams N events M ms apart, each
 *   holding the time it was sent (ms since the epoch, fractional), `POST /upload` counts the bytes it received;
 * - every other name answers `host=<Host>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateRegistries, type PrivateRegistries } from './private-registries.js';
import { makeTestPki, type TestPki } from './test-ca.js';
import { createTestNetwork, forwardFromNamespace, type TestNetwork } from './test-network.js';

/** The API host with a credential of its own. */
export const API_HOST = 'api.private.test';
/** Names that resolve to forbidden addresses: a rebinding attempt each. */
export const REBIND_HOSTS = { metadata: 'rebind.private.test', loopback: 'loop.private.test' } as const;

/** A running world. */
export interface BrokerWorld {
  readonly network: TestNetwork;
  readonly pki: TestPki;
  readonly registries: PrivateRegistries;
  /** The Authorization value `api.private.test` requires. */
  readonly apiAuthorization: string;
  /** Accepts a second value as well (a rotation in progress), or only the first again (undefined). */
  acceptAlso(value: string | undefined): void;
  /** Sends one server-sent event (`data: <text>`) to every open `/events` stream. */
  sendEvent(text: string): void;
  /** Resolves when `count` `/events` streams are open. */
  eventStreams(count: number): Promise<void>;
  /** Header names (lower case) and values of the last request `api.private.test` received. */
  lastApiHeaders(): Readonly<Record<string, string | string[] | undefined>>;
  stop(): void;
}

/** A WebSocket frame's payload sent back unmasked (a text echo; frames under 64 KiB). */
function echoFrames(socket: Socket): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2) {
      const opcode = (buffered[0] ?? 0) & 0x0f;
      let length = (buffered[1] ?? 0) & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      }
      if (buffered.length < offset + 4 + length) return;
      const mask = buffered.subarray(offset, offset + 4);
      const payload = Buffer.from(buffered.subarray(offset + 4, offset + 4 + length));
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
      buffered = buffered.subarray(offset + 4 + length);
      if (opcode === 0x8) {
        socket.end(Buffer.from([0x88, 0x00]));
        return;
      }
      const head =
        payload.length < 126
          ? Buffer.from([0x80 | opcode, payload.length])
          : Buffer.from([0x80 | opcode, 126, payload.length >> 8, payload.length & 0xff]);
      socket.write(Buffer.concat([head, payload]));
    }
  });
}

/** Starts the world; `slot` separates test namespaces of one process. */
export async function startBrokerWorld(slot = 0): Promise<BrokerWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'sdk-broker-'));
  const network = createTestNetwork(slot);
  const children: ChildProcess[] = [];
  let server: Server | undefined;
  try {
    const registries = startPrivateRegistries(dir);
    const names = [...Object.values(registries.hosts), API_HOST, 'open.test', 'other.test', 'denied.test'];
    const pki = makeTestPki(dir, 'broker', [network.nsAddress], names);
    const apiAuthorization = `Bearer ${randomBytes(24).toString('hex')}`;
    let alsoAccepted: string | undefined;
    let lastHeaders: IncomingMessage['headers'] = {};
    const streams = new Set<ServerResponse>();
    let streamWaiters: (() => void)[] = [];
    const authorized = (req: IncomingMessage): boolean =>
      req.headers.authorization === apiAuthorization ||
      (alsoAccepted !== undefined && req.headers.authorization === alsoAccepted);

    const api = (req: IncomingMessage, res: ServerResponse): void => {
      lastHeaders = req.headers;
      const url = new URL(req.url ?? '/', 'https://api');
      if (url.pathname === '/echo') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(req.headers));
        return;
      }
      if (!authorized(req)) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('anonymous\n');
        return;
      }
      if (url.pathname === '/whoami') {
        // The value echoed in a response header is redacted by the broker before sandbox code sees it.
        res.writeHead(200, {
          'content-type': 'text/plain',
          'x-seen-authorization': req.headers.authorization,
        });
        res.end('authorized\n');
      } else if (url.pathname === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write(': open\n\n');
        streams.add(res);
        res.once('close', () => streams.delete(res));
        const waiters = streamWaiters;
        streamWaiters = [];
        for (const wake of waiters) wake();
      } else if (url.pathname === '/bytes') {
        const n = Number(url.searchParams.get('n') ?? '0');
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(n) });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let left = n;
        const pump = (): void => {
          while (left > 0) {
            const piece = chunk.subarray(0, Math.min(chunk.length, left));
            left -= piece.length;
            if (!res.write(piece)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
      } else if (url.pathname === '/ticks') {
        // `n` events `ms` apart, each holding the time it was sent (the benchmark's streams).
        const count = Number(url.searchParams.get('n') ?? '10');
        const every = Number(url.searchParams.get('ms') ?? '100');
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write(': open\n\n');
        let sent = 0;
        const timer = setInterval(() => {
          res.write(`data: ${String(performance.timeOrigin + performance.now())}\n\n`);
          if (++sent === count) {
            clearInterval(timer);
            res.end();
          }
        }, every);
        res.once('close', () => clearInterval(timer));
      } else if (req.method === 'POST' && url.pathname === '/upload') {
        let bytes = 0;
        req.on('data', (chunk: Buffer) => (bytes += chunk.length));
        req.on('end', () => res.end(`received ${String(bytes)}\n`));
      } else {
        res.writeHead(404).end();
      }
    };

    const hosts = new Set(Object.values(registries.hosts));
    server = createServer(
      { cert: readFileSync(pki.certFile), key: readFileSync(pki.keyFile) },
      (req: IncomingMessage, res: ServerResponse) => {
        const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
        if (hosts.has(host)) registries.handler(req, res);
        else if (host === API_HOST) api(req, res);
        else res.end(`host=${req.headers.host ?? ''}\n`);
      },
    );
    server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      lastHeaders = req.headers;
      if (!authorized(req) || req.url !== '/socket') {
        socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      const accept = createHash('sha1')
        .update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest('base64');
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
      );
      echoFrames(socket);
    });
    server.listen(0, network.hostAddress);
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    children.push(await forwardFromNamespace(network, 443, port));
    const ns = network.nsAddress;
    const dnsmasq = spawn(
      'ip',
      [
        ...['netns', 'exec', network.ns, 'dnsmasq', '--no-daemon', '--no-resolv', '--no-hosts'],
        ...[`--listen-address=${ns}`, '--bind-interfaces', '--port=53', '--log-facility=-'],
        ...[
          `--address=/${REBIND_HOSTS.metadata}/169.254.169.254`,
          `--address=/${REBIND_HOSTS.loopback}/127.0.0.1`,
        ],
        ...['--address=/test/' + ns],
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(dnsmasq);
    const started = server;
    return {
      network,
      pki,
      registries,
      apiAuthorization,
      acceptAlso: (value) => (alsoAccepted = value),
      sendEvent: (text) => {
        for (const res of streams) res.write(`data: ${text}\n\n`);
      },
      eventStreams: (count) =>
        new Promise((resolve) => {
          const check = (): void => {
            if (streams.size >= count) resolve();
            else streamWaiters.push(check);
          };
          check();
        }),
      lastApiHeaders: () => lastHeaders,
      stop: () => {
        for (const child of children) child.kill();
        started.closeAllConnections();
        started.close();
        registries.stop();
        network.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const child of children) child.kill();
    server?.close();
    network.destroy();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
