/**
 * Preview URLs' way in (issue 28): `CONNECT 127.0.0.1:<port>` on sandboxd's API, with the control
 * plane's credential only, opens a byte tunnel to that port of the sandbox's loopback, over which the
 * control plane speaks HTTP (or a WebSocket) to sandbox code's server. sandboxd's own ports (its API, a
 * gateway route, the egress filter's and the broker's listeners) are refused: a preview reaches sandbox
 * code, never sandboxd. Each tunnel is recorded as `preview` traffic (when it opens, then at most once a
 * second while bytes move), which the idle policy counts.
 */
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { DaemonRecord } from '../protocol/daemon-events.js';
import type { ErrorCode } from '../rules/error-codes.js';
import type { TokenCheck } from './token.js';

/** What a tunnel needs from sandboxd. */
export interface PortTunnelDeps {
  /** The control plane's credential (absent: no tunnel is ever opened). */
  readonly controlToken: TokenCheck | undefined;
  /** Every port sandboxd listens on where sandbox code's loopback reaches it, read at each tunnel. */
  readonly ownPorts: () => ReadonlySet<number>;
  /**
   * Connects to the sandbox's `127.0.0.1:port`: sandboxd's own loopback beside a namespace sandbox
   * (`dialOwnLoopback`), a gVisor box's through its relay. Rejects when nothing listens there.
   */
  readonly dial: (port: number) => Promise<Socket>;
  readonly record: (record: DaemonRecord) => void;
}

/** How often, at most, a tunnel's traffic is recorded while bytes move. */
const TRAFFIC_RECORD_MS = 1_000;

const TARGET = /^127\.0\.0\.1:([1-9][0-9]{0,4})$/;

const STATUS: Partial<Record<ErrorCode | 'bad_request', string>> = {
  bad_request: '400 Bad Request',
  unauthenticated: '401 Unauthorized',
  port_forbidden: '403 Forbidden',
  port_closed: '502 Bad Gateway',
};

/** Answers a refused CONNECT with its status and code (`x-sdk-error`), then closes. */
function refuse(socket: Duplex, code: keyof typeof STATUS): void {
  socket.end(
    `HTTP/1.1 ${STATUS[code] ?? '400 Bad Request'}\r\nx-sdk-error: ${code}\r\nconnection: close\r\n\r\n`,
  );
}

/** Connects to `127.0.0.1:port` of sandboxd's own network namespace (a namespace sandbox's). */
export function dialOwnLoopback(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Handles a `CONNECT` sandboxd's server received (its `connect` event).
 *
 * @param head - bytes the client sent after the request head, for the tunnel
 */
export function openPortTunnel(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  deps: PortTunnelDeps,
): void {
  socket.on('error', () => socket.destroy());
  const port = Number(TARGET.exec(req.url ?? '')?.[1] ?? 0);
  const refused =
    deps.controlToken?.admits(req) !== true
      ? 'unauthenticated'
      : port < 1 || port > 65_535
        ? 'bad_request'
        : deps.ownPorts().has(port)
          ? 'port_forbidden'
          : undefined;
  if (refused !== undefined) {
    refuse(socket, refused);
    return;
  }
  deps.dial(port).then(
    (upstream) => splice(socket, upstream, head, port, deps),
    () => refuse(socket, 'port_closed'),
  );
}

/** Carries bytes both ways between the control plane's socket and the port, recording the traffic. */
function splice(socket: Duplex, upstream: Socket, head: Buffer, port: number, deps: PortTunnelDeps): void {
  if (socket.destroyed) {
    upstream.destroy();
    return;
  }
  let bytes = 0;
  let recorded = 0;
  const record = (): void => {
    if (bytes === recorded && recorded > 0) return;
    deps.record({ at: Date.now(), type: 'preview', port, bytes: bytes - recorded });
    recorded = bytes;
  };
  const ticker = setInterval(record, TRAFFIC_RECORD_MS);
  ticker.unref();
  upstream.setNoDelay(true);
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) upstream.write(head);
  record();
  socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
  upstream.on('data', (chunk: Buffer) => (bytes += chunk.length));
  upstream.on('error', () => upstream.destroy());
  socket.pipe(upstream);
  upstream.pipe(socket);
  socket.once('close', () => upstream.destroy());
  upstream.once('close', () => {
    clearInterval(ticker);
    if (bytes > recorded) record();
    socket.destroy();
  });
}
