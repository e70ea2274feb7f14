/**
 * The control plane's connections to sandbox code's ports (issue 28): an undici `Agent` whose every
 * connection is a `CONNECT 127.0.0.1:<port>` tunnel through the sandbox's sandboxd
 * (`daemon/port-tunnel.ts`), authenticated with the control plane's credential for that sandbox. Its
 * origins are `http://<sandboxId>:<port>`, so undici keeps a pool per sandbox and port and reuses
 * tunnels for keep-alive; what a sandbox's origin means is asked of `resolve` at each new connection,
 * so a sandbox that ended is never dialled.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { Agent, type buildConnector } from 'undici';
import { SandboxError, type SandboxErrorCode } from '../rules/errors.js';
import type { DaemonTarget } from './daemon-agent.js';

/** Longest answer head sandboxd sends to a CONNECT. */
const MAX_HEAD = 4096;
/** Time to open a tunnel (connect and sandboxd's answer). */
const TUNNEL_TIMEOUT_MS = 10_000;

/** The origin of one sandbox's port, as the agent's pools know it. */
export function tunnelOrigin(sandboxId: string, port: number): string {
  return `http://${sandboxId}:${String(port)}`;
}

/** sandboxd's refusals of a tunnel, as the caller reads them. */
const REFUSALS = {
  port_closed: 'nothing in the sandbox listens on that port',
  port_forbidden: "that port is the sandbox daemon's own; it is never forwarded",
  unimplemented: "this sandbox's isolation has no preview URLs yet",
} as const;

/** A refused tunnel: sandboxd's code (`x-sdk-error`) as the SDK's error. */
function refusal(head: string): SandboxError {
  const code = /\r\nx-sdk-error: ([a-z_]+)\r\n/i.exec(head)?.[1] ?? 'sandbox_error';
  const message = (REFUSALS as Record<string, string | undefined>)[code];
  return message === undefined
    ? new SandboxError('the sandbox refused the tunnel')
    : new SandboxError(message, { code: code as SandboxErrorCode });
}

/** Opens one tunnel to `port` through the sandboxd at `target`. */
export function openTunnel(
  target: DaemonTarget,
  port: number,
  done: (error: Error | null, socket?: Socket) => void,
): void {
  const daemon = new URL(target.url);
  const socket = connectTcp({ host: daemon.hostname, port: Number(daemon.port) });
  let head = '';
  const fail = (error: Error): void => {
    socket.destroy();
    finish(error);
  };
  let finished = false;
  const finish = (error: Error | null): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    socket.off('data', onData);
    done(error, error === null ? socket : undefined);
  };
  const timer = setTimeout(
    () => fail(new SandboxError('the sandbox did not open the tunnel in time')),
    TUNNEL_TIMEOUT_MS,
  );
  const onData = (chunk: Buffer): void => {
    head += chunk.toString('latin1');
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_HEAD) fail(new SandboxError('the sandbox answered the tunnel with garbage'));
      return;
    }
    if (!head.startsWith('HTTP/1.1 200')) {
      fail(refusal(head.slice(0, end + 2)));
      return;
    }
    // Bytes after the head are the port's own: a server that speaks first (none does before a request).
    // Paused, so nothing flows before undici reads the socket.
    socket.pause();
    const rest = Buffer.from(head.slice(end + 4), 'latin1');
    if (rest.length > 0) socket.unshift(rest);
    finish(null);
  };
  socket.setNoDelay(true);
  socket.once('connect', () => {
    socket.write(
      `CONNECT 127.0.0.1:${String(port)} HTTP/1.1\r\nhost: 127.0.0.1:${String(port)}\r\nauthorization: Bearer ${target.token}\r\n\r\n`,
    );
  });
  socket.on('data', onData);
  socket.once('error', (error) => fail(error));
  socket.once('close', () => fail(new SandboxError('the sandbox closed the tunnel before it opened')));
}

/**
 * An agent over tunnels.
 *
 * @param resolve - the sandboxd of a sandbox id, or a SandboxError (unknown, ended, suspended)
 */
export function tunnelAgent(resolve: (sandboxId: string) => DaemonTarget): Agent {
  const connect: buildConnector.connector = (options, callback) => {
    let target: DaemonTarget;
    try {
      target = resolve(options.hostname);
    } catch (error) {
      callback(error as Error, null);
      return;
    }
    openTunnel(target, Number(options.port), (error, socket) => {
      if (error !== null || socket === undefined) callback(error ?? new Error('no tunnel'), null);
      else callback(null, socket);
    });
  };
  return new Agent({ connect, keepAliveTimeout: 4_000, keepAliveMaxTimeout: 30_000 });
}
